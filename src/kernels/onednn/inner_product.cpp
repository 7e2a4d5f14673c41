#include "kernels/onednn/inner_product.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/error.h"

namespace tenfold::kernels::onednn {

namespace {

using tag = memory::format_tag;
using dnnl::prop_kind;

dnnl::inner_product_forward::desc forward_desc(const memory::desc& src,
                                               const memory::desc& weights,
                                               const memory::desc& bias, const memory::desc& dst,
                                               bool use_bias) {
  if (use_bias) return {prop_kind::forward_training, src, weights, bias, dst};
  return {prop_kind::forward_training, src, weights, dst};
}

}  // namespace

memory::desc InnerProductKernel::preferred_weights_desc(int64_t rows, int64_t in, int64_t units) {
  memory::desc any({units, in}, memory::data_type::f32, tag::any);
  dnnl::inner_product_forward::primitive_desc pd(
      forward_desc(f32_desc({rows, in}, tag::nc), any, f32_desc({units}, tag::x),
                   f32_desc({rows, units}, tag::nc), true),
      engine());
  return pd.weights_desc();
}

memory::desc InnerProductKernel::keras_weights_desc(int64_t in, int64_t units) {
  return f32_desc({units, in}, tag::io);
}

InnerProductKernel::InnerProductKernel(int64_t rows, int64_t in, int64_t units,
                                       Activation activation, bool use_bias,
                                       const memory::desc& stored_weights, bool need_diff_src)
    : use_bias_(use_bias), activation_(activation, rows, units) {
  check_argument(fusable_as_post_op(activation), "Dense cannot fuse a softmax activation");
  memory::desc src = f32_desc({rows, in}, tag::nc);
  memory::desc dst = f32_desc({rows, units}, tag::nc);
  memory::desc bias = f32_desc({units}, tag::x);
  memory::desc any_weights({units, in}, memory::data_type::f32, tag::any);
  // Forward and backward-data each pick their weights layout, as Conv2DKernel's do; the
  // backward-weights gradient is written in the stored layout.
  dnnl::primitive_attr forward_attr = user_scratchpad_attr();
  forward_attr.set_post_ops(activation_post_ops(activation));
  dnnl::inner_product_forward::primitive_desc forward_pd(
      forward_desc(src, any_weights, bias, dst, use_bias), forward_attr, engine());
  forward_weights_ = WeightsForPrimitive(stored_weights, forward_pd.weights_desc());
  std::vector<std::pair<int, memory::desc>> forward_args = {
      {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, forward_pd.weights_desc()}};
  if (use_bias) forward_args.push_back({DNNL_ARG_BIAS, bias});
  forward_args.push_back({DNNL_ARG_DST, dst});
  forward_ = BoundPrimitive(dnnl::inner_product_forward(forward_pd), forward_pd, forward_args);

  dnnl::primitive_attr attr = user_scratchpad_attr();
  if (need_diff_src) {
    dnnl::inner_product_backward_data::primitive_desc pd({src, any_weights, dst}, attr, engine(),
                                                         forward_pd);
    backward_data_weights_ = WeightsForPrimitive(stored_weights, pd.weights_desc());
    backward_data_ = BoundPrimitive(
        dnnl::inner_product_backward_data(pd), pd,
        {{DNNL_ARG_DIFF_DST, dst}, {DNNL_ARG_WEIGHTS, pd.weights_desc()}, {DNNL_ARG_DIFF_SRC, src}});
  }
  auto weights_pd = use_bias
      ? dnnl::inner_product_backward_weights::primitive_desc({src, stored_weights, bias, dst}, attr,
                                                             engine(), forward_pd)
      : dnnl::inner_product_backward_weights::primitive_desc({src, stored_weights, dst}, attr,
                                                             engine(), forward_pd);
  std::vector<std::pair<int, memory::desc>> weights_args = {
      {DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, dst}, {DNNL_ARG_DIFF_WEIGHTS, stored_weights}};
  if (use_bias) weights_args.push_back({DNNL_ARG_DIFF_BIAS, bias});
  backward_weights_ = BoundPrimitive(dnnl::inner_product_backward_weights(weights_pd), weights_pd,
                                     weights_args);
  scratchpad_ = allocate_aligned(std::max({forward_.scratchpad_bytes(),
                                           backward_data_.scratchpad_bytes(),
                                           backward_weights_.scratchpad_bytes()}));
}

std::vector<std::string> InnerProductKernel::implementations() const {
  auto with_reorder = [](const BoundPrimitive& p, const WeightsForPrimitive& w) {
    return p.implementation() + (w.reorders() ? " (weights reordered)" : "");
  };
  std::vector<std::string> names = {"forward " + with_reorder(forward_, forward_weights_)};
  if (!backward_data_.empty()) {
    names.push_back("backward-data " + with_reorder(backward_data_, backward_data_weights_));
  }
  names.push_back("backward-weights " + backward_weights_.implementation());
  return names;
}

void InnerProductKernel::forward(const float* src, const float* weights, const float* bias,
                                 float* dst) {
  if (use_bias_) {
    forward_.execute({src, forward_weights_(weights), bias, dst}, scratchpad_.get());
  } else {
    forward_.execute({src, forward_weights_(weights), dst}, scratchpad_.get());
  }
}

void InnerProductKernel::backward(const float* src, const float* dst, float* diff_dst,
                                  const float* weights, float* diff_src, float* diff_weights,
                                  float* diff_bias) {
  activation_.backward(dst, diff_dst, diff_dst);
  if (diff_src != nullptr) {
    check_argument(!backward_data_.empty(), "Dense kernel was built without input gradient");
    backward_data_.execute({diff_dst, backward_data_weights_(weights), diff_src}, scratchpad_.get());
  }
  if (use_bias_) {
    backward_weights_.execute({src, diff_dst, diff_weights, diff_bias}, scratchpad_.get());
  } else {
    backward_weights_.execute({src, diff_dst, diff_weights}, scratchpad_.get());
  }
}

}  // namespace tenfold::kernels::onednn
