#include "kernels/onednn/engine.h"

#include "core/error.h"

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

memory unbound(const memory::desc& desc) { return memory(desc, engine(), DNNL_MEMORY_NONE); }

dnnl::primitive_attr user_scratchpad_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

BoundPrimitive::BoundPrimitive(dnnl::primitive primitive,
                               const std::vector<std::pair<int, memory::desc>>& args,
                               const memory::desc& scratchpad)
    : primitive_(std::move(primitive)), scratchpad_bytes_(scratchpad.get_size()) {
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

void reorder(const memory::desc& from_desc, const void* from, const memory::desc& to_desc,
             void* to) {
  memory source(from_desc, engine(), const_cast<void*>(from));
  memory destination(to_desc, engine(), to);
  dnnl::reorder(source, destination).execute(stream(), source, destination);
  stream().wait();
}

}  // namespace tenfold::kernels::onednn
