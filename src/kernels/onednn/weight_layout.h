#pragma once
// A weight stored in a oneDNN-chosen layout, converted to and from Keras' layout by reorders.
#include "kernels/onednn/engine.h"
#include "layers/variable.h"

namespace tenfold::kernels::onednn {

/// The batch a convolution layer's primitives are made for at build, to pick its weights'
/// layout once: every batch size then runs with that layout.
inline constexpr int64_t weight_layout_batch = 256;

class OnednnWeightLayout : public WeightLayout {
 public:
  OnednnWeightLayout(memory::desc keras, memory::desc native)
      : keras_(std::move(keras)), native_(std::move(native)) {}
  const memory::desc& native_desc() const { return native_; }
  int64_t native_elements() const override {
    return static_cast<int64_t>(native_.get_size() / sizeof(float));
  }
  void from_keras(const float* keras, float* native) const override {
    reorder(keras_, keras, native_, native);
  }
  void to_keras(const float* native, float* keras) const override {
    reorder(native_, native, keras_, keras);
  }

 private:
  memory::desc keras_, native_;
};

}  // namespace tenfold::kernels::onednn
