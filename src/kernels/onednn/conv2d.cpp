#include "kernels/onednn/conv2d.h"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "kernels/bfloat16.h"
#include "kernels/column_sums.h"
#include "kernels/timing.h"

namespace tenfold::kernels::onednn {

namespace {

using tag = memory::format_tag;
using dnnl::algorithm;
using dnnl::prop_kind;

struct ConvDescs {
  memory::desc src, dst, bias, any_weights;
  memory::dims strides, dilates, padding_left, padding_right;
};

/// oneDNN's weight dimensions: [F, C, KH, KW], or [G, F/G, C/G, KH, KW] with groups.
memory::dims weight_dims(const WindowGeometry& g) {
  if (g.groups == 1) return {g.out_channels, g.in_channels, g.window_height, g.window_width};
  return {g.groups, g.out_channels / g.groups, g.in_channels / g.groups, g.window_height, g.window_width};
}

ConvDescs conv_descs(const WindowGeometry& g, memory::data_type data_type = memory::data_type::f32) {
  return {memory::desc({g.batch, g.in_channels, g.in_height, g.in_width}, data_type, tag::nhwc),
          memory::desc({g.batch, g.out_channels, g.out_height, g.out_width}, data_type, tag::nhwc),
          f32_desc({g.out_channels}, tag::x),
          memory::desc(weight_dims(g), data_type, tag::any),
          {g.stride_height, g.stride_width},
          {g.dilation_height - 1, g.dilation_width - 1},  // oneDNN counts the gaps
          {g.pad_top, g.pad_left},
          {g.pad_bottom, g.pad_right}};
}

dnnl::convolution_forward::desc forward_desc(const ConvDescs& d, const memory::desc& weights,
                                             bool use_bias, algorithm method = algorithm::convolution_direct) {
  if (use_bias) {
    return {prop_kind::forward_training, method, d.src, weights, d.bias,
            d.dst, d.strides, d.dilates, d.padding_left, d.padding_right};
  }
  return {prop_kind::forward_training, method, d.src, weights, d.dst,
          d.strides, d.dilates, d.padding_left, d.padding_right};
}

/// Where oneDNN has Winograd kernels (F(4x4, 3x3): float32, blocked nChw16c activations) that
/// may beat its direct ones on NHWC: 3x3, stride 1, no dilation or groups, at least 16 channels
/// in and out (fewer are padded to 16). Whether they do depends on the shape and the CPU, so it
/// is measured (Conv2DKernel::time_methods). Measured with `tenfold-bench-conv
/// --replicas 2`, forward + backward (data and weights) of 256 samples, Winograd's speedup on an
/// Intel Xeon (AMX): 32->32 at 7x7 0.88x, 14x14 0.86x, 16x16 0.98x, 28x28 1.10x, 56x56 1.10x;
/// 48->48 at 14x14 1.08x; 32->64 at 14x14 1.23x, 64->32 1.10x; 64->64 at 7x7 1.33x, 14x14 1.29x,
/// 28x28 1.54x; 128->128 at 7x7 1.37x; 16->16 at 28x28 0.82x; on an AMD EPYC (an earlier
/// bench, 1 thread) 32->32 at 14x14 1.23x, 16->16 at 28x28 1.05x. Rounding: about twice
/// direct's (max error against double 1.4e-6 vs 6e-7 on outputs of order 1), as cuDNN's
/// Winograd kernels that PyTorch and TensorFlow pick on GPUs.
/// Where oneDNN has none (oneDNN 2.6 on a CPU without AVX-512), Tenfold's F(2x2, 3x3) may run
/// instead (WinogradConv2DKernel: float32, whole vectors of channels), measured alike.
/// The Winograd method that may run `g` in `dtype`, or direct where none may.
Conv2DKernel::Method winograd_method(const WindowGeometry& g, DType dtype) {
  using Method = Conv2DKernel::Method;
  if (dtype != DType::float32) return Method::direct;
  if (!winograd_available()) return WinogradConv2DKernel::handles(g) ? Method::tenfold_winograd : Method::direct;
  const bool fits = g.window_height == 3 && g.window_width == 3 && g.stride_height == 1 && g.stride_width == 1 &&
                    g.dilation_height == 1 && g.dilation_width == 1 && g.groups == 1 && g.in_channels >= 16 &&
                    g.out_channels >= 16;
  return fits ? Method::winograd : Method::direct;
}

/// The same descriptors with blocked activations (Winograd's layout).
ConvDescs with_blocked_activations(ConvDescs d) {
  d.src = memory::desc(d.src.dims(), d.src.data_type(), tag::nChw16c);
  d.dst = memory::desc(d.dst.dims(), d.dst.data_type(), tag::nChw16c);
  return d;
}

BoundPrimitive layout_copy(const memory::desc& from, const memory::desc& to) {
  dnnl::reorder::primitive_desc pd(engine(), from, engine(), to);
  return BoundPrimitive(dnnl::reorder(pd), pd, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
}

/// decided_once() about a convolution of geometry `g`.
bool decided_once_for(const std::string& question, const WindowGeometry& g, const std::function<bool()>& decide) {
  return kernels::decided_once(question,
                               {g.batch, g.in_height, g.in_width, g.in_channels, g.out_channels, g.window_height,
                                g.window_width, g.stride_height, g.stride_width, g.pad_top, g.pad_left, g.pad_bottom,
                                g.pad_right, g.dilation_height, g.dilation_width, g.groups},
                               decide);
}

/// Whether `as_matmul` computes the weight gradient clearly faster than `convolution`, both
/// timed on zeroed src and diff_dst (of the primitive's layouts, no smaller than NHWC's).
bool matmul_clearly_faster(BoundPrimitive& convolution, MatmulWeightGradients& as_matmul, const memory::desc& src_desc,
                           const memory::desc& dst_desc) {
  // allocate_aligned zeroes.
  auto src = allocate_aligned(src_desc.get_size()), diff_dst = allocate_aligned(dst_desc.get_size());
  auto gradients = allocate_aligned(std::max(convolution.arg_desc(DNNL_ARG_DIFF_WEIGHTS).get_size(),
                                             as_matmul.diff_weights_desc().get_size()));
  auto scratch = allocate_aligned(convolution.scratchpad_bytes());
  const std::vector<double> seconds = best_seconds_in_turns(
      {[&] { convolution.execute({src.get(), diff_dst.get(), gradients.get()}, scratch.get()); },
       [&] { as_matmul.execute(src.get(), diff_dst.get(), reinterpret_cast<float*>(gradients.get())); }},
      3);
  // Only a clear win: the two sum in different orders, and close timings would pick by noise.
  return seconds[1] < 0.8 * seconds[0];
}

/// Whether backward-weights on float32 copies (`in_float32`, its conversions from bfloat16
/// into `float_src` and `float_diff_dst` counted) is clearly faster than on the bfloat16
/// values (`in_bfloat16`); both timed on scratch data.
bool float32_clearly_faster(BoundPrimitive& in_bfloat16, BoundPrimitive& in_float32, const memory::desc& src_desc,
                            const memory::desc& dst_desc, std::byte* float_src, std::byte* float_diff_dst) {
  auto src = allocate_aligned(src_desc.get_size()), diff_dst = allocate_aligned(dst_desc.get_size());
  auto gradients = allocate_aligned(std::max(in_bfloat16.arg_desc(DNNL_ARG_DIFF_WEIGHTS).get_size(),
                                             in_float32.arg_desc(DNNL_ARG_DIFF_WEIGHTS).get_size()));
  auto scratch = allocate_aligned(std::max(in_bfloat16.scratchpad_bytes(), in_float32.scratchpad_bytes()));
  const std::vector<double> seconds = best_seconds_in_turns(
      {[&] { in_bfloat16.execute({src.get(), diff_dst.get(), gradients.get()}, scratch.get()); },
       [&] {
         kernels::to_float(reinterpret_cast<const bfloat16*>(src.get()), reinterpret_cast<float*>(float_src),
                           int64_t(src_desc.get_size() / sizeof(bfloat16)));
         kernels::to_float(reinterpret_cast<const bfloat16*>(diff_dst.get()), reinterpret_cast<float*>(float_diff_dst),
                           int64_t(dst_desc.get_size() / sizeof(bfloat16)));
         in_float32.execute({float_src, float_diff_dst, gradients.get()}, scratch.get());
       }},
      3);
  // Only a clear win: close timings (1->32 3x3 'same') would pick either way by noise.
  return seconds[1] < 0.75 * seconds[0];
}

/// A Winograd kernel's `scratch`, checked to be bound.
std::byte* bound(std::byte* scratch) {
  check_argument(scratch != nullptr, "a Winograd Conv2D kernel runs only after bind_scratch");
  return scratch;
}

}  // namespace

bool winograd_available() {
  static const bool available = [] {
    const memory::desc data({1, 16, 8, 8}, memory::data_type::f32, tag::nChw16c);
    const memory::desc weights({16, 16, 3, 3}, memory::data_type::f32, tag::any);
    try {
      dnnl::convolution_forward::primitive_desc(
          {prop_kind::forward_training, algorithm::convolution_winograd, data, weights, data, {1, 1}, {1, 1}, {1, 1}},
          engine());
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return available;
}

std::vector<Conv2DKernel::MethodSeconds> Conv2DKernel::time_methods(const WindowGeometry& g, Activation activation,
                                                                    bool use_bias, const memory::desc& stored_weights,
                                                                    bool need_diff_src,
                                                                    WeightGradients weight_gradients, int rounds) {
  const Method winograd = winograd_method(g, DType::float32);
  if (winograd == Method::direct) return {};
  std::vector<Conv2DKernel> kernels;
  for (Method method : {Method::direct, winograd}) {
    try {
      kernels.emplace_back(g, activation, use_bias, stored_weights, need_diff_src, DType::float32, false,
                           weight_gradients, method);
    } catch (const Error&) {  // no Winograd kernel for this shape
      return {};
    }
  }
  // Zeros (allocate_aligned's): the kernels' speed does not depend on the values, and garbage
  // could hold denormals.
  const size_t in = size_t(g.batch * g.in_height * g.in_width * g.in_channels) * sizeof(float);
  const size_t out = size_t(g.batch * g.out_height * g.out_width * g.out_channels) * sizeof(float);
  const size_t weight_bytes = stored_weights.get_size(), bias_bytes = size_t(g.out_channels) * sizeof(float);
  auto src = allocate_aligned(in), diff_src = allocate_aligned(in);
  auto dst = allocate_aligned(out), diff_dst = allocate_aligned(out);
  auto weights = allocate_aligned(weight_bytes), diff_weights = allocate_aligned(weight_bytes);
  auto bias = allocate_aligned(bias_bytes), diff_bias = allocate_aligned(bias_bytes);
  auto scratch = allocate_aligned(kernels[1].scratch_bytes());
  kernels[1].bind_scratch(scratch.get());
  auto as_floats = [](const std::shared_ptr<std::byte>& block) { return reinterpret_cast<float*>(block.get()); };
  std::vector<std::function<void()>> runs;
  for (Conv2DKernel& kernel : kernels) {
    runs.push_back([&] { kernel.forward(src.get(), as_floats(weights), as_floats(bias), dst.get()); });
    runs.push_back([&] {
      kernel.backward(src.get(), dst.get(), diff_dst.get(), as_floats(weights), need_diff_src ? diff_src.get() : nullptr,
                      as_floats(diff_weights), as_floats(diff_bias));
    });
  }
  const std::vector<double> seconds = best_seconds_in_turns(runs, rounds);
  return {{seconds[0], seconds[1]}, {seconds[2], seconds[3]}};
}

memory::desc Conv2DKernel::preferred_weights_desc(const WindowGeometry& g) {
  ConvDescs d = conv_descs(g);
  dnnl::convolution_forward::primitive_desc pd(forward_desc(d, d.any_weights, true), engine());
  return pd.weights_desc();
}

memory::desc Conv2DKernel::keras_weights_desc(const WindowGeometry& g) {
  if (g.groups == 1) return f32_desc(weight_dims(g), tag::hwio);
  // Keras' [KH, KW, C/G, F] with filter f = group * F/G + o.
  const int64_t group_in = g.in_channels / g.groups, group_out = g.out_channels / g.groups;
  const int64_t F = g.out_channels;
  return memory::desc(weight_dims(g), memory::data_type::f32,
                      memory::dims{group_out, 1, F, g.window_width * group_in * F, group_in * F});
}

Conv2DKernel::Conv2DKernel(const WindowGeometry& g, Activation activation, bool use_bias,
                           const memory::desc& stored_weights, bool need_diff_src, DType dtype,
                           bool bfloat16_weights, WeightGradients weight_gradients, Method method)
    : use_bias_(use_bias),
      dtype_(dtype),
      rows_(g.batch * g.out_height * g.out_width),
      channels_(g.out_channels),
      activation_(activation, rows_, channels_, data_type_of(dtype)) {
  check_argument(fusable_as_post_op(activation), "Conv2D fuses only activations whose gradient follows from their output");
  const ConvDescs nhwc = conv_descs(g, data_type_of(dtype));
  ConvDescs d = nhwc;  // what the primitives read and write
  // NOTE: every primitive picks its own weights layout (`any`). Handed another one (the
  // forward's, say), oneDNN 2.6 may fall back to its reference kernels: backward-data 12 s
  // instead of 9 ms. The stored weights are reordered for a primitive that picked otherwise.
  dnnl::primitive_attr forward_attr = user_scratchpad_attr();
  forward_attr.set_post_ops(activation_post_ops(activation));
  dnnl::convolution_forward::primitive_desc forward_pd;
  const Method candidate = method == Method::chosen ? winograd_method(g, dtype) : method;
  const bool use_winograd =
      candidate != Method::direct && (method != Method::chosen || decided_once_for("Conv2D Winograd", g, [&] {
                                        const auto seconds = time_methods(g, activation, use_bias, stored_weights,
                                                                          need_diff_src, weight_gradients, 3);
                                        return !seconds.empty() && seconds[1].total() < seconds[0].total();
                                      }));
  if (use_winograd && candidate == Method::tenfold_winograd) {
    check_argument(dtype == DType::float32 && WinogradConv2DKernel::handles(g),
                   "Tenfold's Winograd kernel computes float32 3x3 convolutions at stride 1 over whole vectors "
                   "of channels only");
    tenfold_winograd_.emplace(g);
    keras_weights_ = WeightsForPrimitive(stored_weights, keras_weights_desc(g));
    relu_in_winograd_ = activation == Activation(Activation::relu);
  }
  if (use_winograd && candidate == Method::winograd) {
    try {
      const ConvDescs blocked = with_blocked_activations(nhwc);
      forward_pd = {forward_desc(blocked, blocked.any_weights, use_bias, algorithm::convolution_winograd),
                    forward_attr, engine()};
      d = blocked;
      winograd_ = true;
    } catch (const dnnl::error&) {  // not implemented for this shape or activation: direct
      check_argument(method != Method::winograd, "oneDNN has no Winograd kernel for this convolution");
    }
  }
  if (!winograd_) {
    forward_pd = {forward_desc(d, d.any_weights, use_bias), forward_attr, engine()};
  }
  const algorithm chosen = winograd_ ? algorithm::convolution_winograd : algorithm::convolution_direct;
  forward_weights_ = WeightsForPrimitive(stored_weights, forward_pd.weights_desc(), bfloat16_weights);
  std::vector<std::pair<int, memory::desc>> forward_args = {
      {DNNL_ARG_SRC, d.src}, {DNNL_ARG_WEIGHTS, forward_pd.weights_desc()}};
  if (use_bias) forward_args.push_back({DNNL_ARG_BIAS, d.bias});
  forward_args.push_back({DNNL_ARG_DST, d.dst});
  forward_ = BoundPrimitive(dnnl::convolution_forward(forward_pd), forward_pd, forward_args);

  dnnl::primitive_attr attr = user_scratchpad_attr();
  if (need_diff_src) {
    dnnl::convolution_backward_data::primitive_desc pd(
        {chosen, d.src, d.any_weights, d.dst, d.strides, d.dilates,
         d.padding_left, d.padding_right},
        attr, engine(), forward_pd);
    backward_data_weights_ = WeightsForPrimitive(stored_weights, pd.weights_desc(), bfloat16_weights);
    backward_data_ = BoundPrimitive(dnnl::convolution_backward_data(pd), pd,
                                    {{DNNL_ARG_DIFF_DST, d.dst},
                                     {DNNL_ARG_WEIGHTS, pd.weights_desc()},
                                     {DNNL_ARG_DIFF_SRC, d.src}});
  }
  // nChw16c over 16 channels is NHWC's own bytes: those activations are not copied.
  if (winograd_ && g.in_channels != 16) {
    src_to_blocked_ = layout_copy(nhwc.src, d.src);
    if (need_diff_src) blocked_to_src_ = layout_copy(d.src, nhwc.src);
    blocked_src_bytes_ = aligned_size(d.src.get_size());
  }
  if (winograd_ && g.out_channels != 16) {
    dst_to_blocked_ = layout_copy(nhwc.dst, d.dst);
    blocked_to_dst_ = layout_copy(d.dst, nhwc.dst);
    blocked_dst_bytes_ = d.dst.get_size();
  }
  // No weight gradient wanted (inference, a frozen layer): no backward-weights primitive.
  if (weight_gradients != WeightGradients::none) {
    // The bias gradient is kernels/column_sums.h, not oneDNN's (slower) bias reduction. Weight
    // gradients are float32 from bfloat16 activations too (Keras' variables are float32).
    const memory::desc any_float_weights(weight_dims(g), memory::data_type::f32, tag::any);
    auto make_backward_weights = [&](const ConvDescs& descs, const dnnl::convolution_forward::primitive_desc& hint,
                                     algorithm descs_method) {
      dnnl::convolution_backward_weights::primitive_desc pd(
          {descs_method, descs.src, any_float_weights, descs.dst, descs.strides, descs.dilates,
           descs.padding_left, descs.padding_right},
          attr, engine(), hint);
      return BoundPrimitive(dnnl::convolution_backward_weights(pd), pd,
                            {{DNNL_ARG_SRC, descs.src}, {DNNL_ARG_DIFF_DST, descs.dst},
                             {DNNL_ARG_DIFF_WEIGHTS, pd.diff_weights_desc()}});
    };
    backward_weights_ = make_backward_weights(d, forward_pd, chosen);
    memory::desc diff_weights = backward_weights_.arg_desc(DNNL_ARG_DIFF_WEIGHTS);
    const bool first_layer_over_few_channels =
        dtype == DType::bfloat16 && !need_diff_src && reduction_size(g) < 64;
    const bool may_use_matmul = weight_gradients == WeightGradients::matmul ||
                                (weight_gradients == WeightGradients::fastest && dtype == DType::bfloat16 &&
                                 g.groups == 1 && !first_layer_over_few_channels);
    if (may_use_matmul) {
      // oneDNN's bfloat16 backward-weights ran several times slower than its matmuls of the
      // same sums on AMX (512 images, 1x1 128 -> 128 at 7x7: 10.0 ms vs 1.4; 32 -> 64 at 14x14:
      // 5.2 vs 1.2): the faster is timed once per process and geometry. In float32 the matmuls
      // were slower on every zoo geometry, so float32 keeps oneDNN's without the timing.
      MatmulWeightGradients as_matmul(g, d.src.data_type());
      const bool use_matmul = weight_gradients == WeightGradients::matmul ||
                              decided_once_for("Conv2D weight gradients as a matmul", g, [&] {
                                return matmul_clearly_faster(backward_weights_, as_matmul, d.src, d.dst);
                              });
      if (use_matmul) {
        diff_weights = as_matmul.diff_weights_desc();
        matmul_weight_gradients_ = std::move(as_matmul);
      }
    } else if (first_layer_over_few_channels) {
      // A first layer over few input channels: oneDNN's bfloat16 backward-weights is several
      // times slower than its float32 one on some (1->32 3x3 stride 2, 1->6 5x5) and not on
      // others (1->32 3x3 'same'). Both read the same bfloat16 values and sum in float32, so the
      // faster, its conversions to float32 counted, is timed once per process and geometry (every
      // replica and call then computes alike). Measured: 2-4x on strided_avgpool's and lenet5's
      // first layers, within 10% on vgg_stack's.
      const ConvDescs float_descs = conv_descs(g);
      dnnl::convolution_forward::primitive_desc float_forward(
          forward_desc(float_descs, float_descs.any_weights, use_bias), engine());
      BoundPrimitive in_float = make_backward_weights(float_descs, float_forward, algorithm::convolution_direct);
      float_src_ = allocate_aligned(float_descs.src.get_size());
      float_diff_dst_ = allocate_aligned(float_descs.dst.get_size());
      bool in_float32 = weight_gradients == WeightGradients::float32;
      if (weight_gradients == WeightGradients::fastest) {
        in_float32 = decided_once_for("Conv2D float32 weight gradients", g, [&] {
          return float32_clearly_faster(backward_weights_, in_float, d.src, d.dst, float_src_.get(),
                                        float_diff_dst_.get());
        });
      }
      if (in_float32) {
        backward_weights_ = std::move(in_float);
        diff_weights = backward_weights_.arg_desc(DNNL_ARG_DIFF_WEIGHTS);
        src_elements_ = int64_t(d.src.get_size() / sizeof(bfloat16));
      } else {
        float_src_.reset();
        float_diff_dst_.reset();
      }
    }
    if (tenfold_winograd_ && !matmul_weight_gradients_) diff_weights = keras_weights_desc(g);
    own_diff_weights_ = allocate_aligned(diff_weights.get_size());
    dnnl::primitive_attr add_attr;
    dnnl::post_ops add;
    add.append_sum(1.0f);
    add_attr.set_post_ops(add);
    dnnl::reorder::primitive_desc to_pd(engine(), diff_weights, engine(), stored_weights);
    to_weights_layout_ = BoundPrimitive(dnnl::reorder(to_pd), to_pd,
                                        {{DNNL_ARG_FROM, diff_weights}, {DNNL_ARG_TO, stored_weights}});
    dnnl::reorder::primitive_desc add_pd(engine(), diff_weights, engine(), stored_weights, add_attr);
    add_to_weights_layout_ = BoundPrimitive(
        dnnl::reorder(add_pd), add_pd, {{DNNL_ARG_FROM, diff_weights}, {DNNL_ARG_TO, stored_weights}});
  }
  scratchpad_ = allocate_aligned(std::max({forward_.scratchpad_bytes(),
                                           backward_data_.scratchpad_bytes(),
                                           backward_weights_.scratchpad_bytes()}));
}

std::vector<std::string> Conv2DKernel::implementations() const {
  const std::string tenfold_winograd = "tenfold:winograd_2x2_3x3";
  auto with_reorder = [&](const BoundPrimitive& p, const WeightsForPrimitive& w) {
    if (tenfold_winograd_) return tenfold_winograd;
    return p.implementation() + (w.reorders() ? " (weights reordered)" : "");
  };
  std::vector<std::string> names = {"forward " + with_reorder(forward_, forward_weights_)};
  if (!backward_data_.empty()) {
    names.push_back("backward-data " + with_reorder(backward_data_, backward_data_weights_));
  }
  if (!backward_weights_.empty()) {
    names.push_back("backward-weights " +
                    (matmul_weight_gradients_ ? matmul_weight_gradients_->implementation()
                     : tenfold_winograd_      ? tenfold_winograd
                                              : backward_weights_.implementation()) +
                    (float_src_ ? " (float32)" : ""));
  }
  return names;
}

size_t Conv2DKernel::scratch_bytes() const { return blocked_src_bytes_ + blocked_dst_bytes_; }

void Conv2DKernel::bind_scratch(std::byte* scratch) {
  blocked_src_ = scratch;
  blocked_dst_ = scratch + blocked_src_bytes_;
}

const void* Conv2DKernel::blocked(BoundPrimitive& copy, const void* nhwc, std::byte* to) {
  if (copy.empty()) return nhwc;
  copy.execute({nhwc, bound(to)}, nullptr);
  return to;
}

void* Conv2DKernel::blocked_output(const BoundPrimitive& copy_back, void* nhwc, std::byte* to) {
  return copy_back.empty() ? nhwc : bound(to);
}

void Conv2DKernel::copy_back(BoundPrimitive& copy, void* output, void* nhwc) {
  if (!copy.empty()) copy.execute({output, nhwc}, nullptr);
}

void Conv2DKernel::set_winograd_weights(const float* weights, bool reuse_weights) {
  if (!reuse_weights) tenfold_winograd_->set_weights(static_cast<const float*>(keras_weights_(weights)));
}

void Conv2DKernel::forward(const void* src, const float* weights, const float* bias, void* dst, bool reuse_weights) {
  if (tenfold_winograd_) {
    set_winograd_weights(weights, reuse_weights);
    tenfold_winograd_->forward(static_cast<const float*>(src), use_bias_ ? bias : nullptr, relu_in_winograd_,
                               static_cast<float*>(dst));
    if (!relu_in_winograd_ && activation_.activation().kind != Activation::linear) activation_.forward(dst, dst);
    return;
  }
  const void* picked = forward_weights_(weights, reuse_weights);
  const void* conv_src = blocked(src_to_blocked_, src, blocked_src_);
  void* conv_dst = blocked_output(blocked_to_dst_, dst, blocked_dst_);
  if (use_bias_) {
    forward_.execute({conv_src, picked, bias, conv_dst}, scratchpad_.get());
  } else {
    forward_.execute({conv_src, picked, conv_dst}, scratchpad_.get());
  }
  copy_back(blocked_to_dst_, conv_dst, dst);
}

void Conv2DKernel::backward(const void* src, const void* dst, void* diff_dst,
                            const float* weights, void* diff_src, float* diff_weights,
                            float* diff_bias) {
  activation_backward(dst, diff_dst);
  // diff_dst copied to Winograd's layout once for both gradients; the weights' first, since the
  // data gradient's blocked output takes the scratch of src's copy.
  const void* conv_diff_dst = blocked(dst_to_blocked_, diff_dst, blocked_dst_);
  if (!backward_weights_.empty()) weight_gradients(src, diff_dst, conv_diff_dst, diff_weights, diff_bias, false);
  if (diff_src != nullptr) data_gradient(conv_diff_dst, weights, diff_src, false);
}

void Conv2DKernel::activation_backward(const void* dst, void* diff_dst) {
  activation_.backward(nullptr, dst, diff_dst, diff_dst);
}

void Conv2DKernel::backward_data(const void* diff_dst, const float* weights, void* diff_src, bool reuse_weights) {
  data_gradient(blocked(dst_to_blocked_, diff_dst, blocked_dst_), weights, diff_src, reuse_weights);
}

void Conv2DKernel::data_gradient(const void* conv_diff_dst, const float* weights, void* diff_src, bool reuse_weights) {
  check_argument(!backward_data_.empty(), "Conv2D kernel was built without input gradient");
  if (tenfold_winograd_) {
    set_winograd_weights(weights, reuse_weights);
    tenfold_winograd_->backward_data(static_cast<const float*>(conv_diff_dst), static_cast<float*>(diff_src));
    return;
  }
  const void* picked = backward_data_weights_(weights, reuse_weights);
  void* conv_diff_src = blocked_output(blocked_to_src_, diff_src, blocked_src_);
  backward_data_.execute({conv_diff_dst, picked, conv_diff_src}, scratchpad_.get());
  copy_back(blocked_to_src_, conv_diff_src, diff_src);
}

void Conv2DKernel::backward_weights(const void* src, const void* diff_dst, float* diff_weights,
                                    float* diff_bias, bool accumulate) {
  weight_gradients(src, diff_dst, blocked(dst_to_blocked_, diff_dst, blocked_dst_), diff_weights, diff_bias,
                   accumulate);
}

void Conv2DKernel::weight_gradients(const void* src, const void* diff_dst, const void* conv_diff_dst,
                                    float* diff_weights, float* diff_bias, bool accumulate) {
  check_argument(!backward_weights_.empty(), "Conv2D kernel was built without weight gradients");
  if (matmul_weight_gradients_) {
    matmul_weight_gradients_->execute(src, diff_dst, reinterpret_cast<float*>(own_diff_weights_.get()));
  } else if (tenfold_winograd_) {
    tenfold_winograd_->backward_weights(static_cast<const float*>(src), static_cast<const float*>(diff_dst),
                                        reinterpret_cast<float*>(own_diff_weights_.get()));
  } else if (float_src_) {  // the float32 kernel was faster (see the constructor)
    kernels::to_float(static_cast<const bfloat16*>(src), reinterpret_cast<float*>(float_src_.get()), src_elements_);
    kernels::to_float(static_cast<const bfloat16*>(diff_dst), reinterpret_cast<float*>(float_diff_dst_.get()),
                      rows_ * channels_);
    backward_weights_.execute({float_src_.get(), float_diff_dst_.get(), own_diff_weights_.get()}, scratchpad_.get());
  } else {
    backward_weights_.execute({blocked(src_to_blocked_, src, blocked_src_), conv_diff_dst, own_diff_weights_.get()},
                              scratchpad_.get());
  }
  (accumulate ? add_to_weights_layout_ : to_weights_layout_)
      .execute({own_diff_weights_.get(), diff_weights}, nullptr);
  if (!use_bias_) return;
  if (dtype_ == DType::bfloat16) {
    column_sums(static_cast<const bfloat16*>(diff_dst), rows_, channels_, diff_bias, accumulate);
  } else {
    column_sums(static_cast<const float*>(diff_dst), rows_, channels_, diff_bias, accumulate);
  }
}

}  // namespace tenfold::kernels::onednn
