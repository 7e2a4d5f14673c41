#pragma once
// TensorFlow's ImageProjectiveTransformV3 as Keras' RandomTranslation, RandomRotation and
// RandomZoom use it, over NHWC float images: per image, 8 parameters map each OUTPUT pixel
// (x = column, y = row, pixel centres at integers) to an input coordinate,
//   k = c0 x + c1 y + 1,  x_in = (a0 x + a1 y + a2) / k,  y_in = (b0 x + b1 y + b2) / k,
// which is remapped by the fill mode and sampled bilinearly or at the nearest pixel. The
// backward pass is the adjoint: each output's gradient goes to the taps it was read from.
#include <array>
#include <cstdint>
#include <string>

namespace tenfold::kernels {

enum class FillMode { reflect, wrap, constant, nearest };
enum class Interpolation { bilinear, nearest };

FillMode parse_fill_mode(const std::string& name);
const char* fill_mode_name(FillMode mode);
Interpolation parse_interpolation(const std::string& name);
const char* interpolation_name(Interpolation interpolation);

using ProjectiveTransform = std::array<float, 8>;  // a0 a1 a2 b0 b1 b2 c0 c1

struct ImageTransformOptions {
  FillMode fill_mode = FillMode::reflect;
  Interpolation interpolation = Interpolation::bilinear;
  float fill_value = 0;
};

/// dst[b] = transform[b] applied to src[b], images [batch, height, width, channels].
void transform_images(const float* src, float* dst, int64_t batch, int64_t height, int64_t width, int64_t channels,
                      const ProjectiveTransform* transforms, const ImageTransformOptions& options);
/// diff_src = the adjoint of transform_images applied to diff_dst (overwritten).
void transform_images_backward(const float* diff_dst, float* diff_src, int64_t batch, int64_t height, int64_t width,
                               int64_t channels, const ProjectiveTransform* transforms,
                               const ImageTransformOptions& options);

}  // namespace tenfold::kernels
