#include "layers/global_pooling.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "core/error.h"
#include "kernels/bfloat16.h"

namespace tenfold::layers {

namespace {

/// Loops over [batch, positions, channels] (positions: the spatial axes), vectorized over
/// channels, in float32 or bfloat16 (summed in float32).
class GlobalPoolingStep : public LayerStep {
 public:
  GlobalPoolingStep(bool max, const Shape& input_shape, DType dtype)
      : max_(max), dtype_(dtype), batch_(input_shape[0]),
        positions_(input_shape.without_batch().num_elements() / input_shape[input_shape.rank() - 1]),
        channels_(input_shape[input_shape.rank() - 1]), pooled_(size_t(channels_)) {}

  DType compute_dtype() const override { return dtype_; }

  void forward(const Tensor& input, Tensor& output, bool) override {
    kernels::with_element_type(dtype_, [&](auto element) {
      using Element = decltype(element);
      for (int64_t n = 0; n < batch_; ++n) {
        const Element* in = static_cast<const Element*>(input.raw_data()) + n * positions_ * channels_;
        Element* out = static_cast<Element*>(output.raw_data()) + n * channels_;
        float* pooled = pooled_.data();
        std::fill(pooled, pooled + channels_, max_ ? -std::numeric_limits<float>::infinity() : 0.0f);
        for (int64_t p = 0; p < positions_; ++p) {
          const Element* row = in + p * channels_;
          if (max_) {
            for (int64_t c = 0; c < channels_; ++c) pooled[c] = std::max(pooled[c], kernels::as_float(row[c]));
          } else {
            for (int64_t c = 0; c < channels_; ++c) pooled[c] += kernels::as_float(row[c]);
          }
        }
        const float scale = max_ ? 1.0f : 1.0f / float(positions_);
        for (int64_t c = 0; c < channels_; ++c) kernels::assign(out[c], pooled[c] * scale);
      }
    });
  }

  void backward(const Tensor& input, const Tensor& output, Tensor& grad_output, Tensor* grad_input,
                std::span<Tensor>, bool) override {
    if (grad_input == nullptr) return;
    kernels::with_element_type(dtype_, [&](auto element) {
      using Element = decltype(element);
      std::vector<uint8_t> taken(static_cast<size_t>(channels_));
      for (int64_t n = 0; n < batch_; ++n) {
        const Element* g = static_cast<const Element*>(grad_output.raw_data()) + n * channels_;
        const Element* in = static_cast<const Element*>(input.raw_data()) + n * positions_ * channels_;
        const Element* out = static_cast<const Element*>(output.raw_data()) + n * channels_;
        Element* dx = static_cast<Element*>(grad_input->raw_data()) + n * positions_ * channels_;
        if (!max_) {
          const float scale = 1.0f / float(positions_);
          for (int64_t p = 0; p < positions_; ++p) {
            for (int64_t c = 0; c < channels_; ++c) kernels::assign(dx[p * channels_ + c], kernels::as_float(g[c]) * scale);
          }
          continue;
        }
        // The gradient goes to the first position holding the maximum, as TensorFlow's
        // reduce_max gradient would split it only on exact ties.
        std::fill(taken.begin(), taken.end(), 0);
        for (int64_t p = 0; p < positions_; ++p) {
          for (int64_t c = 0; c < channels_; ++c) {
            const bool here = !taken[size_t(c)] && kernels::as_float(in[p * channels_ + c]) == kernels::as_float(out[c]);
            dx[p * channels_ + c] = here ? g[c] : Element(0);
            taken[size_t(c)] |= uint8_t(here);
          }
        }
      }
    });
  }

 private:
  bool max_;
  DType dtype_;
  int64_t batch_, positions_, channels_;
  std::vector<float> pooled_;  // one sample's sums or maxima, in float32
};

}  // namespace

GlobalPooling2D::GlobalPooling2D(bool max, bool keepdims, const std::string& name, int64_t spatial_axes)
    : Layer(std::string(max ? "global_max_pooling" : "global_average_pooling") + std::to_string(spatial_axes) + "d", name),
      max_(max), keepdims_(keepdims), spatial_axes_(spatial_axes) {}

std::string GlobalPooling2D::class_name() const {
  return std::string(max_ ? "GlobalMaxPooling" : "GlobalAveragePooling") + std::to_string(spatial_axes_) + "D";
}

Shape GlobalPooling2D::compute_output_shape(const Shape& input_shape) const {
  check_argument(input_shape.rank() == spatial_axes_ + 2,
                 class_name() + " '" + name() + "' needs inputs " +
                     (spatial_axes_ == 2 ? "[batch, height, width, channels]" : "[batch, steps, channels]") + ", got " +
                     input_shape.to_string(true));
  const int64_t channels = input_shape[input_shape.rank() - 1];
  if (!keepdims_) return {input_shape[0], channels};
  return spatial_axes_ == 2 ? Shape{input_shape[0], 1, 1, channels} : Shape{input_shape[0], 1, channels};
}

std::unique_ptr<LayerStep> GlobalPooling2D::compile(const Shape& input_shape, const CompileOptions& options) {
  compute_output_shape(input_shape);
  return std::make_unique<GlobalPoolingStep>(max_, input_shape, options.compute_dtype);
}

nlohmann::json GlobalPooling2D::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["data_format"] = "channels_last";
  config["keepdims"] = keepdims_;
  return config;
}

}  // namespace tenfold::layers
