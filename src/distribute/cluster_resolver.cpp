#include "distribute/cluster_resolver.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "core/error.h"
#include "distribute/mpi_communicator.h"

namespace tenfold::distribute {

namespace {

int environment_integer(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value ? std::atoi(value) : fallback;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t begin = 0;
  while (true) {
    size_t end = text.find(separator, begin);
    parts.push_back(text.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
    if (end == std::string::npos) return parts;
    begin = end + 1;
  }
}

WorkerAddress parse_address(std::string text) {
  const std::string usage = "; write workers as host:port,host:port (a grpc:// prefix is accepted)";
  if (text.rfind("grpc://", 0) == 0) text = text.substr(7);
  size_t colon = text.rfind(':');
  if (text.empty() || colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
    throw Error(ErrorCode::invalid_argument, "worker address '" + text + "' has no host:port" + usage);
  }
  std::string port_text = text.substr(colon + 1);
  char* end = nullptr;
  long port = std::strtol(port_text.c_str(), &end, 10);
  if (*end != '\0' || port < 1 || port > 65535) {
    throw Error(ErrorCode::invalid_argument,
                "worker address '" + text + "' has port '" + port_text + "', not 1..65535" + usage);
  }
  return {text.substr(0, colon), int(port)};
}

/// Connects to `address` within the deadline; an empty string on success, else why not.
std::string try_connect(const WorkerAddress& address, std::chrono::steady_clock::time_point deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int status = getaddrinfo(address.host.c_str(), std::to_string(address.port).c_str(), &hints, &found);
  if (status != 0) return std::string("host name does not resolve: ") + gai_strerror(status);
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> addresses(found, freeaddrinfo);
  std::string reason = "no address";
  for (addrinfo* candidate = found; candidate; candidate = candidate->ai_next) {
    int socket_fd = socket(candidate->ai_family, candidate->ai_socktype | SOCK_NONBLOCK, 0);
    if (socket_fd < 0) continue;
    int result = ::connect(socket_fd, candidate->ai_addr, candidate->ai_addrlen);
    if (result != 0 && errno == EINPROGRESS) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd waiting{socket_fd, POLLOUT, 0};
      int ready = poll(&waiting, 1, int(std::max<int64_t>(0, left.count())));
      if (ready == 0) {
        reason = "no answer before the timeout";
      } else {
        int error = 0;
        socklen_t length = sizeof error;
        getsockopt(socket_fd, SOL_SOCKET, SO_ERROR, &error, &length);
        result = error == 0 ? 0 : -1;
        if (error) reason = std::strerror(error);
      }
    } else if (result != 0) {
      reason = std::strerror(errno);
    }
    close(socket_fd);
    if (result == 0) return "";
  }
  return reason;
}

}  // namespace

ClusterResolver ClusterResolver::local() { return ClusterResolver(); }

ClusterResolver ClusterResolver::from_environment() {
  ClusterResolver resolver;
  if (!distribute::launched_by_mpi()) return resolver;
  resolver.launched_by_mpi_ = true;
  if (std::getenv("OMPI_COMM_WORLD_SIZE")) {
    resolver.num_workers_ = environment_integer("OMPI_COMM_WORLD_SIZE", 1);
    resolver.task_index_ = environment_integer("OMPI_COMM_WORLD_RANK", 0);
  } else {
    resolver.num_workers_ = environment_integer("SLURM_NTASKS", 1);
    resolver.task_index_ = environment_integer("SLURM_PROCID", 0);
    if (const char* nodes = std::getenv("SLURM_JOB_NODELIST")) {
      for (const std::string& host : expand_slurm_nodelist(nodes)) resolver.workers_.push_back({host, 0});
    }
  }
  return resolver;
}

ClusterResolver ClusterResolver::from_workers(const std::string& addresses, int task_index) {
  ClusterResolver resolver;
  for (const std::string& part : split(addresses, ',')) {
    if (!part.empty()) resolver.workers_.push_back(parse_address(part));
  }
  check_argument(!resolver.workers_.empty(), "no worker addresses in '" + addresses +
                                                 "'; write them as host:port,host:port");
  resolver.num_workers_ = int(resolver.workers_.size());
  check_argument(task_index >= 0 && task_index < resolver.num_workers_,
                 "task index " + std::to_string(task_index) + " is not one of the " +
                     std::to_string(resolver.num_workers_) + " workers");
  resolver.task_index_ = task_index;
  return resolver;
}

void ClusterResolver::connect(double timeout_seconds) const {
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                      std::chrono::duration<double>(timeout_seconds));
  for (const WorkerAddress& worker : workers_) {
    if (worker.port == 0) continue;  // a host from Slurm's node list: mpirun/srun reach it
    std::string failure = try_connect(worker, deadline);
    if (!failure.empty()) {
      throw Error(ErrorCode::unavailable,
                  "cannot reach worker " + worker.to_string() + " (" + failure + ") within " +
                      std::to_string(int(timeout_seconds)) +
                      " s; check that the worker is running and listening on that port, that the "
                      "address is right, and that no firewall blocks it");
    }
  }
}

std::vector<std::string> expand_slurm_nodelist(const std::string& nodelist) {
  std::vector<std::string> hosts;
  size_t i = 0;
  while (i < nodelist.size()) {
    size_t bracket = nodelist.find('[', i), comma = nodelist.find(',', i);
    if (bracket == std::string::npos || (comma != std::string::npos && comma < bracket)) {
      std::string host = nodelist.substr(i, comma == std::string::npos ? std::string::npos : comma - i);
      if (!host.empty()) hosts.push_back(host);
      if (comma == std::string::npos) break;
      i = comma + 1;
      continue;
    }
    size_t close = nodelist.find(']', bracket);
    check_argument(close != std::string::npos, "unbalanced [ in Slurm node list '" + nodelist + "'");
    std::string prefix = nodelist.substr(i, bracket - i);
    for (const std::string& range : split(nodelist.substr(bracket + 1, close - bracket - 1), ',')) {
      size_t dash = range.find('-');
      std::string first = range.substr(0, dash);
      std::string last = dash == std::string::npos ? first : range.substr(dash + 1);
      for (long n = std::atol(first.c_str()); n <= std::atol(last.c_str()); ++n) {
        std::string number = std::to_string(n);
        if (number.size() < first.size()) number.insert(0, first.size() - number.size(), '0');
        hosts.push_back(prefix + number);
      }
    }
    i = close + 1;
    if (i < nodelist.size() && nodelist[i] == ',') ++i;
  }
  return hosts;
}

}  // namespace tenfold::distribute
