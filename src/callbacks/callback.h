#pragma once
// keras.callbacks.Callback: hooks fit calls as training goes. A callback sees the model it
// trains (model()), may stop training (model().stop_training()), and, in on_train_begin, may
// move where training starts (BackupAndRestore does, to resume).
#include <cstdint>

#include "models/progress_bar.h"

namespace tenfold::models {
class Model;
}

namespace tenfold::callbacks {

using models::Logs;

class Callback {
 public:
  virtual ~Callback() = default;
  void set_model(models::Model* model) { model_ = model; }
  models::Model& model() const { return *model_; }

  virtual void on_train_begin() {}
  virtual void on_train_end(const Logs&) {}
  virtual void on_epoch_begin(int /*epoch*/) {}
  /// `logs` holds the epoch's loss and metrics, and val_ ones after validation.
  virtual void on_epoch_end(int /*epoch*/, const Logs&) {}
  /// `batch` counts from 0 within the epoch.
  virtual void on_train_batch_begin(int64_t /*batch*/) {}
  virtual void on_train_batch_end(int64_t /*batch*/, const Logs&) {}

 private:
  models::Model* model_ = nullptr;
};

/// The value named `name` in logs, if present.
inline const double* find_log(const Logs& logs, const std::string& name) {
  for (const auto& [key, value] : logs) {
    if (key == name) return &value;
  }
  return nullptr;
}

}  // namespace tenfold::callbacks
