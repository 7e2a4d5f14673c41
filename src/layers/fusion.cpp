#include "layers/fusion.h"

#include <unistd.h>

#include <algorithm>
#include <type_traits>

#include "kernels/direct_conv.h"
#include "kernels/onednn/activation.h"
#include "kernels/onednn/conv2d.h"
#include "kernels/onednn/pooling.h"
#include "kernels/onednn/weight_layout.h"
#include "layers/activation.h"
#include "layers/batch_normalization.h"
#include "layers/conv2d.h"
#include "layers/merge.h"
#include "layers/pooling.h"

namespace tenfold {

namespace {

using kernels::WindowGeometry;
using kernels::onednn::ActivationKernel;
using kernels::onednn::Conv2DKernel;
using kernels::onednn::OnednnWeightLayout;
using kernels::onednn::PoolingKernel;
using kernels::reference::PoolKind;

// Convolution output per chunk: it must stay in cache between the convolution and the
// pooling, so a chunk takes half of one core's L2 (the other half holds the chunk's input and
// the weights). Measured on the zoo (bench/zoo/, batch 512, 2 replicas, 2 MiB L2): chunks of
// 512 KiB / 1 MiB / 2 MiB / 4 MiB gave 26.1k / 27.7k / 26.8k / 25.5k samples/s on the recipe's
// model and 2634 / 2570 / 2542 / 2537 on vgg_stack; unfused, 17.8k and 2405.
int64_t chunk_bytes() {
  static const int64_t bytes = [] {
    long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l2 > 0 ? int64_t(l2) / 2 : int64_t(1) << 20;
  }();
  return bytes;
}

// Below this many samples per chunk the kernels run on too little work to pay for the
// chunking: the pair runs unfused.
constexpr int64_t min_chunk_samples = 4;

/// Samples per chunk of the fused step on inputs of `input_shape` in `dtype`, or 0 when fusing
/// does not pay.
int64_t samples_per_chunk(const layers::Conv2D& conv, const Shape& input_shape, DType dtype) {
  const int64_t sample_bytes =
      conv.compute_output_shape(input_shape).without_batch().num_elements() * int64_t(dtype_size(dtype));
  const int64_t fitting = chunk_bytes() / sample_bytes, batch = input_shape[0];
  if (fitting < std::min(min_chunk_samples, batch)) return 0;
  return std::min(fitting, batch);
}

/// The dtype the fused step's convolution computes in under a policy computing in `dtype`:
/// float32 (on weights rounded to bfloat16, inputs rounded by the model's AutocastStep, pooled
/// straight into bfloat16) for a reduction (input channels per group x window) below 64, too
/// short for the bfloat16 kernels: measured on the recipe's 1 -> 32 3x3 layer (a reduction of
/// 9), forward 2.9 ms and backward-weights 2.8 ms in bfloat16 against 1.5 and 0.9 ms in
/// float32 (512 samples, 2 replicas). Unfused, such a layer stays in bfloat16: a float32 one
/// would convert its whole output (vgg_stack: 6587 samples/s and 50 MiB of conversion scratch,
/// against 7347 and 0.8 MiB in bfloat16).
DType conv_dtype(const WindowGeometry& g, DType dtype) {
  return reduction_size(g) >= 64 ? dtype : DType::float32;
}

WindowGeometry with_batch(WindowGeometry g, int64_t batch) {
  g.batch = batch;
  return g;
}

/// Element `index` of a tensor's data, whatever its dtype.
template <typename Tensor>
auto* element(Tensor& tensor, int64_t index) {
  auto* bytes = static_cast<std::conditional_t<std::is_const_v<Tensor>, const std::byte*, std::byte*>>(tensor.raw_data());
  return bytes + index * int64_t(dtype_size(tensor.dtype()));
}

/// The kernels for one chunk size.
struct ChunkKernels {
  ChunkKernels(const WindowGeometry& conv_geometry, const WindowGeometry& pool_geometry,
               kernels::Activation activation, bool use_bias, const OnednnWeightLayout& layout,
               bool need_input_gradient, DType conv_dtype, DType output_dtype)
      : conv(conv_geometry, activation, use_bias, layout.native_desc(), need_input_gradient, conv_dtype,
             conv_dtype != output_dtype),
        pool(PoolKind::max, pool_geometry, conv_dtype, output_dtype) {}
  Conv2DKernel conv;
  PoolingKernel pool;
};

class ConvMaxPoolStep : public LayerStep {
 public:
  /// The batch runs in chunks of `chunk` samples (samples_per_chunk). The convolution and its
  /// input in `conv_dtype`, the pooled output in `output_dtype`: a float32 convolution of a
  /// bfloat16 model (conv_dtype, on bfloat16-rounded weights) writes bfloat16.
  ConvMaxPoolStep(const layers::Conv2D& conv, const layers::Pooling2D& pool, const Shape& input_shape,
                  int64_t chunk, std::vector<Variable*> weights, bool need_input_gradient, DType conv_dtype,
                  DType output_dtype)
      : weights_(std::move(weights)), dtype_(conv_dtype), output_dtype_(output_dtype), chunk_(chunk) {
    WindowGeometry conv_geometry = conv.geometry(input_shape);
    Shape conv_output = conv.compute_output_shape(input_shape);
    WindowGeometry pool_geometry = pool.geometry(conv_output);
    const int64_t batch = input_shape[0];
    in_sample_ = input_shape.without_batch().num_elements();
    out_sample_ = pool.compute_output_shape(conv_output).without_batch().num_elements();
    const auto& layout = static_cast<const OnednnWeightLayout&>(conv.kernel_layout());
    bool use_bias = weights_.size() > 1;
    full_ = std::make_unique<ChunkKernels>(with_batch(conv_geometry, chunk_),
                                           with_batch(pool_geometry, chunk_), conv.activation(),
                                           use_bias, layout, need_input_gradient, conv_dtype, output_dtype);
    int64_t rest = batch % chunk_;
    if (rest > 0) {
      rest_ = std::make_unique<ChunkKernels>(with_batch(conv_geometry, rest),
                                             with_batch(pool_geometry, rest), conv.activation(),
                                             use_bias, layout, need_input_gradient, conv_dtype, output_dtype);
    }
    // Each chunk's pooling workspace is kept from forward to backward.
    workspace_stride_ = full_->pool.workspace_bytes();
    workspaces_ = allocate_aligned(workspace_stride_ * size_t(batch / chunk_ + 1));
    conv_buffer_ = Tensor(Shape{chunk_ * conv_output.without_batch().num_elements()}, conv_dtype);
    Shape pooled = pool.compute_output_shape(conv_output);
    activation_ = ActivationKernel(conv.activation(), pooled.num_elements() / pooled[3], pooled[3],
                                   kernels::onednn::data_type_of(output_dtype));
    batch_ = batch;
  }

  DType compute_dtype() const override { return dtype_; }
  DType output_dtype() const override { return output_dtype_; }

  void forward(const Tensor& input, Tensor& output, bool) override {
    for_each_chunk([&](ChunkKernels& k, int64_t begin, size_t index) {
      // The weights are converted (reordered, cast) once per step for each chunk size's kernel.
      k.conv.forward(element(input, begin * in_sample_), weights_[0]->value().data<float>(), bias(),
                     conv_buffer_.raw_data(), ran_before(k, begin));
      k.pool.forward(conv_buffer_.raw_data(), element(output, begin * out_sample_), workspace(index));
    });
  }

  // Chunks run one after another: one scratch serves both kernels.
  size_t scratch_bytes() const override {
    return std::max(full_->conv.scratch_bytes(), rest_ ? rest_->conv.scratch_bytes() : 0);
  }
  void bind_scratch(std::byte* scratch) override {
    full_->conv.bind_scratch(scratch);
    if (rest_) rest_->conv.bind_scratch(scratch);
  }

  void backward(const Tensor& input, const Tensor& output, Tensor& grad_output, Tensor* grad_input,
                std::span<Tensor> weight_gradients, bool) override {
    // The activation's derivative at each window's maximum, from the pooled output.
    activation_.backward(nullptr, output.raw_data(), grad_output.raw_data(), grad_output.raw_data());
    for_each_chunk([&](ChunkKernels& k, int64_t begin, size_t index) {
      void* conv_gradient = conv_buffer_.raw_data();
      k.pool.backward(element(grad_output, begin * out_sample_), conv_gradient, workspace(index));
      k.conv.backward_weights(element(input, begin * in_sample_), conv_gradient,
                              weight_gradients[0].data<float>(),
                              weights_.size() > 1 ? weight_gradients[1].data<float>() : nullptr,
                              begin > 0);
      if (grad_input) {
        k.conv.backward_data(conv_gradient, weights_[0]->value().data<float>(),
                             element(*grad_input, begin * in_sample_), ran_before(k, begin));
      }
    });
  }

 private:
  template <typename Each>
  void for_each_chunk(Each each) {
    size_t index = 0;
    for (int64_t begin = 0; begin < batch_; begin += chunk_, ++index) {
      each(batch_ - begin >= chunk_ ? *full_ : *rest_, begin, index);
    }
  }
  /// Whether the chunk at `begin` runs a kernel that an earlier chunk of this step ran: only
  /// the full chunks' kernel runs more than once (the rest, if any, comes last).
  bool ran_before(const ChunkKernels& k, int64_t begin) const { return &k == full_.get() && begin > 0; }
  void* workspace(size_t index) { return workspaces_.get() + index * workspace_stride_; }
  const float* bias() const {
    return weights_.size() > 1 ? weights_[1]->value().data<float>() : nullptr;
  }

  std::vector<Variable*> weights_;
  DType dtype_, output_dtype_;
  int64_t batch_ = 0, chunk_ = 0, in_sample_ = 0, out_sample_ = 0;
  std::unique_ptr<ChunkKernels> full_, rest_;
  size_t workspace_stride_ = 0;
  std::shared_ptr<std::byte> workspaces_;
  Tensor conv_buffer_;  // one chunk's convolution output, then its gradient
  ActivationKernel activation_;
};

/// A first layer's Conv2D + MaxPooling2D that kernels/direct_conv.h computes in one pass over
/// the batch: no convolution output is ever stored, so there are no chunks.
class DirectConvMaxPoolStep : public LayerStep {
 public:
  DirectConvMaxPoolStep(const layers::Conv2D& conv, const WindowGeometry& conv_geometry,
                        const WindowGeometry& pool_geometry, std::vector<Variable*> weights,
                        bool need_weight_gradients, DType input_dtype, DType output_dtype)
      : weights_(std::move(weights)),
        input_dtype_(input_dtype),
        output_dtype_(output_dtype),
        kernel_(conv_geometry, conv.activation(), weights_.size() > 1,
                static_cast<const OnednnWeightLayout&>(conv.kernel_layout()).native_desc(), need_weight_gradients,
                input_dtype, output_dtype, pool_geometry),
        argmax_(allocate_aligned(size_t(pool_geometry.batch * pool_geometry.out_height * pool_geometry.out_width *
                                        pool_geometry.in_channels))) {}

  DType compute_dtype() const override { return input_dtype_; }
  DType output_dtype() const override { return output_dtype_; }

  void forward(const Tensor& input, Tensor& output, bool) override {
    kernel_.forward(input.raw_data(), weights_[0]->value().data<float>(), bias(), output.raw_data(), argmax());
  }

  void backward(const Tensor& input, const Tensor& output, Tensor& grad_output, Tensor*,
                std::span<Tensor> weight_gradients, bool) override {
    kernel_.backward(input.raw_data(), output.raw_data(), grad_output.raw_data(), nullptr, nullptr,
                     weight_gradients[0].data<float>(),
                     weights_.size() > 1 ? weight_gradients[1].data<float>() : nullptr, argmax());
  }

 private:
  const float* bias() const { return weights_.size() > 1 ? weights_[1]->value().data<float>() : nullptr; }
  uint8_t* argmax() { return reinterpret_cast<uint8_t*>(argmax_.get()); }

  std::vector<Variable*> weights_;
  DType input_dtype_, output_dtype_;
  kernels::DirectConv2DKernel kernel_;
  std::shared_ptr<std::byte> argmax_;  // each window's maximum's position, from forward to backward
};

}  // namespace

std::unique_ptr<LayerStep> compile_fused(Layer& first, Layer& second, const std::vector<Shape>& input_shapes,
                                         const CompileOptions& options) {
  auto* merge = dynamic_cast<layers::Elementwise*>(&first);
  auto* activation = dynamic_cast<layers::Activation*>(&second);
  if (merge != nullptr && activation != nullptr && activation->fuses_as_post_op()) {
    return merge->compile_with_activation(input_shapes, activation->kind(), options.compute_dtype);
  }
  auto* normalization = dynamic_cast<layers::BatchNormalization*>(&first);
  if (normalization != nullptr && activation != nullptr && input_shapes.size() == 1) {
    return normalization->compile_with_activation(input_shapes[0], activation->kind(), options);
  }
  auto* conv = dynamic_cast<layers::Conv2D*>(&first);
  auto* pool = dynamic_cast<layers::Pooling2D*>(&second);
  // Not the 1D forms, whose geometry is a row of steps.
  if (conv == nullptr || pool == nullptr || dynamic_cast<layers::Conv1D*>(conv) != nullptr || pool->one_dimensional() ||
      pool->kind() != PoolKind::max ||
      !kernels::onednn::fusable_as_post_op(conv->activation()) || input_shapes.size() != 1) {
    return nullptr;
  }
  const Shape& input_shape = input_shapes[0];
  const WindowGeometry conv_geometry = conv->geometry(input_shape);
  const DType dtype = conv_dtype(conv_geometry, options.compute_dtype);
  const WindowGeometry pool_geometry = pool->geometry(conv->compute_output_shape(input_shape));
  if (kernels::DirectConv2DKernel::handles(conv_geometry, pool_geometry, conv->activation(),
                                           options.need_input_gradient)) {
    return std::make_unique<DirectConvMaxPoolStep>(*conv, conv_geometry, pool_geometry, conv->weights(),
                                                   options.need_weight_gradients, dtype, options.compute_dtype);
  }
  const int64_t chunk = samples_per_chunk(*conv, input_shape, dtype);
  if (chunk == 0) return nullptr;
  return std::make_unique<ConvMaxPoolStep>(*conv, *pool, input_shape, chunk, conv->weights(),
                                           options.need_input_gradient, dtype, options.compute_dtype);
}

}  // namespace tenfold
