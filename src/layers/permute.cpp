#include "layers/permute.h"

#include <algorithm>

#include "core/error.h"

namespace tenfold::layers {

namespace {

/// Moves elements between the input's layout and the output's: output element i is input
/// element source_[i] (one index per element of a sample, computed at compile).
class PermuteStep : public LayerStep {
 public:
  PermuteStep(std::vector<int64_t> source, int64_t batch) : source_(std::move(source)), batch_(batch) {}

  void forward(const Tensor& input, Tensor& output, bool) override {
    const float* x = input.data<float>();
    float* y = output.data<float>();
    const int64_t size = int64_t(source_.size());
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < batch_; ++b) {
      for (int64_t i = 0; i < size; ++i) y[b * size + i] = x[b * size + source_[size_t(i)]];
    }
  }

  void backward(const Tensor&, const Tensor&, Tensor& grad_output, Tensor* grad_input, std::span<Tensor>,
                bool) override {
    if (!grad_input) return;
    const float* dy = grad_output.data<float>();
    float* dx = grad_input->data<float>();
    const int64_t size = int64_t(source_.size());
#pragma omp parallel for schedule(static)
    for (int64_t b = 0; b < batch_; ++b) {
      for (int64_t i = 0; i < size; ++i) dx[b * size + source_[size_t(i)]] = dy[b * size + i];
    }
  }

 private:
  std::vector<int64_t> source_;
  int64_t batch_;
};

}  // namespace

Permute::Permute(std::vector<int64_t> dims, const std::string& name) : Layer("permute", name), dims_(std::move(dims)) {
  std::vector<int64_t> sorted = dims_;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    check_argument(sorted[i] == int64_t(i) + 1, "Permute '" + this->name() +
                                                    "': dims must be a permutation of 1.." + std::to_string(sorted.size()) +
                                                    " (axis 0, the batch, stays first)");
  }
}

Shape Permute::compute_output_shape(const Shape& input_shape) const {
  check_argument(input_shape.rank() == int64_t(dims_.size()) + 1,
                 "Permute '" + name() + "' with " + std::to_string(dims_.size()) + " dims expects inputs of rank " +
                     std::to_string(dims_.size() + 1) + " (batch included), got " + input_shape.to_string(true));
  std::vector<int64_t> dims = {input_shape[0]};
  for (int64_t axis : dims_) dims.push_back(input_shape[axis]);
  return Shape(dims);
}

std::unique_ptr<LayerStep> Permute::compile(const Shape& input_shape, const CompileOptions&) {
  const Shape output = compute_output_shape(input_shape);
  const int64_t rank = input_shape.rank() - 1;
  // Strides of the input's axes within a sample.
  std::vector<int64_t> input_strides(size_t(rank), 1);
  for (int64_t a = rank - 2; a >= 0; --a) input_strides[size_t(a)] = input_strides[size_t(a + 1)] * input_shape[a + 2];
  const int64_t size = output.without_batch().num_elements();
  std::vector<int64_t> source(static_cast<size_t>(size));
  for (int64_t i = 0; i < size; ++i) {
    // Output axis k is input axis dims_[k]: the output coordinate along k is a coordinate of it.
    int64_t rest = i, offset = 0;
    for (int64_t k = rank - 1; k >= 0; --k) {
      const int64_t coordinate = rest % output[k + 1];
      rest /= output[k + 1];
      offset += coordinate * input_strides[size_t(dims_[size_t(k)] - 1)];
    }
    source[size_t(i)] = offset;
  }
  return std::make_unique<PermuteStep>(std::move(source), input_shape[0]);
}

nlohmann::json Permute::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["dims"] = dims_;
  return config;
}

}  // namespace tenfold::layers
