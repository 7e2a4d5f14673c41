#pragma once
// The oneDNN CPU engine, a stream per thread, and the small pieces every oneDNN kernel shares.
#include <oneapi/dnnl/dnnl.hpp>

#include <string>
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
/// oneDNN's data type of a Tenfold dtype (float32 or bfloat16).
memory::data_type data_type_of(DType dtype);
/// Memory bound to no data; its handle is set before each execution.
memory unbound(const memory::desc& desc);
/// Primitive attributes with a user-managed scratchpad (see Scratchpad).
dnnl::primitive_attr user_scratchpad_attr();

/// What happens when oneDNN picks one of its reference implementations for a primitive.
/// They are correct but 100-10000x slower (a convolution's backward-data: 12 s instead of
/// 9 ms), so Tenfold must never run one: `warn` (the default) prints one warning per
/// primitive; `error` (tests; or TENFOLD_REFERENCE_KERNELS=error) throws.
enum class ReferenceKernelPolicy { warn, error };
void set_reference_kernel_policy(ReferenceKernelPolicy policy);

/// Names the layer whose kernels the current thread creates, for the reference-kernel message.
class CompilingLayer {
 public:
  explicit CompilingLayer(const std::string& name);
  ~CompilingLayer();
  CompilingLayer(const CompilingLayer&) = delete;
  CompilingLayer& operator=(const CompilingLayer&) = delete;

 private:
  std::string previous_;
};

/// A primitive with its argument memories built once; execute() only rebinds data pointers,
/// so a training step allocates nothing.
class BoundPrimitive {
 public:
  BoundPrimitive() = default;
  /// `primitive` made from `pd`, which gives the scratchpad size and the implementation name
  /// (checked against ReferenceKernelPolicy).
  BoundPrimitive(dnnl::primitive primitive, const dnnl::primitive_desc_base& pd,
                 const std::vector<std::pair<int, memory::desc>>& args);
  bool empty() const { return !primitive_; }
  size_t scratchpad_bytes() const { return scratchpad_bytes_; }
  /// The implementation oneDNN chose, e.g. "brg:avx512_core" or "jit:avx512_core".
  const std::string& implementation() const { return implementation_; }
  /// The memory descriptor bound to argument `arg` (DNNL_ARG_*).
  memory::desc arg_desc(int arg) const { return arguments_.at(arg).get_desc(); }
  /// `pointers` in the order of the constructor's `args`; `scratchpad` of scratchpad_bytes().
  void execute(std::initializer_list<const void*> pointers, void* scratchpad);

 private:
  dnnl::primitive primitive_;
  std::vector<int> order_;
  Arguments arguments_;
  size_t scratchpad_bytes_ = 0;
  std::string implementation_;
};

/// Weights handed to a primitive in the layout and data type it picked: stored weights as they
/// are when those agree, otherwise a private copy reordered (and converted to bfloat16) from
/// the stored float32 at each use (microseconds: weights are small next to activations).
class WeightsForPrimitive {
 public:
  WeightsForPrimitive() = default;
  /// With `round_to_bfloat16`, float32 weights are handed over rounded to bfloat16's precision
  /// (a float32 kernel standing in for a bfloat16 one).
  WeightsForPrimitive(const memory::desc& stored, const memory::desc& picked, bool round_to_bfloat16 = false);
  bool reorders() const { return !reorder_.empty(); }
  /// The weights to pass to the primitive. With `reuse`, the copy the previous call made, when
  /// there is one (the weights have not changed since: a later chunk of the same step).
  const void* operator()(const float* stored, bool reuse = false);

 private:
  BoundPrimitive reorder_;
  std::shared_ptr<std::byte> copy_;
  bool rounds_ = false;
  bool copied_ = false;
  int64_t copy_floats_ = 0;
};

/// Weight gradients a kernel of Tenfold's own sums in Keras' layout, handed over in the layout
/// the weights are stored in: copied when the two agree, else reordered.
class GradientsInKerasLayout {
 public:
  GradientsInKerasLayout() = default;
  GradientsInKerasLayout(const memory::desc& keras, const memory::desc& stored);
  std::vector<float>& values() { return values_; }
  /// Writes values() to `stored`, in the stored layout.
  void write(float* stored);

 private:
  std::vector<float> values_;
  BoundPrimitive to_stored_;  // none when the layouts agree
};

/// Reorders `count` floats between two layouts of the same logical tensor (save/load path).
void reorder(const memory::desc& from_desc, const void* from, const memory::desc& to_desc,
             void* to);

}  // namespace tenfold::kernels::onednn
