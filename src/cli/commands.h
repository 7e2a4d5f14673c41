#pragma once
// The tenfold commands, one file each; each returns the process's exit code.
#include <map>
#include <string>
#include <vector>

namespace tenfold::cli {

int devices(const std::vector<std::string>& args);
int train(const std::vector<std::string>& args);
int evaluate(const std::vector<std::string>& args);
int predict(const std::vector<std::string>& args);
int summary(const std::vector<std::string>& args);
int plot(const std::vector<std::string>& args);

/// "Test loss: 0.2512 - test accuracy: 0.9102": evaluate's results, loss first.
std::string test_results(const std::map<std::string, double>& results);

}  // namespace tenfold::cli
