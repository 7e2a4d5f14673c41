#include "kernels/onednn/conv2d.h"

#include <algorithm>

#include "core/error.h"

namespace tenfold::kernels::onednn {

namespace {

using tag = memory::format_tag;
using dnnl::algorithm;
using dnnl::prop_kind;

struct ConvDescs {
  memory::desc src, dst, bias, any_weights;
  memory::dims strides, padding_left, padding_right;
};

ConvDescs conv_descs(const WindowGeometry& g) {
  return {f32_desc({g.batch, g.in_channels, g.in_height, g.in_width}, tag::nhwc),
          f32_desc({g.batch, g.out_channels, g.out_height, g.out_width}, tag::nhwc),
          f32_desc({g.out_channels}, tag::x),
          memory::desc({g.out_channels, g.in_channels, g.window_height, g.window_width},
                       memory::data_type::f32, tag::any),
          {g.stride_height, g.stride_width},
          {g.pad_top, g.pad_left},
          {g.pad_bottom, g.pad_right}};
}

dnnl::convolution_forward::desc forward_desc(const ConvDescs& d, const memory::desc& weights,
                                             bool use_bias) {
  if (use_bias) {
    return {prop_kind::forward_training, algorithm::convolution_direct, d.src, weights, d.bias,
            d.dst, d.strides, d.padding_left, d.padding_right};
  }
  return {prop_kind::forward_training, algorithm::convolution_direct, d.src, weights, d.dst,
          d.strides, d.padding_left, d.padding_right};
}

}  // namespace

memory::desc Conv2DKernel::preferred_weights_desc(const WindowGeometry& g) {
  ConvDescs d = conv_descs(g);
  dnnl::convolution_forward::primitive_desc pd(forward_desc(d, d.any_weights, true), engine());
  return pd.weights_desc();
}

memory::desc Conv2DKernel::keras_weights_desc(const WindowGeometry& g) {
  return f32_desc({g.out_channels, g.in_channels, g.window_height, g.window_width}, tag::hwio);
}

Conv2DKernel::Conv2DKernel(const WindowGeometry& g, Activation activation, bool use_bias,
                           const memory::desc& weights, bool need_diff_src)
    : use_bias_(use_bias), activation_(activation, g.batch * g.out_height * g.out_width, g.out_channels) {
  check_argument(fusable_as_post_op(activation), "Conv2D cannot fuse a softmax activation");
  ConvDescs d = conv_descs(g);
  dnnl::primitive_attr forward_attr = user_scratchpad_attr();
  forward_attr.set_post_ops(activation_post_ops(activation));
  dnnl::convolution_forward::primitive_desc forward_pd(forward_desc(d, weights, use_bias),
                                                       forward_attr, engine());
  std::vector<std::pair<int, memory::desc>> forward_args = {{DNNL_ARG_SRC, d.src},
                                                            {DNNL_ARG_WEIGHTS, weights}};
  if (use_bias) forward_args.push_back({DNNL_ARG_BIAS, d.bias});
  forward_args.push_back({DNNL_ARG_DST, d.dst});
  forward_ = BoundPrimitive(dnnl::convolution_forward(forward_pd), forward_args,
                            forward_pd.scratchpad_desc());

  dnnl::primitive_attr attr = user_scratchpad_attr();
  if (need_diff_src) {
    dnnl::convolution_backward_data::primitive_desc pd(
        {algorithm::convolution_direct, d.src, weights, d.dst, d.strides, d.padding_left,
         d.padding_right},
        attr, engine(), forward_pd);
    backward_data_ = BoundPrimitive(
        dnnl::convolution_backward_data(pd),
        {{DNNL_ARG_DIFF_DST, d.dst}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DIFF_SRC, d.src}},
        pd.scratchpad_desc());
  }
  // NOTE: backward-weights picks its own diff_weights layout: forcing the forward's layout can
  // land on oneDNN's reference kernel (seen for 1 input channel: 100x slower). When the two
  // differ, the gradient is reordered into the weights' layout so the optimizer updates
  // elementwise; that reorder touches only the weights, not the activations.
  memory::desc any_weights = d.any_weights;
  auto weights_pd = use_bias
      ? dnnl::convolution_backward_weights::primitive_desc(
            {algorithm::convolution_direct, d.src, any_weights, d.bias, d.dst, d.strides,
             d.padding_left, d.padding_right},
            attr, engine(), forward_pd)
      : dnnl::convolution_backward_weights::primitive_desc(
            {algorithm::convolution_direct, d.src, any_weights, d.dst, d.strides, d.padding_left,
             d.padding_right},
            attr, engine(), forward_pd);
  memory::desc diff_weights = weights_pd.diff_weights_desc();
  std::vector<std::pair<int, memory::desc>> weights_args = {{DNNL_ARG_SRC, d.src},
                                                            {DNNL_ARG_DIFF_DST, d.dst},
                                                            {DNNL_ARG_DIFF_WEIGHTS, diff_weights}};
  if (use_bias) weights_args.push_back({DNNL_ARG_DIFF_BIAS, d.bias});
  backward_weights_ = BoundPrimitive(dnnl::convolution_backward_weights(weights_pd), weights_args,
                                     weights_pd.scratchpad_desc());
  if (diff_weights != weights) {
    diff_weights_buffer_ = allocate_aligned(diff_weights.get_size());
    diff_weights_reorder_ = BoundPrimitive(
        dnnl::reorder(dnnl::reorder::primitive_desc(engine(), diff_weights, engine(), weights)),
        {{DNNL_ARG_FROM, diff_weights}, {DNNL_ARG_TO, weights}}, memory::desc());
  }
  scratchpad_ = allocate_aligned(std::max({forward_.scratchpad_bytes(),
                                           backward_data_.scratchpad_bytes(),
                                           backward_weights_.scratchpad_bytes()}));
}

void Conv2DKernel::forward(const float* src, const float* weights, const float* bias, float* dst) {
  if (use_bias_) {
    forward_.execute({src, weights, bias, dst}, scratchpad_.get());
  } else {
    forward_.execute({src, weights, dst}, scratchpad_.get());
  }
}

void Conv2DKernel::backward(const float* src, const float* dst, float* diff_dst,
                            const float* weights, float* diff_src, float* diff_weights,
                            float* diff_bias) {
  activation_.backward(dst, diff_dst, diff_dst);
  if (diff_src != nullptr) {
    check_argument(!backward_data_.empty(), "Conv2D kernel was built without input gradient");
    backward_data_.execute({diff_dst, weights, diff_src}, scratchpad_.get());
  }
  float* own_layout = diff_weights_reorder_.empty() ? diff_weights
                                                    : reinterpret_cast<float*>(diff_weights_buffer_.get());
  if (use_bias_) {
    backward_weights_.execute({src, diff_dst, own_layout, diff_bias}, scratchpad_.get());
  } else {
    backward_weights_.execute({src, diff_dst, own_layout}, scratchpad_.get());
  }
  if (!diff_weights_reorder_.empty()) diff_weights_reorder_.execute({own_layout, diff_weights}, nullptr);
}

}  // namespace tenfold::kernels::onednn
