#include "kernels/resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace tenfold::kernels {

namespace {

/// Along one axis: output o reads inputs lo and hi (window coordinates) with weight t on hi.
struct Tap {
  int64_t lo, hi;
  float t;
};

std::vector<Tap> axis_taps(int64_t in, int64_t out, Interpolation interpolation) {
  std::vector<Tap> taps(static_cast<size_t>(out));
  const float scale = float(in) / float(out);
  for (int64_t o = 0; o < out; ++o) {
    if (interpolation == Interpolation::nearest) {
      const int64_t index = std::min(int64_t(std::floor((float(o) + 0.5f) * scale)), in - 1);
      taps[size_t(o)] = {index, index, 0.0f};
      continue;
    }
    const float c = (float(o) + 0.5f) * scale - 0.5f, f = std::floor(c);
    taps[size_t(o)] = {std::max(int64_t(f), int64_t(0)), std::min(int64_t(std::ceil(c)), in - 1), c - f};
  }
  return taps;
}

}  // namespace

void resize_images(const float* src, float* dst, const ResizeGeometry& g) {
  const std::vector<Tap> rows = axis_taps(g.window_height, g.out_height, g.interpolation);
  const std::vector<Tap> columns = axis_taps(g.window_width, g.out_width, g.interpolation);
  const int64_t c = g.channels;
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < g.batch; ++b) {
    auto pixel = [&](int64_t y, int64_t x) { return src + ((b * g.in_height + g.top + y) * g.in_width + g.left + x) * c; };
    for (int64_t oy = 0; oy < g.out_height; ++oy) {
      const Tap& r = rows[size_t(oy)];
      for (int64_t ox = 0; ox < g.out_width; ++ox) {
        const Tap& k = columns[size_t(ox)];
        const float *a = pixel(r.lo, k.lo), *bb = pixel(r.lo, k.hi), *cc = pixel(r.hi, k.lo), *d = pixel(r.hi, k.hi);
        float* out = dst + ((b * g.out_height + oy) * g.out_width + ox) * c;
        for (int64_t ch = 0; ch < c; ++ch) {
          const float top = a[ch] + (bb[ch] - a[ch]) * k.t, bottom = cc[ch] + (d[ch] - cc[ch]) * k.t;
          out[ch] = top + (bottom - top) * r.t;
        }
      }
    }
  }
}

void resize_images_backward(const float* diff_dst, float* diff_src, const ResizeGeometry& g) {
  const std::vector<Tap> rows = axis_taps(g.window_height, g.out_height, g.interpolation);
  const std::vector<Tap> columns = axis_taps(g.window_width, g.out_width, g.interpolation);
  const int64_t c = g.channels;
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < g.batch; ++b) {
    float* image = diff_src + b * g.in_height * g.in_width * c;
    std::memset(image, 0, size_t(g.in_height * g.in_width * c) * sizeof(float));
    auto pixel = [&](int64_t y, int64_t x) { return image + ((g.top + y) * g.in_width + g.left + x) * c; };
    for (int64_t oy = 0; oy < g.out_height; ++oy) {
      const Tap& r = rows[size_t(oy)];
      for (int64_t ox = 0; ox < g.out_width; ++ox) {
        const Tap& k = columns[size_t(ox)];
        const float* grad = diff_dst + ((b * g.out_height + oy) * g.out_width + ox) * c;
        float *a = pixel(r.lo, k.lo), *bb = pixel(r.lo, k.hi), *cc = pixel(r.hi, k.lo), *d = pixel(r.hi, k.hi);
        for (int64_t ch = 0; ch < c; ++ch) {
          // out = (1-ty)((1-tx) a + tx b) + ty((1-tx) c + tx d); taps may coincide, so add.
          a[ch] += grad[ch] * (1 - r.t) * (1 - k.t);
          bb[ch] += grad[ch] * (1 - r.t) * k.t;
          cc[ch] += grad[ch] * r.t * (1 - k.t);
          d[ch] += grad[ch] * r.t * k.t;
        }
      }
    }
  }
}

}  // namespace tenfold::kernels
