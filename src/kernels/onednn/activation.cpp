#include "kernels/onednn/activation.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "kernels/reference/activation.h"
#include "kernels/timing.h"

namespace tenfold::kernels::onednn {

namespace {

struct Eltwise {
  dnnl::algorithm algorithm = dnnl::algorithm::undef;  // the function (what a post-op computes)
  // What a training eltwise runs, forward and backward alike: the *_use_dst_for_bwd form where
  // the gradient follows from the output (which then need not be kept), else `algorithm`.
  dnnl::algorithm training_algorithm = dnnl::algorithm::undef;
  float alpha = 0, beta = 0;
  bool uses_dst() const { return training_algorithm != algorithm; }
};

bool is_softmax(const Activation& a) { return a.kind == Activation::softmax || a.kind == Activation::log_softmax; }

/// oneDNN's eltwise algorithm for an activation; undef for those it lacks (and for softmax).
Eltwise eltwise_for(const Activation& a) {
  using dnnl::algorithm;
  switch (a.kind) {
    case Activation::relu:
      if (std::isinf(a.max_value)) return {algorithm::eltwise_relu, algorithm::eltwise_relu_use_dst_for_bwd, a.alpha};
      check_argument(a.alpha == 0, "relu with both a negative slope and a max_value is not implemented");
      return {algorithm::eltwise_clip_v2, algorithm::eltwise_clip_v2_use_dst_for_bwd, 0, a.max_value};
    case Activation::sigmoid: return {algorithm::eltwise_logistic, algorithm::eltwise_logistic_use_dst_for_bwd};
    case Activation::tanh: return {algorithm::eltwise_tanh, algorithm::eltwise_tanh_use_dst_for_bwd};
    case Activation::elu: return {algorithm::eltwise_elu, algorithm::eltwise_elu_use_dst_for_bwd, a.alpha};
    case Activation::exponential: return {algorithm::eltwise_exp, algorithm::eltwise_exp_use_dst_for_bwd};
    case Activation::gelu: return {algorithm::eltwise_gelu_erf, algorithm::eltwise_gelu_erf};
    case Activation::silu: return {algorithm::eltwise_swish, algorithm::eltwise_swish, 1};
    case Activation::mish: return {algorithm::eltwise_mish, algorithm::eltwise_mish};
    case Activation::softplus: return {algorithm::eltwise_soft_relu, algorithm::eltwise_soft_relu};
    case Activation::hard_silu: return {algorithm::eltwise_hardswish, algorithm::eltwise_hardswish};
    default: return {};
  }
}

/// Softmax's or log_softmax's input gradient over each row of `columns`, from the output y:
/// softmax dx = y (dy - sum(dy y)), log_softmax dx = dy - exp(y) sum(dy). oneDNN 2.6 has kernels
/// for these on AVX-512 only (on AVX2 it runs `ref:any`); a row is two short passes either way.
/// diff_src may alias diff_dst.
void softmax_backward_rows(Activation::Kind kind, int64_t rows, int64_t columns, const float* dst,
                           const float* diff_dst, float* diff_src) {
#pragma omp parallel for schedule(static) if (rows * columns >= 16384)
  for (int64_t r = 0; r < rows; ++r) {
    const float* y = dst + r * columns;
    const float* dy = diff_dst + r * columns;
    float* dx = diff_src + r * columns;
    float sum = 0;
    if (kind == Activation::softmax) {
#pragma omp simd reduction(+ : sum)
      for (int64_t c = 0; c < columns; ++c) sum += dy[c] * y[c];
#pragma omp simd
      for (int64_t c = 0; c < columns; ++c) dx[c] = y[c] * (dy[c] - sum);
    } else {
#pragma omp simd reduction(+ : sum)
      for (int64_t c = 0; c < columns; ++c) sum += dy[c];
#pragma omp simd
      for (int64_t c = 0; c < columns; ++c) dx[c] = dy[c] - std::exp(y[c]) * sum;
    }
  }
}

/// tanh as TensorFlow computes it on CPUs (Eigen's 13/6 rational function of x clamped to
/// [-9, 9]; within 4e-7 of tanh): oneDNN 2.6's AVX2 tanh took 3.2 ns a value (LeNet's first
/// layer 5.4 ms forward with it, 1.4 without), this one vectorizes.
float rational_tanh(float x) {
  x = std::clamp(x, -9.0f, 9.0f);
  const float x2 = x * x;
  // Horner's rule written out: GCC vectorizes no loop with inner loops.
  float numerator = -2.76076847742355e-16f * x2 + 2.00018790482477e-13f;
  numerator = numerator * x2 - 8.60467152213735e-11f;
  numerator = numerator * x2 + 5.12229709037114e-08f;
  numerator = numerator * x2 + 1.48572235717979e-05f;
  numerator = numerator * x2 + 6.37261928875436e-04f;
  numerator = numerator * x2 + 4.89352455891786e-03f;
  float denominator = 1.19825839466702e-06f * x2 + 1.18534705686654e-04f;
  denominator = denominator * x2 + 2.26843463243900e-03f;
  denominator = denominator * x2 + 4.89352518554385e-03f;
  return x * numerator / denominator;
}

}  // namespace

bool runs_in_bfloat16(const Activation& activation) {
  return activation.kind == Activation::linear || eltwise_for(activation).algorithm != dnnl::algorithm::undef;
}

bool fusable_as_post_op(const Activation& activation) { return backward_from_output(activation); }

bool runs_faster_after_kernel(const Activation& activation, DType dtype) {
  if (activation.kind != Activation::tanh || dtype != DType::float32) return false;
  // oneDNN 2.6's AVX2 tanh took 3.2 ns a value, the rational one 0.47 (AMD EPYC): LeNet's
  // 6 -> 16 convolution forward 4.4 -> 2.3 ms per replica step of 256 (TENFOLD_PROFILE=1).
  return decided_once("oneDNN's tanh slower than Tenfold's", {}, [] {
    const int64_t count = 65536;  // a layer's output, or a chunk of one, in L2
    memory::desc data({1, count}, memory::data_type::f32, memory::format_tag::nc);
    dnnl::eltwise_forward::primitive_desc pd({dnnl::prop_kind::forward_training, dnnl::algorithm::eltwise_tanh, data},
                                             user_scratchpad_attr(), engine());
    BoundPrimitive onednn_tanh(dnnl::eltwise_forward(pd), pd, {{DNNL_ARG_SRC, data}, {DNNL_ARG_DST, data}});
    ActivationKernel tenfold_tanh(Activation::tanh, 1, count);
    auto values = allocate_aligned(data.get_size()), scratchpad = allocate_aligned(onednn_tanh.scratchpad_bytes());
    const std::vector<double> seconds = best_seconds_in_turns(
        {[&] { onednn_tanh.execute({values.get(), values.get()}, scratchpad.get()); },
         [&] { tenfold_tanh.forward(values.get(), values.get()); }},
        5);
    // Only a clear win: the two round differently, so close timings must not flip the choice.
    return seconds[0] > 2 * seconds[1];
  });
}

dnnl::post_ops activation_post_ops(const Activation& activation) {
  // The plain form: a post-op only computes forward (and Winograd's kernels refuse the
  // *_use_dst_for_bwd forms).
  dnnl::post_ops ops;
  if (activation.kind != Activation::linear && fusable_as_post_op(activation)) {
    const Eltwise eltwise = eltwise_for(activation);
    ops.append_eltwise(1.0f, eltwise.algorithm, eltwise.alpha, eltwise.beta);
  }
  return ops;
}

ActivationKernel::ActivationKernel(const Activation& activation, int64_t rows, int64_t columns,
                                   memory::data_type data_type)
    : activation_(activation), rows_(rows), columns_(columns), element_bytes_(memory::data_type_size(data_type)) {
  if (activation.kind == Activation::linear) return;
  memory::desc data({rows, columns}, data_type, memory::format_tag::nc);
  dnnl::primitive_attr attr = user_scratchpad_attr();
  const std::vector<std::pair<int, memory::desc>> forward_args = {{DNNL_ARG_SRC, data}, {DNNL_ARG_DST, data}};
  const Eltwise eltwise = eltwise_for(activation);
  check_argument(!is_softmax(activation) || data_type == memory::data_type::f32, "softmax runs in float32 only");
  if (activation.kind == Activation::softmax) {
    dnnl::softmax_forward::primitive_desc forward_pd({dnnl::prop_kind::forward_training, data, 1}, attr, engine());
    forward_ = BoundPrimitive(dnnl::softmax_forward(forward_pd), forward_pd, forward_args);
  } else if (activation.kind == Activation::log_softmax) {
    dnnl::logsoftmax_forward::primitive_desc forward_pd({dnnl::prop_kind::forward_training, data, 1}, attr, engine());
    forward_ = BoundPrimitive(dnnl::logsoftmax_forward(forward_pd), forward_pd, forward_args);
  } else if (eltwise.algorithm == dnnl::algorithm::undef) {
    plain_loop_ = true;  // selu, softsign, hard_sigmoid
    check_argument(data_type == memory::data_type::f32, "the plain-loop activations run in float32 only");
    return;
  } else {
    dnnl::eltwise_forward::primitive_desc forward_pd(
        {dnnl::prop_kind::forward_training, eltwise.training_algorithm, data, eltwise.alpha, eltwise.beta}, attr,
        engine());
    dnnl::eltwise_backward::primitive_desc backward_pd(
        {eltwise.training_algorithm, data, data, eltwise.alpha, eltwise.beta}, attr, engine(), forward_pd);
    own_tanh_forward_ = activation.kind == Activation::tanh && data_type == memory::data_type::f32;
    if (!own_tanh_forward_) forward_ = BoundPrimitive(dnnl::eltwise_forward(forward_pd), forward_pd, forward_args);
    backward_ = BoundPrimitive(dnnl::eltwise_backward(backward_pd), backward_pd,
        {{eltwise.uses_dst() ? DNNL_ARG_DST : DNNL_ARG_SRC, data}, {DNNL_ARG_DIFF_DST, data},
         {DNNL_ARG_DIFF_SRC, data}});
  }
  scratchpad_ = allocate_aligned(std::max(forward_.scratchpad_bytes(), backward_.scratchpad_bytes()));
}

void ActivationKernel::forward(const void* src, void* dst) {
  if (activation_.kind == Activation::linear) {
    if (src != dst) std::memcpy(dst, src, static_cast<size_t>(count()) * element_bytes_);
  } else if (plain_loop_) {
    const float* in = static_cast<const float*>(src);
    float* out = static_cast<float*>(dst);
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < count(); ++i) out[i] = reference::activate(activation_, in[i]);
  } else if (own_tanh_forward_) {
    const float* in = static_cast<const float*>(src);
    float* out = static_cast<float*>(dst);
    const int64_t n = count();
#pragma omp parallel for simd schedule(static) if (n >= 16384)
    for (int64_t i = 0; i < n; ++i) out[i] = rational_tanh(in[i]);
  } else {
    forward_.execute({src, dst}, scratchpad_.get());
  }
}

void ActivationKernel::backward(const void* src, const void* dst, const void* diff_dst, void* diff_src) {
  if (activation_.kind == Activation::linear) {
    if (diff_src != diff_dst) std::memcpy(diff_src, diff_dst, static_cast<size_t>(count()) * element_bytes_);
  } else if (plain_loop_) {
    const float* in = static_cast<const float*>(src);
    const float* diff_out = static_cast<const float*>(diff_dst);
    float* diff_in = static_cast<float*>(diff_src);
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < count(); ++i) diff_in[i] = diff_out[i] * reference::derivative(activation_, in[i]);
  } else if (is_softmax(activation_)) {
    softmax_backward_rows(activation_.kind, rows_, columns_, static_cast<const float*>(dst),
                          static_cast<const float*>(diff_dst), static_cast<float*>(diff_src));
  } else {
    const bool from_output = eltwise_for(activation_).uses_dst();
    check_argument(from_output || src != nullptr, "this activation's backward needs its input");
    backward_.execute({from_output ? dst : src, diff_dst, diff_src}, scratchpad_.get());
  }
}

std::vector<std::string> ActivationKernel::implementations() const {
  if (plain_loop_) return {"forward tenfold:elementwise", "backward tenfold:elementwise"};
  if (own_tanh_forward_) return {"forward tenfold:rational_tanh", "backward " + backward_.implementation()};
  if (forward_.empty()) return {};
  if (is_softmax(activation_)) return {"forward " + forward_.implementation(), "backward tenfold:softmax_rows"};
  return {"forward " + forward_.implementation(), "backward " + backward_.implementation()};
}

}  // namespace tenfold::kernels::onednn
