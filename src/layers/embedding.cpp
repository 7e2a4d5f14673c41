#include "layers/embedding.h"

#include <cmath>
#include <cstring>

#include "core/error.h"

namespace tenfold::layers {

namespace {

class EmbeddingStep : public LayerStep {
 public:
  EmbeddingStep(const std::string& layer, int64_t positions, int64_t input_dim, int64_t output_dim, const Variable& table)
      : layer_(layer), positions_(positions), input_dim_(input_dim), output_dim_(output_dim), table_(table),
        rows_(static_cast<size_t>(positions)) {}

  void forward(const Tensor& input, Tensor& output, bool) override {
    const float* indices = input.data<float>();
    for (int64_t p = 0; p < positions_; ++p) {
      // Keras casts the inputs to int32 (truncating toward zero); TensorFlow refuses an index
      // outside the table (on CPU), and so does Tenfold, by name.
      const float index = std::trunc(indices[p]);
      if (!(index >= 0 && index < float(input_dim_))) {
        throw Error(ErrorCode::invalid_argument, "Embedding '" + layer_ + "': index " + std::to_string(indices[p]) +
                                                     " at position " + std::to_string(p) + " is outside [0, " +
                                                     std::to_string(input_dim_) + ")");
      }
      rows_[size_t(p)] = int64_t(index);
    }
    const float* table = table_.value().data<float>();
    float* y = output.data<float>();
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < positions_; ++p) {
      std::memcpy(y + p * output_dim_, table + rows_[size_t(p)] * output_dim_, size_t(output_dim_) * sizeof(float));
    }
  }

  void backward(const Tensor&, const Tensor&, Tensor& grad_output, Tensor* grad_input, std::span<Tensor> weight_gradients,
                bool) override {
    if (grad_input) grad_input->fill_zero();  // indices have no gradient
    float* table = weight_gradients[0].data<float>();
    std::memset(table, 0, size_t(weight_gradients[0].num_bytes()));
    const float* dy = grad_output.data<float>();
    for (int64_t p = 0; p < positions_; ++p) {
      float* row = table + rows_[size_t(p)] * output_dim_;
      for (int64_t c = 0; c < output_dim_; ++c) row[c] += dy[p * output_dim_ + c];
    }
  }

 private:
  std::string layer_;
  int64_t positions_, input_dim_, output_dim_;
  const Variable& table_;
  std::vector<int64_t> rows_;  // per position, from the last forward
};

}  // namespace

Initializer Embedding::uniform_initializer() {
  return Initializer::from_config({{"class_name", "RandomUniform"}, {"config", {{"minval", -0.05}, {"maxval", 0.05}}}});
}

Embedding::Embedding(int64_t input_dim, int64_t output_dim, Initializer embeddings_initializer, const std::string& name)
    : Layer("embedding", name), input_dim_(input_dim), output_dim_(output_dim), initializer_(std::move(embeddings_initializer)) {
  check_argument(input_dim > 0 && output_dim > 0, "Embedding '" + this->name() + "': input_dim and output_dim must be positive");
}

Shape Embedding::compute_output_shape(const Shape& input_shape) const {
  std::vector<int64_t> dims;
  for (int64_t a = 0; a < input_shape.rank(); ++a) dims.push_back(input_shape[a]);
  dims.push_back(output_dim_);
  return Shape(dims);
}

void Embedding::build_weights(const Shape&, Random& random) {
  add_weight("embeddings", {input_dim_, output_dim_}, initializer_, random);
}

std::unique_ptr<LayerStep> Embedding::compile(const Shape& input_shape, const CompileOptions&) {
  return std::make_unique<EmbeddingStep>(name(), input_shape.num_elements(), input_dim_, output_dim_, *weights()[0]);
}

nlohmann::json Embedding::get_config() const {
  nlohmann::json config = Layer::get_config();
  config["input_dim"] = input_dim_;
  config["output_dim"] = output_dim_;
  config["embeddings_initializer"] = initializer_.get_config();
  config["embeddings_regularizer"] = nullptr;
  config["activity_regularizer"] = nullptr;
  config["embeddings_constraint"] = nullptr;
  config["mask_zero"] = false;
  return config;
}

}  // namespace tenfold::layers
