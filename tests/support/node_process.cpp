#include "tests/support/node_process.hpp"

#include <csignal>
#include <fstream>
#include <regex>
#include <sstream>

#include "tests/support/test_failure.hpp"

namespace capstan::test {

using namespace std::chrono_literals;

node_process::node_process(const temp_dir& dir, int id, node_process_options options)
    : dir_(dir.path()), id_(id), opts_(std::move(options)),
      data_(dir / ("node-" + std::to_string(id))),
      config_(dir / ("node-" + std::to_string(id) + ".toml")) {
  std::ofstream(config_) << opts_.settings;
}

void node_process::start() {
  ++starts_;
  std::vector<std::string> args{"node",
                                "--node-id",
                                std::to_string(id_),
                                "--data-dir",
                                data_.string(),
                                "--config",
                                config_.string(),
                                "--listen",
                                opts_.client_listen,
                                "--cluster-listen",
                                opts_.cluster_listen,
                                "--metrics-listen",
                                "127.0.0.1:0",
                                "--kafka-listen",
                                "127.0.0.1:0"};
  args.insert(args.end(), opts_.extra_args.begin(), opts_.extra_args.end());
  process_ = std::make_unique<child_process>(
      opts_.binary, args, dir_, "node" + std::to_string(id_) + "-" + std::to_string(starts_));
  const bool up = process_->wait_for_stderr("ready; stop with", 30s);
  require(up, "node " + std::to_string(id_) +
                  " did not get ready in 30 s: " + tail_of(process_->stderr_text()));
  static const std::regex ports(
      R"(client RPC on 127\.0\.0\.1:(\d+), cluster on 127\.0\.0\.1:(\d+), metrics on )"
      R"(http://127\.0\.0\.1:(\d+)/metrics, Kafka on 127\.0\.0\.1:(\d+))");
  std::smatch m;
  const auto text = process_->stderr_text();
  require(std::regex_search(text, m, ports),
          "node " + std::to_string(id_) + " named no ports: " + tail_of(text));
  rpc_port_ = static_cast<uint16_t>(std::stoi(m[1]));
  cluster_port_ = static_cast<uint16_t>(std::stoi(m[2]));
  metrics_port_ = static_cast<uint16_t>(std::stoi(m[3]));
  kafka_port_ = static_cast<uint16_t>(std::stoi(m[4]));
  alive_ = true;
}

void node_process::signal(int sig) {
  process_->signal(sig);
}

void node_process::kill() {
  alive_ = false;
  process_->signal(SIGKILL);
  require(process_->wait(30s).has_value(),
          "node " + std::to_string(id_) + " was still there 30 s after SIGKILL");
}

void node_process::stop() {
  alive_ = false;
  process_->signal(SIGTERM);
  auto code = process_->wait(60s);
  require(code == 0, "node " + std::to_string(id_) + " " +
                         (code ? "exited with " + std::to_string(*code) : "did not exit in 60 s") +
                         " after SIGTERM: " + tail_of(process_->stderr_text()));
}

std::optional<int> node_process::wait_for_exit(std::chrono::milliseconds timeout) {
  auto code = process_->wait(timeout);
  if (code) alive_ = false;
  return code;
}

std::string node_process::log() const {
  return process_ ? process_->stderr_text() : std::string();
}

int run_cli(const std::string& binary, const temp_dir& dir, const std::string& input,
            const std::vector<std::string>& args, std::string* out, std::string* err) {
  static int inputs = 0;
  const auto in = dir / ("stdin-" + std::to_string(++inputs));
  std::ofstream(in) << input;
  std::string command = "'" + binary + "'";
  for (const auto& a : args) command += " '" + a + "'";
  command += " < '" + in.string() + "'";
  return run_to_end("/bin/sh", {"-c", command}, dir.path(), out, err, 60s);
}

void create_topic(const node_process& node, const temp_dir& dir, const std::string& name,
                  int partitions) {
  std::string out, err;
  const int rc = run_to_end(node.binary(),
                            {"topic", "create", name, "--partitions", std::to_string(partitions),
                             "--bootstrap", node.bootstrap()},
                            dir.path(), &out, &err);
  require(rc == 0, "topic create " + name + " failed: " + tail_of(out + err));
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

} // namespace capstan::test
