#pragma once
// The oneDNN CPU engine, a stream per thread, and the small pieces every oneDNN kernel shares.
#include <oneapi/dnnl/dnnl.hpp>

#include <unordered_map>
#include <vector>

#include "core/tensor.h"

namespace tenfold::kernels::onednn {

using dnnl::memory;
using Arguments = std::unordered_map<int, memory>;

const dnnl::engine& engine();
/// The calling thread's stream: replicas run on their own threads.
dnnl::stream& stream();

/// A plain f32 memory descriptor.
memory::desc f32_desc(const memory::dims& dims, memory::format_tag tag);
/// Memory bound to no data; its handle is set before each execution.
memory unbound(const memory::desc& desc);
/// Primitive attributes with a user-managed scratchpad (see Scratchpad).
dnnl::primitive_attr user_scratchpad_attr();

/// A primitive with its argument memories built once; execute() only rebinds data pointers,
/// so a training step allocates nothing.
class BoundPrimitive {
 public:
  BoundPrimitive() = default;
  /// `scratchpad` is the primitive descriptor's scratchpad_desc().
  BoundPrimitive(dnnl::primitive primitive, const std::vector<std::pair<int, memory::desc>>& args,
                 const memory::desc& scratchpad);
  bool empty() const { return !primitive_; }
  size_t scratchpad_bytes() const { return scratchpad_bytes_; }
  /// `pointers` in the order of the constructor's `args`; `scratchpad` of scratchpad_bytes().
  void execute(std::initializer_list<const void*> pointers, void* scratchpad);

 private:
  dnnl::primitive primitive_;
  std::vector<int> order_;
  Arguments arguments_;
  size_t scratchpad_bytes_ = 0;
};

/// Reorders `count` floats between two layouts of the same logical tensor (save/load path).
void reorder(const memory::desc& from_desc, const void* from, const memory::desc& to_desc,
             void* to);

}  // namespace tenfold::kernels::onednn
