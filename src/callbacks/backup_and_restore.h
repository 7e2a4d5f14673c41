#pragma once
// keras.callbacks.BackupAndRestore: training that survives being killed. Backups are written
// to `backup_dir` at the end of every epoch (or every `save_freq` batches); a fit that starts
// with backups there resumes from the newest readable one: weights, optimizer state, epoch,
// batch and the global random state, so the resumed run redoes nothing and skips nothing
// (the dataset must give the same batches for the same epoch: a seeded shuffle does).
//
// Each backup is one crash-safe file, backup-<batches applied>.h5 (Keras' .h5 plus the
// training position); the previous one is kept until a newer one is complete, and a damaged
// newest backup falls back to the previous one with a warning. In multi-worker training
// worker 0 writes, every worker restores.
#include <string>

#include "callbacks/callback.h"

namespace tenfold::callbacks {

class BackupAndRestore : public Callback {
 public:
  /// save_freq 0: every epoch (Keras' "epoch"); N > 0: every N batches. delete_checkpoint:
  /// remove the backups when training ends.
  explicit BackupAndRestore(std::string backup_dir, int64_t save_freq = 0, bool delete_checkpoint = true);

  void on_train_begin() override;
  void on_epoch_begin(int epoch) override { epoch_ = epoch; }
  void on_train_batch_end(int64_t batch, const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;
  void on_train_end(const Logs& logs) override;

 private:
  /// Writes a backup from which training continues at (epoch, batch).
  void save(int epoch, int64_t batch);
  /// The backups in the directory, newest first.
  std::vector<std::string> backups() const;

  std::string backup_dir_;
  int64_t save_freq_;
  bool delete_checkpoint_;
  int epoch_ = 0;
};

}  // namespace tenfold::callbacks
