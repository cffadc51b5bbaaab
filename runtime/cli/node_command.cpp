#include "runtime/cli/node_command.hpp"

#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <optional>
#include <regex>
#include <sys/file.h>
#include <unistd.h>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/log/partition_log_actor.hpp"
#include "runtime/actor/actor_system_setup.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/actor/logging.hpp"
#include "runtime/storage/offset_checkpoint.hpp"

namespace capstan::cli {

namespace {

namespace fs = std::filesystem;

constexpr const char* recovery_checkpoint = "recovery-point-offset-checkpoint";
constexpr auto close_timeout = std::chrono::seconds(60);

// Holds an exclusive flock on <data-dir>/.lock for the life of the process, so a second node on
// the same directory is refused instead of corrupting it.
class data_dir_lock {
public:
  static std::optional<data_dir_lock> acquire(const fs::path& dir) {
    int fd = ::open((dir / ".lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    if (fd < 0) return std::nullopt;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      ::close(fd);
      return std::nullopt;
    }
    return data_dir_lock(fd);
  }
  data_dir_lock(data_dir_lock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  data_dir_lock& operator=(data_dir_lock&&) = delete;
  data_dir_lock(const data_dir_lock&) = delete;
  data_dir_lock& operator=(const data_dir_lock&) = delete;
  ~data_dir_lock() {
    if (fd_ >= 0) ::close(fd_);
  }

private:
  explicit data_dir_lock(int fd) : fd_(fd) {}
  int fd_;
};

// "orders-3" -> {"orders", 3}, as Kafka names partition directories.
std::optional<topic_partition> parse_partition_dir(const std::string& name) {
  static const std::regex pattern("^([a-zA-Z0-9._-]{1,249})-([0-9]{1,9})$");
  std::smatch m;
  if (!std::regex_match(name, m, pattern)) return std::nullopt;
  return topic_partition{m[1].str(), std::stoi(m[2].str())};
}

} // namespace

int run_node(const node_options& options) {
  // Logs go to stderr: stdout is kept for data.
  spdlog::set_default_logger(get_logger());
  spdlog::set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ [node " + std::to_string(options.node_id) + "] %v");
  if (auto s = set_log_level(options.log_level); !s) {
    spdlog::error("{}", s.err().to_string());
    return 2;
  }
  const fs::path data_dir = options.data_dir;
  std::error_code ec;
  fs::create_directories(data_dir, ec);
  if (ec) {
    spdlog::error("cannot create data dir {}: {}", data_dir.string(), ec.message());
    return 1;
  }
  auto lock = data_dir_lock::acquire(data_dir);
  if (!lock) {
    spdlog::error("data dir {} is in use by another capstan node (lock {}/.lock is held)",
                  data_dir.string(), data_dir.string());
    return 1;
  }

  // Block the stop signals before any thread starts so only sigwait below sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto recovery_points = read_offset_checkpoint(data_dir / recovery_checkpoint);
  if (!recovery_points) {
    spdlog::warn("{}; recovering every segment", recovery_points.err().to_string());
    recovery_points = offset_map{};
  }

  actor_config cfg;
  caf::actor_system sys{cfg};
  std::map<topic_partition, partition_log_actor> logs;
  for (const auto& entry : fs::directory_iterator(data_dir, ec)) {
    if (!entry.is_directory()) continue;
    auto tp = parse_partition_dir(entry.path().filename().string());
    if (!tp) {
      spdlog::warn("ignoring {}: not a topic-partition directory", entry.path().string());
      continue;
    }
    partition_log_options opts;
    opts.dir = entry.path();
    opts.log_name = tp->first + "-" + std::to_string(tp->second);
    if (auto it = recovery_points->find(*tp); it != recovery_points->end())
      opts.recovery_point = it->second;
    auto log = open_partition_log(sys, opts);
    if (!log) {
      spdlog::error("{}: cannot open: {}", opts.log_name, log.err().to_string());
      continue;
    }
    logs.emplace(*tp, *log);
  }
  spdlog::info("node {} serving {} partition logs from {}", options.node_id, logs.size(),
               fs::absolute(data_dir).string());
  spdlog::info("the client RPC, cluster and metrics listeners are not built yet; stop with Ctrl-C");

  int sig = 0;
  sigwait(&stop_signals, &sig);
  spdlog::info("signal {}: flushing and closing {} partition logs", sig, logs.size());

  offset_map points;
  int rc = 0;
  {
    caf::scoped_actor self{sys};
    for (const auto& [tp, log] : logs) {
      self->request(log, close_timeout, close_atom_v)
        .receive([&, tp = tp](offset point) { points[tp] = point; },
                 [&, tp = tp](caf::error& e) {
                   spdlog::error("{}-{}: close failed: {}", tp.first, tp.second, caf::to_string(e));
                   rc = 1;
                 });
    }
  }
  if (auto s = write_offset_checkpoint(data_dir / recovery_checkpoint, points); !s) {
    spdlog::error("{}", s.err().to_string());
    rc = 1;
  }
  spdlog::info("node {} stopped", options.node_id);
  return rc;
}

} // namespace capstan::cli
