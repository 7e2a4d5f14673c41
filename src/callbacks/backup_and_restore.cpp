#include "callbacks/backup_and_restore.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "core/error.h"
#include "core/random.h"
#include "io/model_file.h"

namespace tenfold::callbacks {

namespace fs = std::filesystem;

namespace {
// Backups kept: the newest, and the one before it in case the newest is damaged.
constexpr size_t backups_kept = 2;
}  // namespace

BackupAndRestore::BackupAndRestore(std::string backup_dir, int64_t save_freq, bool delete_checkpoint)
    : backup_dir_(std::move(backup_dir)), save_freq_(save_freq), delete_checkpoint_(delete_checkpoint) {
  check_argument(!backup_dir_.empty(), "BackupAndRestore needs a backup directory");
  check_argument(save_freq_ >= 0, "save_freq must be 0 (every epoch) or a number of batches, got " +
                                      std::to_string(save_freq_));
}

std::vector<std::string> BackupAndRestore::backups() const {
  std::vector<std::string> found;
  if (!fs::is_directory(backup_dir_)) return found;
  for (const auto& entry : fs::directory_iterator(backup_dir_)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("backup-", 0) == 0 && entry.path().extension() == ".h5") found.push_back(entry.path().string());
  }
  std::sort(found.rbegin(), found.rend());  // zero-padded counts: newest first
  return found;
}

void BackupAndRestore::on_train_begin() {
  const bool chief = model().strategy().is_chief();
  auto warn = [&](const std::string& path, const char* why) {
    if (chief) std::fprintf(stderr, "WARNING: backup %s cannot be restored (%s); trying the previous one\n", path.c_str(), why);
  };
  for (const std::string& path : backups()) {
    try {
      nlohmann::json state = io::restore_model(model(), path);
      if (!state.is_object() || !state.contains("random_state") || !state.contains("epoch") || !state.contains("batch")) {
        throw Error(ErrorCode::data_loss, path + " holds no training position");
      }
      global_random().set_state(state.at("random_state").get<uint64_t>());
      models::TrainingPosition position{state.at("epoch").get<int>(), state.at("batch").get<int64_t>()};
      model().set_start_position(position);
      if (chief) {
        std::printf("Restored %s: resuming at epoch %d, batch %lld (%lld batches applied)\n", path.c_str(),
                    position.epoch + 1, static_cast<long long>(position.batch),
                    static_cast<long long>(model().optimizer()->iterations()));
      }
      return;
    } catch (const Error& error) {
      warn(path, error.what());
    } catch (const nlohmann::json::exception& error) {
      warn(path, error.what());
    }
  }
}

void BackupAndRestore::save(int epoch, int64_t batch) {
  if (!model().strategy().is_chief()) return;
  fs::create_directories(backup_dir_);
  int64_t applied = model().optimizer()->iterations();
  char name[64];
  std::snprintf(name, sizeof name, "backup-%012lld.h5", static_cast<long long>(applied));
  nlohmann::json state = {{"epoch", epoch}, {"batch", batch}, {"iterations", applied},
                          {"random_state", global_random().state()}};
  io::save_model(model(), (fs::path(backup_dir_) / name).string(), state);
  std::vector<std::string> all = backups();
  for (size_t i = backups_kept; i < all.size(); ++i) fs::remove(all[i]);
}

void BackupAndRestore::on_train_batch_end(int64_t batch, const Logs&) {
  if (save_freq_ > 0 && (model().optimizer()->iterations() % save_freq_) == 0) save(epoch_, batch + 1);
}

void BackupAndRestore::on_epoch_end(int epoch, const Logs&) {
  if (save_freq_ == 0) save(epoch + 1, 0);
}

void BackupAndRestore::on_train_end(const Logs&) {
  if (!delete_checkpoint_ || !model().strategy().is_chief()) return;
  for (const std::string& path : backups()) fs::remove(path);
}

}  // namespace tenfold::callbacks
