#include "tests/support/node_cluster.hpp"

#include <algorithm>
#include <regex>
#include <set>
#include <sstream>

#include "tests/support/eventually.hpp"
#include "tests/support/free_port.hpp"
#include "tests/support/test_failure.hpp"

namespace capstan::test {

using namespace std::chrono_literals;

namespace {

const std::string cluster_id = "capstan-system-test-1";

const std::string settings = "broker.heartbeat.interval.ms = 200\n"
                             "broker.session.timeout.ms = 3000\n"
                             "controller.quorum.election.timeout.ms = 500\n"
                             "replica.lag.time.max.ms = 10000\n"
                             "replica.fetch.wait.max.ms = 200\n"
                             "replica.fetch.backoff.ms = 50\n"
                             "replica.socket.timeout.ms = 2000\n";

// "1,2,3" as sorted ids.
std::vector<int> ids_of(const std::string& list) {
  std::vector<int> ids;
  for (size_t at = 0; at < list.size();) {
    const auto comma = list.find(',', at);
    ids.push_back(std::stoi(list.substr(at, comma - at)));
    at = comma == std::string::npos ? list.size() : comma + 1;
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

// The key of a `key = value` line, empty for any other line.
std::string key_of(const std::string& line) {
  const auto eq = line.find('=');
  if (eq == std::string::npos) return {};
  auto key = line.substr(0, eq);
  key.erase(key.find_last_not_of(' ') + 1);
  return key;
}

// `defaults` without the lines whose keys `more` sets, then `more`: a key set twice would make
// the config file invalid TOML.
std::string merged(const std::string& defaults, const std::string& more) {
  std::set<std::string> overridden;
  std::istringstream in(more);
  for (std::string line; std::getline(in, line);)
    if (auto k = key_of(line); !k.empty()) overridden.insert(k);
  std::string out;
  std::istringstream kept(defaults);
  for (std::string line; std::getline(kept, line);)
    if (overridden.count(key_of(line)) == 0) out += line + "\n";
  return out + more;
}

} // namespace

std::string untabbed(std::string text) {
  std::replace(text.begin(), text.end(), '\t', ' ');
  return text;
}

node_cluster::node_cluster(std::string binary, int brokers, const std::string& more_settings,
                           bool stable_client_ports)
    : binary_(std::move(binary)) {
  std::string quorum;
  for (int id = 1; id <= 3; ++id) {
    voter_ports_.push_back(free_port());
    quorum += (id > 1 ? "," : "") + std::to_string(id) +
              "@127.0.0.1:" + std::to_string(voter_ports_.back());
  }
  flags_ = {"--controller-quorum", quorum, "--cluster-id", cluster_id};
  settings_ = merged(settings, more_settings);
  if (stable_client_ports)
    for (int id = 1; id <= 3 + brokers; ++id) client_ports_.push_back(free_port());
  for (int id = 1; id <= 3 + brokers; ++id)
    nodes.push_back(std::make_unique<node_process>(dir, id, options(id)));
  for (auto& n : nodes) n->start();
}

node_process_options node_cluster::options(int id) const {
  const std::string listen =
      id >= 1 && id <= 3 ? "127.0.0.1:" + std::to_string(voter_ports_[static_cast<size_t>(id - 1)])
                         : "127.0.0.1:0";
  node_process_options out{binary_, settings_, listen, flags_};
  if (id >= 1 && static_cast<size_t>(id) <= client_ports_.size())
    out.client_listen = "127.0.0.1:" + std::to_string(client_ports_[static_cast<size_t>(id - 1)]);
  return out;
}

node_cluster::~node_cluster() {
  for (auto& n : nodes)
    if (n->running()) n->kill();
}

int node_cluster::cli(const std::string& input, std::vector<std::string> args,
                      const node_process& via, std::string* out, std::string* err) {
  args.push_back("--bootstrap");
  args.push_back(via.bootstrap());
  return run_cli(binary_, dir, input, args, out, err);
}

int node_cluster::active_controller() {
  int best = 0;
  int best_term = -1;
  static const std::regex active(R"(controller (\d+): active in term (\d+))");
  for (int id = 1; id <= 3; ++id) {
    if (!node(id).running()) continue;
    const auto log = node(id).log();
    const auto last_active = log.rfind("active in term");
    if (last_active == std::string::npos) continue;
    const auto last_inactive = log.rfind("no longer active");
    if (last_inactive != std::string::npos && last_inactive > last_active) continue;
    std::smatch m;
    const auto tail = log.substr(log.rfind("controller ", last_active));
    if (!std::regex_search(tail, m, active)) continue;
    if (std::stoi(m[2]) > best_term) {
      best_term = std::stoi(m[2]);
      best = id;
    }
  }
  return best;
}

void node_cluster::create_topic(const std::string& name, int replication_factor,
                                const node_process& via, int partitions,
                                const std::vector<std::string>& configs) {
  std::vector<std::string> args{"topic",
                                "create",
                                name,
                                "--partitions",
                                std::to_string(partitions),
                                "--replication-factor",
                                std::to_string(replication_factor)};
  for (const auto& c : configs) {
    args.push_back("--config");
    args.push_back(c);
  }
  std::string out, err;
  const bool created = eventually([&] { return cli("", args, via, &out, &err) == 0; }, 60s);
  require(created, "topic " + name + " was not created in 60 s: " + untabbed(out + err));
}

std::string node_cluster::registered_nodes(const node_process& via) {
  std::string out, err;
  if (cli("", {"cluster", "describe"}, via, &out, &err) != 0) return {};
  const auto from = out.find("Registered nodes:");
  if (from == std::string::npos) return {};
  return out.substr(from, out.find("Partitions:", from) - from);
}

std::optional<std::vector<node_cluster::partition_row>>
node_cluster::describe(const std::string& topic, const node_process& via) {
  static const std::regex row(
      R"(Partition: (\d+)\tLeader: (-?\d+|none)\tReplicas: ([0-9,]+)\tIsr: ([0-9,]*))");
  std::string out, err;
  if (cli("", {"topic", "describe", topic}, via, &out, &err) != 0) return std::nullopt;
  std::vector<partition_row> rows;
  for (std::sregex_iterator m(out.begin(), out.end(), row), end; m != end; ++m) {
    const auto p = static_cast<size_t>(std::stoi((*m)[1]));
    if (rows.size() <= p) rows.resize(p + 1);
    const std::string leader = (*m)[2];
    rows[p] = partition_row{leader == "none" ? -1 : std::stoi(leader), ids_of((*m)[3]),
                            ids_of((*m)[4])};
  }
  return rows;
}

node_cluster::partition_row
node_cluster::await_partition(const std::string& topic, const node_process& via,
                              const std::function<bool(const partition_row&)>& settled,
                              int partition) {
  partition_row got;
  const bool done = eventually(
      [&] {
        const auto rows = describe(topic, via);
        if (!rows || rows->size() <= static_cast<size_t>(partition)) return false;
        got = (*rows)[static_cast<size_t>(partition)];
        return !got.replicas.empty() && settled(got);
      },
      60s);
  require(done, "partition " + topic + "-" + std::to_string(partition) +
                    " did not settle in 60 s; node " + std::to_string(via.id()) +
                    " last said: leader " + std::to_string(got.leader) + ", ISR of " +
                    std::to_string(got.isr.size()));
  return got;
}

int node_cluster::await_isr(const std::string& topic, const node_process& via, std::vector<int> isr,
                            int partition) {
  std::sort(isr.begin(), isr.end());
  return await_partition(
             topic, via,
             [&](const partition_row& r) {
               return r.isr == isr && std::find(isr.begin(), isr.end(), r.leader) != isr.end();
             },
             partition)
    .leader;
}

node_cluster::partition_row node_cluster::await_full_isr(const std::string& topic,
                                                         const node_process& via,
                                                         const std::vector<int>& gone,
                                                         int partition) {
  return await_partition(
    topic, via,
    [&](const partition_row& r) {
      auto expected = r.replicas;
      std::erase_if(expected, [&](int id) {
        return std::find(gone.begin(), gone.end(), id) != gone.end();
      });
      return r.isr == expected &&
             std::find(expected.begin(), expected.end(), r.leader) != expected.end();
    },
    partition);
}

std::vector<std::string> node_cluster::consume(const std::string& topic, const node_process& via,
                                               size_t count,
                                               const std::vector<std::string>& extra) {
  std::string out, err;
  std::vector<std::string> args{"consume", topic, "--from-beginning", "--timeout-ms",
                                count ? "20000" : "5000"};
  if (count) {
    args.push_back("--max-messages");
    args.push_back(std::to_string(count));
  }
  args.insert(args.end(), extra.begin(), extra.end());
  const int code = cli("", args, via, &out, &err);
  require(code == 0, "consume through node " + std::to_string(via.id()) + " failed: " + err);
  return lines_of(out);
}

} // namespace capstan::test
