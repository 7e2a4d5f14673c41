#pragma once
// The tenfold commands, one file each; each returns the process's exit code.
#include <string>
#include <vector>

namespace tenfold::cli {

int devices(const std::vector<std::string>& args);
int train(const std::vector<std::string>& args);

}  // namespace tenfold::cli
