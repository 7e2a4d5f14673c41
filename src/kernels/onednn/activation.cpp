#include "kernels/onednn/activation.h"

#include <algorithm>
#include <cstring>

namespace tenfold::kernels::onednn {

namespace {

dnnl::algorithm eltwise_algorithm(Activation activation) {
  switch (activation) {
    case Activation::relu: return dnnl::algorithm::eltwise_relu_use_dst_for_bwd;
    case Activation::sigmoid: return dnnl::algorithm::eltwise_logistic_use_dst_for_bwd;
    case Activation::tanh: return dnnl::algorithm::eltwise_tanh_use_dst_for_bwd;
    case Activation::linear:
    case Activation::softmax: break;
  }
  return dnnl::algorithm::undef;
}

}  // namespace

bool fusable_as_post_op(Activation activation) { return activation != Activation::softmax; }

dnnl::post_ops activation_post_ops(Activation activation) {
  dnnl::post_ops ops;
  if (activation != Activation::linear && fusable_as_post_op(activation)) {
    ops.append_eltwise(1.0f, eltwise_algorithm(activation), 0.0f, 0.0f);
  }
  return ops;
}

ActivationKernel::ActivationKernel(Activation activation, int64_t rows, int64_t columns)
    : activation_(activation), count_(rows * columns) {
  if (activation == Activation::linear) return;
  memory::desc data = f32_desc({rows, columns}, memory::format_tag::nc);
  dnnl::primitive_attr attr = user_scratchpad_attr();
  if (activation == Activation::softmax) {
    dnnl::softmax_forward::primitive_desc forward_pd(
        {dnnl::prop_kind::forward_training, data, 1}, attr, engine());
    dnnl::softmax_backward::primitive_desc backward_pd({data, data, 1}, attr, engine(),
                                                       forward_pd);
    forward_ = BoundPrimitive(dnnl::softmax_forward(forward_pd), forward_pd,
        {{DNNL_ARG_SRC, data}, {DNNL_ARG_DST, data}});
    backward_ = BoundPrimitive(dnnl::softmax_backward(backward_pd), backward_pd,
        {{DNNL_ARG_DST, data}, {DNNL_ARG_DIFF_DST, data}, {DNNL_ARG_DIFF_SRC, data}});
  } else {
    dnnl::algorithm algorithm = eltwise_algorithm(activation);
    dnnl::eltwise_forward::primitive_desc forward_pd(
        {dnnl::prop_kind::forward_training, algorithm, data, 0.0f, 0.0f}, attr, engine());
    dnnl::eltwise_backward::primitive_desc backward_pd({algorithm, data, data, 0.0f, 0.0f}, attr,
                                                       engine(), forward_pd);
    forward_ = BoundPrimitive(dnnl::eltwise_forward(forward_pd), forward_pd,
        {{DNNL_ARG_SRC, data}, {DNNL_ARG_DST, data}});
    backward_ = BoundPrimitive(dnnl::eltwise_backward(backward_pd), backward_pd,
        {{DNNL_ARG_DST, data}, {DNNL_ARG_DIFF_DST, data}, {DNNL_ARG_DIFF_SRC, data}});
  }
  scratchpad_ = allocate_aligned(std::max(forward_.scratchpad_bytes(), backward_.scratchpad_bytes()));
}

void ActivationKernel::forward(const float* src, float* dst) {
  if (activation_ == Activation::linear) {
    if (src != dst) std::memcpy(dst, src, static_cast<size_t>(count_) * sizeof(float));
    return;
  }
  forward_.execute({src, dst}, scratchpad_.get());
}

void ActivationKernel::backward(const float* dst, const float* diff_dst, float* diff_src) {
  if (activation_ == Activation::linear) {
    if (diff_src != diff_dst) std::memcpy(diff_src, diff_dst, static_cast<size_t>(count_) * sizeof(float));
    return;
  }
  backward_.execute({dst, diff_dst, diff_src}, scratchpad_.get());
}

std::vector<std::string> ActivationKernel::implementations() const {
  if (forward_.empty()) return {};
  return {"forward " + forward_.implementation(), "backward " + backward_.implementation()};
}

}  // namespace tenfold::kernels::onednn
