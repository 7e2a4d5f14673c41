#include "kernels/onednn/engine.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <sstream>

#include "core/error.h"
#include "kernels/bfloat16.h"

namespace tenfold::kernels::onednn {

const dnnl::engine& engine() {
  static const dnnl::engine cpu(dnnl::engine::kind::cpu, 0);
  return cpu;
}

dnnl::stream& stream() {
  thread_local dnnl::stream thread_stream(engine());
  return thread_stream;
}

memory::desc f32_desc(const memory::dims& dims, memory::format_tag tag) {
  return memory::desc(dims, memory::data_type::f32, tag);
}

memory::data_type data_type_of(DType dtype) {
  switch (dtype) {
    case DType::float32: return memory::data_type::f32;
    case DType::bfloat16: return memory::data_type::bf16;
    default: throw Error(ErrorCode::internal, std::string("oneDNN kernels take float32 or bfloat16, not ") + dtype_name(dtype));
  }
}

memory unbound(const memory::desc& desc) { return memory(desc, engine(), DNNL_MEMORY_NONE); }

dnnl::primitive_attr user_scratchpad_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

namespace {

ReferenceKernelPolicy policy_from_environment() {
  const char* value = std::getenv("TENFOLD_REFERENCE_KERNELS");
  return value != nullptr && std::string(value) == "error" ? ReferenceKernelPolicy::error
                                                           : ReferenceKernelPolicy::warn;
}

std::atomic<ReferenceKernelPolicy> reference_kernel_policy{policy_from_environment()};
thread_local std::string compiling_layer;

std::string dims_string(const memory::desc& desc) {
  std::ostringstream text;
  const char* separator = "";
  for (memory::dim d : desc.dims()) {
    text << separator << d;
    separator = "x";
  }
  return desc.dims().empty() ? "-" : text.str();
}

const char* kind_name(dnnl::primitive::kind kind) {
  switch (kind) {
    case dnnl::primitive::kind::convolution: return "convolution";
    case dnnl::primitive::kind::inner_product: return "inner_product";
    case dnnl::primitive::kind::pooling: return "pooling";
    case dnnl::primitive::kind::eltwise: return "eltwise";
    case dnnl::primitive::kind::softmax: return "softmax";
    case dnnl::primitive::kind::reorder: return "reorder";
    default: return "primitive";
  }
}

const char* propagation_name(const dnnl::primitive_desc_base& pd) {
  if (pd.get_kind() == dnnl::primitive::kind::reorder) return "";
  dnnl_prop_kind_t kind = dnnl_prop_kind_undef;
  dnnl_primitive_desc_query(pd.get(), dnnl_query_prop_kind, 0, &kind);
  switch (kind) {
    case dnnl_forward_training:
    case dnnl_forward_inference: return " forward";
    case dnnl_backward_data: return " backward-data";
    case dnnl_backward_weights: return " backward-weights";
    default: return " backward";
  }
}

/// Refuses or reports a reference implementation, naming the layer, the primitive and shapes.
void check_not_reference(const dnnl::primitive_desc_base& pd, const std::string& implementation) {
  if (!implementation.starts_with("ref")) return;
  std::ostringstream message;
  message << "oneDNN runs its reference (very slow) implementation '" << implementation
          << "' for the " << kind_name(pd.get_kind()) << propagation_name(pd);
  if (!compiling_layer.empty()) message << " of layer '" << compiling_layer << "'";
  // Backward primitives have diff_src and diff_dst where forward ones have src and dst.
  auto either = [](const memory::desc& a, const memory::desc& b) { return a.is_zero() ? b : a; };
  message << " (src " << dims_string(either(pd.src_desc(), pd.diff_src_desc())) << ", weights "
          << dims_string(either(pd.weights_desc(), pd.diff_weights_desc())) << ", dst "
          << dims_string(either(pd.dst_desc(), pd.diff_dst_desc()))
          << "); this is a Tenfold bug: please report it with this line";
  if (reference_kernel_policy == ReferenceKernelPolicy::error) {
    throw Error(ErrorCode::internal, message.str());
  }
  static std::mutex mutex;
  static std::set<std::string> reported;
  std::lock_guard<std::mutex> lock(mutex);
  if (reported.insert(message.str()).second) std::fprintf(stderr, "WARNING: %s\n", message.str().c_str());
}

}  // namespace

void set_reference_kernel_policy(ReferenceKernelPolicy policy) { reference_kernel_policy = policy; }

CompilingLayer::CompilingLayer(const std::string& name) : previous_(compiling_layer) {
  compiling_layer = name;
}

CompilingLayer::~CompilingLayer() { compiling_layer = previous_; }

BoundPrimitive::BoundPrimitive(dnnl::primitive primitive, const dnnl::primitive_desc_base& pd,
                               const std::vector<std::pair<int, memory::desc>>& args)
    : primitive_(std::move(primitive)), implementation_(pd.impl_info_str()) {
  check_not_reference(pd, implementation_);
  memory::desc scratchpad = pd.scratchpad_desc();
  scratchpad_bytes_ = scratchpad.get_size();
  for (const auto& [argument, desc] : args) {
    order_.push_back(argument);
    arguments_.emplace(argument, unbound(desc));
  }
  if (scratchpad_bytes_ > 0) arguments_.emplace(DNNL_ARG_SCRATCHPAD, unbound(scratchpad));
}

void BoundPrimitive::execute(std::initializer_list<const void*> pointers, void* scratchpad) {
  if (pointers.size() != order_.size()) {
    throw Error(ErrorCode::internal, "primitive bound with " + std::to_string(order_.size()) +
                                         " arguments executed with " +
                                         std::to_string(pointers.size()));
  }
  size_t i = 0;
  for (const void* pointer : pointers) {
    arguments_.at(order_[i++]).set_data_handle(const_cast<void*>(pointer));
  }
  if (scratchpad_bytes_ > 0) arguments_.at(DNNL_ARG_SCRATCHPAD).set_data_handle(scratchpad);
  primitive_.execute(stream(), arguments_);
  stream().wait();
}

WeightsForPrimitive::WeightsForPrimitive(const memory::desc& stored, const memory::desc& picked,
                                         bool round_to_bfloat16)
    : rounds_(round_to_bfloat16) {
  check_argument(!rounds_ || picked.data_type() == memory::data_type::f32, "only float32 weights are rounded");
  if (stored == picked && !rounds_) return;
  dnnl::reorder::primitive_desc pd(engine(), stored, engine(), picked);
  reorder_ = BoundPrimitive(dnnl::reorder(pd), pd, {{DNNL_ARG_FROM, stored}, {DNNL_ARG_TO, picked}});
  copy_ = allocate_aligned(picked.get_size());
  copy_floats_ = int64_t(picked.get_size() / sizeof(float));
}

const void* WeightsForPrimitive::operator()(const float* stored, bool reuse) {
  if (reorder_.empty()) return stored;
  if (reuse && copied_) return copy_.get();
  copied_ = true;
  reorder_.execute({stored, copy_.get()}, nullptr);
  if (rounds_) {
    auto* values = reinterpret_cast<float*>(copy_.get());
    kernels::round_to_bfloat16(values, values, copy_floats_);
  }
  return copy_.get();
}

GradientsInKerasLayout::GradientsInKerasLayout(const memory::desc& keras, const memory::desc& stored)
    : values_(keras.get_size() / sizeof(float)) {
  if (stored == keras) return;
  dnnl::reorder::primitive_desc pd(engine(), keras, engine(), stored);
  to_stored_ = BoundPrimitive(dnnl::reorder(pd), pd, {{DNNL_ARG_FROM, keras}, {DNNL_ARG_TO, stored}});
}

void GradientsInKerasLayout::write(float* stored) {
  if (to_stored_.empty()) {
    std::copy(values_.begin(), values_.end(), stored);
  } else {
    to_stored_.execute({values_.data(), stored}, nullptr);
  }
}

void reorder(const memory::desc& from_desc, const void* from, const memory::desc& to_desc,
             void* to) {
  memory source(from_desc, engine(), const_cast<void*>(from));
  memory destination(to_desc, engine(), to);
  dnnl::reorder(source, destination).execute(stream(), source, destination);
  stream().wait();
}

}  // namespace tenfold::kernels::onednn
