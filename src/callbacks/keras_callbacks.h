#pragma once
// The everyday keras.callbacks, with Keras' arguments, defaults and messages. (Backups for
// resuming a killed run: backup_and_restore.h.)
#include <fstream>
#include <functional>
#include <optional>
#include <string>

#include "callbacks/callback.h"
#include "core/tensor.h"

namespace tenfold::callbacks {

/// "min", "max" or "auto" (max when the monitored name holds "acc" or "auc", else min).
bool monitor_improves_upward(const std::string& monitor, const std::string& mode);

/// Saves the model (Keras .h5) or its weights (.weights.h5) at the end of every epoch, or
/// only when `monitor` improved (save_best_only). The path may hold Keras placeholders:
/// "model-{epoch:02d}-{val_loss:.2f}.h5". Worker 0 alone writes.
class ModelCheckpoint : public Callback {
 public:
  struct Options {
    std::string monitor = "val_loss";
    bool save_best_only = false;
    bool save_weights_only = false;
    std::string mode = "auto";
    int verbose = 0;
  };
  ModelCheckpoint(std::string filepath, Options options);
  explicit ModelCheckpoint(std::string filepath) : ModelCheckpoint(std::move(filepath), Options{}) {}
  void on_epoch_end(int epoch, const Logs& logs) override;

 private:
  std::string filepath_;
  Options options_;
  std::optional<double> best_;
};

/// Stops training when `monitor` has not improved by min_delta for `patience` epochs;
/// optionally puts back the best epoch's weights.
class EarlyStopping : public Callback {
 public:
  struct Options {
    std::string monitor = "val_loss";
    double min_delta = 0;
    int patience = 0;
    std::string mode = "auto";
    bool restore_best_weights = false;
    int verbose = 0;
  };
  explicit EarlyStopping(Options options) : options_(std::move(options)) {}
  EarlyStopping() : EarlyStopping(Options{}) {}
  void on_train_begin() override;
  void on_epoch_end(int epoch, const Logs& logs) override;
  void on_train_end(const Logs& logs) override;
  /// The epoch training stopped at (0: it did not stop early).
  int stopped_epoch() const { return stopped_epoch_; }

 private:
  Options options_;
  std::optional<double> best_;
  int wait_ = 0, stopped_epoch_ = 0;
  std::vector<Tensor> best_weights_;
};

/// Stops training at the first batch whose loss is NaN or infinite.
class TerminateOnNaN : public Callback {
 public:
  void on_train_batch_end(int64_t batch, const Logs& logs) override;
};

/// Appends each epoch's logs to a CSV file: "epoch,<sorted log names>" then one row per epoch
/// (NA where an epoch lacks a column; with append, the existing header's columns).
class CSVLogger : public Callback {
 public:
  explicit CSVLogger(std::string filename, char separator = ',', bool append = false)
      : filename_(std::move(filename)), separator_(separator), append_(append) {}
  void on_train_begin() override;
  void on_epoch_end(int epoch, const Logs& logs) override;
  void on_train_end(const Logs&) override { file_.close(); }

 private:
  std::string filename_;
  char separator_;
  bool append_;
  std::ofstream file_;
  std::vector<std::string> keys_;  // the columns after "epoch"
  bool header_written_ = false;
};

/// Sets the learning rate at each epoch's start to schedule(epoch, current learning rate).
class LearningRateScheduler : public Callback {
 public:
  explicit LearningRateScheduler(std::function<double(int epoch, double learning_rate)> schedule)
      : schedule_(std::move(schedule)) {}
  void on_epoch_begin(int epoch) override;

 private:
  std::function<double(int, double)> schedule_;
};

/// Multiplies the learning rate by `factor` when `monitor` stalls for `patience` epochs.
class ReduceLROnPlateau : public Callback {
 public:
  struct Options {
    std::string monitor = "val_loss";
    double factor = 0.1;
    int patience = 10;
    std::string mode = "auto";
    double min_delta = 1e-4;
    int cooldown = 0;
    double min_lr = 0;
  };
  explicit ReduceLROnPlateau(Options options);
  ReduceLROnPlateau() : ReduceLROnPlateau(Options{}) {}
  void on_epoch_end(int epoch, const Logs& logs) override;

 private:
  Options options_;
  std::optional<double> best_;
  int wait_ = 0, cooldown_left_ = 0;
};

}  // namespace tenfold::callbacks
