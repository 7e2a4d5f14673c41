#include "layers/rescaling.h"

#include "layers/reshape.h"

namespace tenfold::layers {

namespace {

class RescalingStep : public LayerStep {
 public:
  RescalingStep(float scale, float offset) : scale_(scale), offset_(offset) {}

  void forward(const Tensor& input, Tensor& output, bool) override {
    const float* x = input.data<float>();
    float* y = output.data<float>();
    for (int64_t i = 0; i < input.num_elements(); ++i) y[i] = x[i] * scale_ + offset_;
  }

  void backward(const Tensor&, const Tensor&, Tensor& grad_output, Tensor* grad_input,
                std::span<Tensor>, bool) override {
    if (!grad_input) return;
    const float* dy = grad_output.data<float>();
    float* dx = grad_input->data<float>();
    for (int64_t i = 0; i < grad_output.num_elements(); ++i) dx[i] = dy[i] * scale_;
  }

 private:
  float scale_, offset_;
};

}  // namespace

Rescaling::Rescaling(double scale, double offset, const std::string& name)
    : Layer("rescaling", name), scale_(scale), offset_(offset) {}

std::unique_ptr<LayerStep> Rescaling::compile(const Shape&, const CompileOptions&) {
  return std::make_unique<RescalingStep>(float(scale_), float(offset_));
}

nlohmann::json Rescaling::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["scale"] = scale_;
  config["offset"] = offset_;
  return config;
}

std::unique_ptr<LayerStep> Identity::compile(const Shape&, const CompileOptions&) { return reshape_step(); }

}  // namespace tenfold::layers
