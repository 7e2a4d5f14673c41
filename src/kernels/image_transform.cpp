#include "kernels/image_transform.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"

namespace tenfold::kernels {

namespace {

/// TensorFlow's MapCoordinate: a coordinate outside [0, length - 1] brought back by the fill
/// mode (constant leaves it, so its taps read the fill value).
float map_coordinate(float c, int64_t length, FillMode mode) {
  const float len = float(length);
  switch (mode) {
    case FillMode::constant:
      return c;
    case FillMode::nearest:
      return std::clamp(c, 0.0f, len - 1);
    case FillMode::reflect:
      // Half-sample symmetric: d c b a | a b c d | d c b a.
      if (length <= 1) return 0;
      if (c < 0) {
        const float period = 2 * len;
        c = period * std::trunc(-c / period) + c;
        c = c < -len ? c + period : -c - 1;
      } else if (c > len - 1) {
        const float period = 2 * len;
        c -= period * std::trunc(c / period);
        if (c >= len) c = period - c - 1;
      }
      return std::clamp(c, 0.0f, len - 1);
    case FillMode::wrap:
      // TensorFlow's own (not periodic for shifts beyond length - 1), kept for parity.
      if (length <= 1) return 0;
      if (c < 0) {
        c += len * (std::trunc(-c / (len - 1)) + 1);
      } else if (c > len - 1) {
        c -= len * std::trunc(c / (len - 1));
      }
      return std::clamp(c, 0.0f, len - 1);
  }
  return c;
}

/// Up to four taps (pixel index into the image, weight) an output reads; a tap outside the
/// image reads the fill value (index -1).
struct Taps {
  int64_t index[4];
  float weight[4];
  int count = 0;
};

Taps taps_for(const ProjectiveTransform& t, int64_t x, int64_t y, int64_t height, int64_t width,
              const ImageTransformOptions& options) {
  Taps taps;
  const float fx = float(x), fy = float(y);
  const float k = t[6] * fx + t[7] * fy + 1.0f;
  if (k == 0.0f) {
    taps.index[0] = -1;
    taps.weight[0] = 1;
    taps.count = 1;
    return taps;
  }
  const float xi = map_coordinate((t[0] * fx + t[1] * fy + t[2]) / k, width, options.fill_mode);
  const float yi = map_coordinate((t[3] * fx + t[4] * fy + t[5]) / k, height, options.fill_mode);
  auto add = [&](float row, float column, float weight) {
    const bool inside = row >= 0 && row < float(height) && column >= 0 && column < float(width);
    taps.index[taps.count] = inside ? int64_t(row) * width + int64_t(column) : -1;
    taps.weight[taps.count] = weight;
    ++taps.count;
  };
  if (options.interpolation == Interpolation::nearest) {
    add(std::round(yi), std::round(xi), 1.0f);
    return taps;
  }
  const float x0 = std::floor(xi), y0 = std::floor(yi), x1 = x0 + 1, y1 = y0 + 1;
  add(y0, x0, (y1 - yi) * (x1 - xi));
  add(y0, x1, (y1 - yi) * (xi - x0));
  add(y1, x0, (yi - y0) * (x1 - xi));
  add(y1, x1, (yi - y0) * (xi - x0));
  return taps;
}

}  // namespace

FillMode parse_fill_mode(const std::string& name) {
  if (name == "reflect") return FillMode::reflect;
  if (name == "wrap") return FillMode::wrap;
  if (name == "constant") return FillMode::constant;
  if (name == "nearest") return FillMode::nearest;
  throw Error(ErrorCode::invalid_argument, "fill_mode '" + name + "' is not one of reflect, wrap, constant, nearest");
}

const char* fill_mode_name(FillMode mode) {
  switch (mode) {
    case FillMode::reflect: return "reflect";
    case FillMode::wrap: return "wrap";
    case FillMode::constant: return "constant";
    case FillMode::nearest: return "nearest";
  }
  return "";
}

Interpolation parse_interpolation(const std::string& name) {
  if (name == "bilinear") return Interpolation::bilinear;
  if (name == "nearest") return Interpolation::nearest;
  throw Error(ErrorCode::invalid_argument, "interpolation '" + name + "' is not supported; use bilinear or nearest");
}

const char* interpolation_name(Interpolation interpolation) {
  return interpolation == Interpolation::bilinear ? "bilinear" : "nearest";
}

void transform_images(const float* src, float* dst, int64_t batch, int64_t height, int64_t width, int64_t channels,
                      const ProjectiveTransform* transforms, const ImageTransformOptions& options) {
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < batch; ++b) {
    const float* image = src + b * height * width * channels;
    for (int64_t y = 0; y < height; ++y) {
      for (int64_t x = 0; x < width; ++x) {
        const Taps taps = taps_for(transforms[b], x, y, height, width, options);
        float* out = dst + ((b * height + y) * width + x) * channels;
        for (int64_t c = 0; c < channels; ++c) {
          float value = 0;
          for (int t = 0; t < taps.count; ++t) {
            value += taps.weight[t] * (taps.index[t] < 0 ? options.fill_value : image[taps.index[t] * channels + c]);
          }
          out[c] = value;
        }
      }
    }
  }
}

void transform_images_backward(const float* diff_dst, float* diff_src, int64_t batch, int64_t height, int64_t width,
                               int64_t channels, const ProjectiveTransform* transforms,
                               const ImageTransformOptions& options) {
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < batch; ++b) {
    float* image = diff_src + b * height * width * channels;
    std::memset(image, 0, size_t(height * width * channels) * sizeof(float));
    for (int64_t y = 0; y < height; ++y) {
      for (int64_t x = 0; x < width; ++x) {
        const Taps taps = taps_for(transforms[b], x, y, height, width, options);
        const float* out = diff_dst + ((b * height + y) * width + x) * channels;
        for (int t = 0; t < taps.count; ++t) {
          if (taps.index[t] < 0) continue;  // the fill value is a constant
          for (int64_t c = 0; c < channels; ++c) image[taps.index[t] * channels + c] += taps.weight[t] * out[c];
        }
      }
    }
  }
}

}  // namespace tenfold::kernels
