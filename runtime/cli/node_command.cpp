#include "runtime/cli/node_command.hpp"

#include <csignal>
#include <ctime>
#include <limits>
#include <memory>
#include <optional>
#include <pthread.h>

#include <spdlog/spdlog.h>

#include "actors/node/controller_quorum.hpp"
#include "runtime/actor/logging.hpp"
#include "runtime/cli/exit_codes.hpp"
#include "runtime/cli/option_checks.hpp"
#include "runtime/storage/open_file_limit.hpp"

namespace capstan::cli {

namespace {

// What the flags said; a flag left out keeps the config file's value or the default.
struct node_flags {
  std::string config_file;
  int node_id = 1;
  std::string data_dir;
  std::string listen;
  std::string cluster_listen;
  std::string metrics_listen;
  std::string kafka_listen;
  std::string controller_quorum;
  std::string process_roles;
  std::string cluster_id;
  std::string log_level = "info";
  CLI::Option* node_id_opt = nullptr;
  CLI::Option* data_dir_opt = nullptr;
  CLI::Option* listen_opt = nullptr;
  CLI::Option* cluster_listen_opt = nullptr;
  CLI::Option* metrics_listen_opt = nullptr;
  CLI::Option* kafka_listen_opt = nullptr;
  CLI::Option* quorum_opt = nullptr;
  CLI::Option* roles_opt = nullptr;
  CLI::Option* cluster_id_opt = nullptr;
};

// Defaults, then the config file, then the flags given.
result<node_config> resolve(const node_flags& f) {
  node_config c;
  if (!f.config_file.empty()) {
    auto from_file = node_config::from_toml_file(f.config_file, c);
    if (!from_file) return from_file.err();
    c = std::move(*from_file);
  }
  // Each flag given sets its config key: DescribeConfigs shows it as STATIC_BROKER_CONFIG.
  auto given = [&c](const CLI::Option* opt, const char* key) {
    if (opt->count() == 0) return false;
    c.given_keys.insert(key);
    return true;
  };
  if (given(f.node_id_opt, "node.id")) c.node_id = f.node_id;
  if (given(f.data_dir_opt, "log.dirs")) c.data_dir = f.data_dir;
  if (given(f.listen_opt, "listeners")) c.listen = f.listen;
  if (given(f.cluster_listen_opt, "cluster.listeners")) c.cluster_listen = f.cluster_listen;
  if (given(f.metrics_listen_opt, "metrics.listeners")) c.metrics_listen = f.metrics_listen;
  if (given(f.kafka_listen_opt, "listeners")) c.kafka_listen = f.kafka_listen;
  if (given(f.quorum_opt, "controller.quorum.voters")) c.controller_quorum = f.controller_quorum;
  if (given(f.roles_opt, "process.roles")) c.process_roles = f.process_roles;
  if (given(f.cluster_id_opt, "cluster.id")) c.cluster_id = f.cluster_id;
  return c;
}

} // namespace

void add_node_command(CLI::App& app) {
  auto flags = std::make_shared<node_flags>();
  const node_config defaults;
  auto* cmd = app.add_subcommand("node", "Run a capstan node (by default a single-node cluster)");
  cmd->add_option("--config", flags->config_file,
                  "TOML file of broker configs with Kafka's names (docs/configuration.md); flags "
                  "override it")
    ->check(CLI::ExistingFile);
  flags->node_id_opt = cmd->add_option("--node-id", flags->node_id, "This node's id (node.id)")
                         ->default_val(defaults.node_id)
                         ->check(integer_in(0, std::numeric_limits<int32_t>::max()));
  flags->data_dir_opt =
    cmd->add_option("--data-dir", flags->data_dir,
                    "Directory holding the partition logs, checkpoints and meta.properties (log.dirs)")
      ->default_str(defaults.data_dir.string());
  flags->listen_opt = cmd->add_option("--listen", flags->listen,
                                      "HOST:PORT of the client RPC listener (listeners)")
                        ->default_str(defaults.listen)
                        ->check(listen_address_check());
  flags->cluster_listen_opt =
    cmd->add_option("--cluster-listen", flags->cluster_listen,
                    "HOST:PORT where other nodes reach this one (cluster.listeners)")
      ->default_str(defaults.cluster_listen)
      ->check(listen_address_check());
  flags->metrics_listen_opt =
    cmd->add_option("--metrics-listen", flags->metrics_listen,
                    "HOST:PORT of the Prometheus metrics endpoint (metrics.listeners)")
      ->default_str(defaults.metrics_listen)
      ->check(listen_address_check());
  flags->kafka_listen_opt =
    cmd->add_option("--kafka-listen", flags->kafka_listen,
                    "HOST:PORT of the Kafka wire protocol listener (listeners' PLAINTEXT entry); "
                    "\"\" for none")
      ->default_str(defaults.kafka_listen)
      ->check(CLI::Validator(
        [](std::string& text) -> std::string {
          if (text.empty()) return {};
          return listen_address_check()(text);
        },
        "HOST:PORT or \"\""));
  flags->quorum_opt =
      cmd->add_option("--controller-quorum", flags->controller_quorum,
                      "Controller voters as ID@HOST:PORT,... with each voter's cluster listener "
                      "(controller.quorum.voters); default: this node alone");
  flags->roles_opt =
      cmd->add_option("--process-roles", flags->process_roles,
                      "broker, or broker,controller (process.roles); default: broker,controller "
                      "for a node --controller-quorum names, broker for any other. "
                      "broker,controller on another node runs a controller quorum member that "
                      "`capstan cluster add-voter` can make a voter")
          ->check(CLI::Validator(
              [](std::string& text) -> std::string {
                auto roles = parse_process_roles(text);
                return roles ? std::string{} : roles.err().message;
              },
              "ROLES"));
  flags->cluster_id_opt = cmd->add_option(
      "--cluster-id", flags->cluster_id,
      "The cluster this node belongs to (cluster.id); needed to create the data dir "
      "of a multi-node quorum's node");
  cmd->add_option("--log-level", flags->log_level, "trace, debug, info, warn, error")
    ->capture_default_str()
    ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}));
  cmd->callback([flags] {
    // Before resolve: the defaults of max.broker.partitions and max.connections follow the limit.
    const auto limit = raise_open_file_limit();
    auto config = resolve(*flags);
    if (!config) {
      spdlog::set_default_logger(get_logger());
      spdlog::error("{}", config.err().to_string());
      throw CLI::RuntimeError(exit_code_for(config.err().code));
    }
    if (int rc = run_node(*config, flags->log_level, limit); rc != exit_ok)
      throw CLI::RuntimeError(rc);
  });
}

int run_node(const node_config& config, const std::string& log_level,
             const result<open_file_limit>& limit) {
  // Logs go to stderr: stdout is kept for data.
  spdlog::set_default_logger(get_logger());
  spdlog::set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ [node " + std::to_string(config.node_id) + "] %v");
  if (auto s = set_log_level(log_level); !s) {
    spdlog::error("{}", s.err().to_string());
    return exit_usage;
  }
  if (!limit)
    spdlog::warn("node {}: open-file limit unchanged: {}", config.node_id, limit.err().to_string());
  else if (limit->soft_after != limit->soft_before)
    spdlog::info("node {}: open-file limit (RLIMIT_NOFILE) raised from {} to its hard limit {}",
                 config.node_id, limit->soft_before, limit->soft_after);
  else
    spdlog::info("node {}: open-file limit (RLIMIT_NOFILE) {}", config.node_id, limit->soft_after);

  // Block the stop signals before any thread starts, so that only sigwait below sees them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto node = node::start(config);
  if (!node) {
    spdlog::error("cannot start: {}", node.err().to_string());
    return exit_code_for(node.err().code);
  }
  spdlog::info("node {} ready; stop with Ctrl-C or SIGTERM", config.node_id);
  // A stop signal, the cluster's refusal of this node, which would leave it serving nothing of
  // the cluster, or a failure of its Raft files: looked at every 200 ms.
  for (;;) {
    const timespec tick{0, 200'000'000};
    if (const int sig = sigtimedwait(&stop_signals, nullptr, &tick); sig > 0) {
      spdlog::info("signal {}: stopping", sig);
      break;
    }
    if (auto failed = (*node)->failure()) {
      spdlog::critical("node {} stopping: its Raft files cannot be written: {}", config.node_id,
                       failed->to_string());
      (*node)->stop();
      return exit_code_for(failed->code);
    }
    if (auto refused = (*node)->refusal()) {
      spdlog::error("node {} cannot join the cluster, stopping: {}", config.node_id,
                    refused->to_string());
      (*node)->stop();
      return exit_code_for(refused->code);
    }
  }
  (*node)->stop();
  return exit_ok;
}

} // namespace capstan::cli
