#pragma once
// keras.callbacks.TensorBoard: scalars as TensorBoard event files, laid out as Keras writes
// them: log_dir/train and log_dir/validation, each with an events.out.tfevents.* file;
// "epoch_loss", "epoch_accuracy", ... at each epoch's end (step = epoch, from 0), the
// learning rate as "epoch_learning_rate", and with update_freq = N, "batch_loss", ... every N
// training steps (step = the optimizer's iterations). Only the chief worker writes.
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>

#include "callbacks/callback.h"

namespace tenfold::callbacks {

/// One events file: TFRecords (length, masked CRC-32C, data, masked CRC-32C), each holding an
/// Event protocol buffer; the first says the file version, the others hold one scalar each.
class EventFileWriter {
 public:
  /// Creates `directory` if needed, and a new events file in it.
  explicit EventFileWriter(const std::string& directory);
  void add_scalar(const std::string& tag, double value, int64_t step);
  void flush();
  const std::string& path() const { return path_; }

 private:
  void write_event(const std::string& event);
  std::string path_;
  std::ofstream file_;
};

class TensorBoard : public Callback {
 public:
  /// `update_freq`: 0 writes per epoch only (Keras' "epoch"); N > 0 also every N batches.
  explicit TensorBoard(std::string log_dir = "logs", int64_t update_freq = 0)
      : log_dir_(std::move(log_dir)), update_freq_(update_freq) {}
  void on_train_begin() override;
  void on_train_batch_end(int64_t batch, const Logs& logs) override;
  void on_epoch_end(int epoch, const Logs& logs) override;
  void on_train_end(const Logs&) override;

 private:
  std::string log_dir_;
  int64_t update_freq_;
  std::unique_ptr<EventFileWriter> train_, validation_;
};

/// CRC-32C (Castagnoli) of `size` bytes, as TFRecord checksums use it (unmasked).
uint32_t crc32c(const void* data, size_t size);

}  // namespace tenfold::callbacks
