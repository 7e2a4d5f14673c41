#include "models/history.h"

namespace tenfold::models {

nlohmann::json History::to_json() const { return {{"epoch", epoch}, {"history", history}}; }

}  // namespace tenfold::models
