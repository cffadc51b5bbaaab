#include "tests/safety/cluster_ops.hpp"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

#include "runtime/client/producer.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/test_failure.hpp"

namespace capstan::safety {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

event_log::event_log() : start_(test::workload_clock::now()) {}

double event_log::seconds() const {
  return std::chrono::duration<double>(test::workload_clock::now() - start_).count();
}

void event_log::add(const std::string& what) {
  char stamp[32];
  std::snprintf(stamp, sizeof stamp, "[%7.1f s] ", seconds());
  lines_.push_back(stamp + what);
  std::cout << lines_.back() << std::endl;
}

namespace {

std::string ids(const std::vector<int>& v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + std::to_string(v[i]);
  return out;
}

std::string name_of(const topic_partition& tp) {
  return tp.first + "-" + std::to_string(tp.second);
}

} // namespace

cluster_ops::cluster_ops(node_cluster& c, std::vector<std::string> topics, int partitions,
                         event_log& log)
    : c_(c), topics_(std::move(topics)), partitions_(partitions), log_(log) {}

std::vector<topic_partition> cluster_ops::all_partitions() const {
  std::vector<topic_partition> out;
  for (const auto& t : topics_)
    for (int p = 0; p < partitions_; ++p) out.emplace_back(t, p);
  return out;
}

std::vector<int> cluster_ops::running() const {
  std::vector<int> out;
  for (const auto& n : c_.nodes)
    if (n->running()) out.push_back(n->id());
  return out;
}

node_process* cluster_ops::any_running() {
  for (auto& n : c_.nodes)
    if (n->running()) return n.get();
  return nullptr;
}

void cluster_ops::kill(int id) {
  if (!c_.node(id).running()) return;
  c_.node(id).kill();
  log_.add("killed node " + std::to_string(id) + " (SIGKILL)");
}

bool cluster_ops::start(int id) {
  if (c_.node(id).running()) return true;
  try {
    c_.node(id).start();
  } catch (const test::test_failure& e) {
    log_.add("node " + std::to_string(id) + " did not start: " + e.what());
    return false;
  }
  log_.add("started node " + std::to_string(id));
  return true;
}

bool cluster_ops::stopped_by_itself(int id) {
  auto& n = c_.node(id);
  if (!n.running()) return false;
  const auto code = n.wait_for_exit(0ms);
  if (!code) return false;
  std::string why;
  for (const auto& line : test::lines_of(n.log()))
    if (line.find("stopping:") != std::string::npos) why = line;
  log_.add("node " + std::to_string(id) + " had stopped by itself, exit code " +
           std::to_string(*code) + (why.empty() ? "" : ": " + why));
  return true;
}

bool cluster_ops::restart(int id) {
  auto& n = c_.node(id);
  if (n.running()) {
    try {
      n.stop();
      log_.add("stopped node " + std::to_string(id) + " (SIGTERM)");
    } catch (const test::test_failure& e) {
      log_.add("node " + std::to_string(id) + " did not stop cleanly: " + e.what());
      n.kill();
    }
  }
  return start(id);
}

void cluster_ops::signal(int id, int sig, const std::string& what) {
  if (!c_.node(id).running()) return;
  c_.node(id).signal(sig);
  log_.add(what + " node " + std::to_string(id));
}

bool cluster_ops::fault(int id, std::vector<std::string> args) {
  if (!c_.node(id).running()) return false;
  std::string out, err;
  args.insert(args.begin(), {"debug", "fault"});
  const int code = c_.cli("", args, c_.node(id), &out, &err);
  std::string line;
  for (size_t i = 2; i < args.size(); ++i) line += " " + args[i];
  if (code != 0) {
    log_.add("node " + std::to_string(id) + ": debug fault" + line + " failed: " + err);
    return false;
  }
  log_.add("node " + std::to_string(id) + ": debug fault" + line);
  return true;
}

void cluster_ops::clear_faults() {
  for (int id : running()) {
    std::string out, err;
    c_.cli("", {"debug", "fault", "clear"}, c_.node(id), &out, &err);
  }
}

std::optional<std::map<topic_partition, row>> cluster_ops::describe_all() {
  // Each running node in turn: one that just restarted may not know the topics yet.
  for (int id : running()) {
    std::map<topic_partition, row> out;
    bool complete = true;
    for (const auto& t : topics_) {
      auto rows = c_.describe(t, c_.node(id));
      if (!rows || static_cast<int>(rows->size()) < partitions_) {
        complete = false;
        break;
      }
      for (int p = 0; p < partitions_; ++p) out[{t, p}] = (*rows)[static_cast<size_t>(p)];
    }
    if (complete) return out;
  }
  return std::nullopt;
}

int cluster_ops::leader_of(const topic_partition& tp) {
  auto rows = describe_all();
  if (!rows) return -1;
  return rows->at(tp).leader;
}

std::string cluster_ops::await_all(const std::function<bool(const row&)>& settled,
                                   std::chrono::milliseconds limit) {
  std::string unsettled = "no running node described the topics";
  test::eventually(
      [&] {
        auto rows = describe_all();
        if (!rows) return false;
        unsettled.clear();
        for (const auto& [tp, r] : *rows)
          if (!settled(r))
            unsettled += " " + name_of(tp) + " (leader " + std::to_string(r.leader) +
                         ", replicas " + ids(r.replicas) + ", isr " + ids(r.isr) + ")";
        return unsettled.empty();
      },
      limit);
  return unsettled;
}

std::string cluster_ops::await_whole(std::chrono::milliseconds limit) {
  return await_all(
      [](const row& r) {
        return r.leader >= 0 && r.isr == r.replicas &&
               std::find(r.isr.begin(), r.isr.end(), r.leader) != r.isr.end();
      },
      limit);
}

std::string cluster_ops::probe(const std::string& label, std::chrono::milliseconds limit) {
  const auto deadline = test::workload_clock::now() + limit;
  std::map<topic_partition, std::vector<test::acked_record>> acked;
  auto pending = all_partitions();
  std::map<topic_partition, std::string> failed;
  // A node that just restarted may not know the topics yet, and a producer fails a record for an
  // unknown topic at once: what failed is sent again by a fresh producer until the deadline.
  for (int attempt = 0; !pending.empty(); ++attempt) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - test::workload_clock::now());
    if (attempt > 0 && left < 1s) break;
    if (attempt > 0) std::this_thread::sleep_for(500ms);
    client::client_config config;
    config.acks = -1;
    config.linger_ms = 0;
    config.request_timeout_ms = 5000;
    config.delivery_timeout_ms = std::max<int64_t>(left.count(), 1000);
    config.retry_backoff_ms = 100;
    config.max_in_flight = 1;
    std::unique_ptr<client::cluster_client> client;
    try {
      client = test::connect_to(c_, config);
    } catch (const test::test_failure& e) {
      for (const auto& tp : pending) failed[tp] = e.what();
      continue;
    }
    std::mutex mu;
    std::vector<topic_partition> again;
    {
      client::producer producer(*client, config);
      for (const auto& tp : pending) {
        auto value = std::make_shared<std::string>(label + "-" + name_of(tp));
        const auto sent_at = test::workload_clock::now();
        producer.send(tp.first, std::nullopt,
                      bytes_view(reinterpret_cast<const uint8_t*>(value->data()), value->size()),
                      tp.second, [&, value, tp, sent_at](result<client::record_metadata> r) {
                        std::lock_guard lock(mu);
                        if (!r) {
                          failed[tp] = r.err().to_string();
                          again.push_back(tp);
                          return;
                        }
                        failed.erase(tp);
                        acked[tp].push_back(
                            {*value, 0, r->off.value(), sent_at, test::workload_clock::now()});
                      });
      }
      producer.flush();
    }
    pending = again;
  }
  probes_.push_back(std::move(acked));
  std::string out;
  for (const auto& [tp, why] : failed) out += " " + name_of(tp) + " (" + why + ")";
  return out;
}

bool cluster_ops::set_min_isr(const std::string& topic, int n) {
  auto* via = any_running();
  if (!via) return false;
  const std::string setting = "min.insync.replicas=" + std::to_string(n);
  std::string out, err;
  if (c_.cli("", {"topic", "alter-config", topic, "--config", setting}, *via, &out, &err) != 0) {
    log_.add("topic alter-config " + topic + " --config " + setting + " failed: " + err);
    return false;
  }
  const bool seen = test::eventually(
      [&] {
        for (int id : running()) {
          if (c_.cli("", {"topic", "describe", topic}, c_.node(id), &out, &err) != 0) return false;
          if (test::lines_of(out).empty() ||
              test::lines_of(out).front().find(setting) == std::string::npos)
            return false;
        }
        return true;
      },
      60s);
  log_.add("topic " + topic + ": " + setting + (seen ? "" : ", not described by every node"));
  return seen;
}

void cluster_ops::wipe(int id) {
  std::error_code ec;
  const auto dir = c_.node(id).data_dir();
  std::vector<fs::path> entries;
  for (const auto& e : fs::directory_iterator(dir, ec)) entries.push_back(e.path());
  for (const auto& e : entries) fs::remove_all(e, ec);
  log_.add("node " + std::to_string(id) + ": data dir " + dir.string() + " emptied" +
           (ec ? " (" + ec.message() + ")" : ""));
}

void cluster_ops::damage_tails(int id, int bytes, bool flip, int bit) {
  for (const auto& tp : all_partitions()) {
    const auto dir = c_.node(id).partition_dir(tp);
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> logs;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".log" && fs::file_size(e.path(), ec) > 0)
        logs.push_back(e.path());
    if (logs.empty()) continue;
    // Segment names are zero-padded base offsets: the greatest name is the newest segment.
    const auto newest = *std::max_element(logs.begin(), logs.end());
    const auto size = fs::file_size(newest, ec);
    const auto n = std::min<uintmax_t>(static_cast<uintmax_t>(bytes), size);
    if (flip) {
      std::fstream f(newest, std::ios::in | std::ios::out | std::ios::binary);
      const auto at = static_cast<std::streamoff>(size - n);
      f.seekg(at);
      char byte = 0;
      f.get(byte);
      byte = static_cast<char>(byte ^ (1 << (bit % 8)));
      f.seekp(at);
      f.put(byte);
    } else {
      fs::resize_file(newest, size - n, ec);
    }
    log_.add("node " + std::to_string(id) + ": " +
             (flip ? "flipped bit " + std::to_string(bit % 8) + " of the byte " +
                         std::to_string(n) + " from the end of "
                   : "tore " + std::to_string(n) + " bytes off ") +
             newest.filename().string() + " of " + name_of(tp));
  }
}

} // namespace capstan::safety
