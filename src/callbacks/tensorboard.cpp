#include "callbacks/tensorboard.h"

#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "models/sequential.h"

namespace tenfold::callbacks {

namespace {

std::array<uint32_t, 256> make_crc32c_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (crc & 1 ? 0x82F63B78u : 0);  // reflected polynomial
    table[i] = crc;
  }
  return table;
}

/// TFRecord's masking, so that a CRC of data holding CRCs stays strong.
uint32_t masked_crc32c(const std::string& bytes) {
  uint32_t crc = crc32c(bytes.data(), bytes.size());
  return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u;
}

// Protocol buffer encoding, the few wire types an Event needs.
void append_varint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out += char((value & 0x7F) | 0x80);
    value >>= 7;
  }
  out += char(value);
}

template <typename T>
void append_little_endian(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));  // x86 and ARM are little-endian, as the format
  out.append(bytes, sizeof(T));
}

void append_length_delimited(std::string& out, int field, const std::string& bytes) {
  append_varint(out, uint64_t(field) << 3 | 2);
  append_varint(out, bytes.size());
  out += bytes;
}

/// Event {wall_time = 1 (double), step = 2 (int64)} with `rest` (further fields) after them.
std::string event(int64_t step, const std::string& rest) {
  std::string out;
  double wall_time =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  append_varint(out, 1 << 3 | 1);
  append_little_endian(out, wall_time);
  append_varint(out, 2 << 3 | 0);
  append_varint(out, uint64_t(step));
  return out + rest;
}

}  // namespace

uint32_t crc32c(const void* data, size_t size) {
  static const std::array<uint32_t, 256> table = make_crc32c_table();
  uint32_t crc = 0xFFFFFFFFu;
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) crc = table[(crc ^ bytes[i]) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

EventFileWriter::EventFileWriter(const std::string& directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  check_argument(!error, "cannot create the TensorBoard log directory " + directory + ": " + error.message());
  // TensorFlow's name: events.out.tfevents.<seconds>.<host>.<pid>.<counter>.v2
  static std::atomic<int> counter{0};
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(
                     std::chrono::system_clock::now().time_since_epoch()).count();
  path_ = (std::filesystem::path(directory) /
           ("events.out.tfevents." + std::to_string(seconds) + "." + host + "." +
            std::to_string(getpid()) + "." + std::to_string(counter++) + ".v2")).string();
  file_.open(path_, std::ios::binary);
  check_argument(bool(file_), "cannot write TensorBoard events to " + path_ + ": check the directory is writable");
  std::string version;
  append_length_delimited(version, 3, "brain.Event:2");  // file_version = 3
  write_event(event(0, version));
  flush();
}

void EventFileWriter::add_scalar(const std::string& tag, double value, int64_t step) {
  std::string summary_value;  // Summary.Value {tag = 1, simple_value = 2 (float)}
  append_length_delimited(summary_value, 1, tag);
  append_varint(summary_value, 2 << 3 | 5);
  append_little_endian(summary_value, float(value));
  std::string summary;  // Summary {repeated Value value = 1}
  append_length_delimited(summary, 1, summary_value);
  std::string rest;  // Event.summary = 5
  append_length_delimited(rest, 5, summary);
  write_event(event(step, rest));
}

void EventFileWriter::write_event(const std::string& data) {
  std::string length;
  append_little_endian(length, uint64_t(data.size()));
  std::string record = length;
  append_little_endian(record, masked_crc32c(length));
  record += data;
  append_little_endian(record, masked_crc32c(data));
  file_.write(record.data(), std::streamsize(record.size()));
}

void EventFileWriter::flush() {
  file_.flush();
  if (!file_) throw Error(ErrorCode::unavailable, "could not write TensorBoard events to " + path_);
}

void TensorBoard::on_train_begin() {
  if (!model().strategy().is_chief()) return;
  train_ = std::make_unique<EventFileWriter>((std::filesystem::path(log_dir_) / "train").string());
  validation_ = std::make_unique<EventFileWriter>((std::filesystem::path(log_dir_) / "validation").string());
}

void TensorBoard::on_train_batch_end(int64_t, const Logs& logs) {
  if (!train_ || update_freq_ <= 0) return;
  // The step is the optimizer's count, so a resumed run goes on where it stopped.
  int64_t step = model().optimizer()->iterations();
  if (step % update_freq_ != 0) return;
  for (const auto& [name, value] : logs) train_->add_scalar("batch_" + name, value, step);
  train_->flush();
}

void TensorBoard::on_epoch_end(int epoch, const Logs& logs) {
  if (!train_) return;
  for (const auto& [name, value] : logs) {
    if (name.starts_with("val_")) {
      validation_->add_scalar("epoch_" + name.substr(4), value, epoch);
    } else {
      train_->add_scalar("epoch_" + name, value, epoch);
    }
  }
  if (model().optimizer()) train_->add_scalar("epoch_learning_rate", model().optimizer()->learning_rate(), epoch);
  train_->flush();
  validation_->flush();
}

void TensorBoard::on_train_end(const Logs&) {
  train_.reset();
  validation_.reset();
}

}  // namespace tenfold::callbacks
