#pragma once
// keras.callbacks.History: per-epoch logs returned by fit.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tenfold::models {

struct History {
  std::vector<int> epoch;
  /// "loss", "accuracy", "val_loss", "val_accuracy", ... one value per epoch.
  std::map<std::string, std::vector<double>> history;

  /// {"epoch": [0, 1, ...], "history": {"loss": [...], ...}}
  nlohmann::json to_json() const;
};

}  // namespace tenfold::models
