#include "tests/safety/safety_run.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "tests/safety/cluster_ops.hpp"
#include "tests/safety/nemesis.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/log_builder.hpp"
#include "tests/support/node_cluster.hpp"
#include "tests/support/test_failure.hpp"
#include "tests/support/workload.hpp"

namespace capstan::safety {

using namespace std::chrono_literals;
using test::anomaly;

namespace {

const std::string cluster_settings = "fault.injection.enable = true\n";

class safety_run {
public:
  safety_run(const run_options& o, const std::function<void(const run_result&)>& report)
      : o_(o), report_(report), c_(o.binary, 0, cluster_settings, true),
        ops_(c_, topic_names(o.topics), o.partitions, log_), nemesis_(ops_, anomalies_) {
    result_.schedule = o.schedule;
  }

  void run() {
    for (const auto& t : ops_.topics())
      c_.create_topic(t, 3, c_.node(1), o_.partitions,
                      {"min.insync.replicas=2", "unclean.leader.election.enable=false"});
    const auto not_whole = ops_.await_whole(60s);
    test::require(not_whole.empty(), "the new topics did not get whole ISRs:" + not_whole);
    log_.add("cluster up in " + c_.dir.path().string() + ": nodes 1-3, topics with " +
             std::to_string(o_.partitions) + " partitions each, RF 3, min.insync.replicas=2");
    start_workload();

    bool whole = true;
    for (size_t i = 0; i < o_.schedule.steps.size() && whole; ++i) {
      if (log_.seconds() > o_.duration_s) {
        log_.add("--duration reached: no more steps");
        break;
      }
      whole = nemesis_.run(o_.schedule.steps[i], static_cast<int>(i + 1));
      ++result_.steps_run;
      check_windows();
      if (o_.fail_fast && !anomalies_.empty()) fail_fast();
    }
    finish(whole);
  }

private:
  static std::vector<std::string> topic_names(int n) {
    std::vector<std::string> out;
    for (int i = 0; i < n; ++i) out.push_back(std::string("safety-") + static_cast<char>('a' + i));
    return out;
  }

  void start_workload() {
    for (int i = 0; i < o_.producers; ++i)
      producers_.push_back(std::make_unique<test::busy_producer>(
          c_, ops_.all_partitions(), 5, "p" + std::to_string(i) + "-",
          std::chrono::microseconds(o_.pause_us)));
    for (const auto& t : ops_.topics())
      for (int i = 0; i < o_.consumers; ++i)
        consumers_.push_back(std::make_unique<test::busy_consumer>(c_, t));
    for (auto& p : producers_) {
      if (p->await_acks(std::vector<size_t>(ops_.all_partitions().size(), 0), 5)) continue;
      const auto failures = p->failures();
      std::string counts;
      for (auto n : p->counts()) counts += " " + std::to_string(n);
      throw test::test_failure("a producer got too few acknowledgements in 60 s before any "
                               "fault (per partition:" +
                               counts + ")" +
                               (failures.empty() ? "" : "; first failure: " + failures.front()));
    }
    log_.add("workload: " + std::to_string(o_.producers) + " idempotent acks=all producers, " +
             std::to_string(consumers_.size()) + " consumers");
  }

  // Acknowledgements of records sent inside a min.insync.replicas=3 window with an ISR of two.
  void check_windows() {
    const auto& windows = nemesis_.min_isr_windows();
    for (; windows_checked_ < windows.size(); ++windows_checked_) {
      const auto& w = windows[windows_checked_];
      size_t bad = 0;
      std::string first;
      for (auto& p : producers_)
        for (const auto& [tp, acked] : p->acknowledged()) {
          if (tp.first != w.topic) continue;
          for (const auto& a : acked)
            if (a.sent_at >= w.from && a.acked_at <= w.to && ++bad == 1)
              first = a.value + " at " + tp.first + "-" + std::to_string(tp.second) + " offset " +
                      std::to_string(a.offset);
        }
      if (bad > 0) {
        anomalies_.push_back(
            {"acked-below-min-isr",
             std::to_string(bad) + " acks=all records of " + w.topic +
                 " sent and acknowledged while min.insync.replicas=3 and the ISR had two "
                 "members, the first " +
                 first});
        log_.add("ANOMALY acked-below-min-isr: " + anomalies_.back().detail);
      }
    }
  }

  void collect_counts() {
    result_.faults_by_kind = nemesis_.faults_by_kind();
    result_.sent = result_.acknowledged = result_.failed = 0;
    // Why records failed, by error name ("<value>: NAME: message"), for the event log.
    std::map<std::string, int> why;
    for (auto& p : producers_) {
      result_.sent += p->sent();
      for (const auto& [tp, acked] : p->acknowledged())
        result_.acknowledged += static_cast<int64_t>(acked.size());
      result_.failed += static_cast<int64_t>(p->failures().size());
      for (const auto& f : p->failures()) {
        const auto from = f.find(": ");
        const auto name = from == std::string::npos ? f : f.substr(from + 2);
        ++why[name.substr(0, name.find(':'))];
      }
    }
    if (!why.empty()) {
      std::string line = "records failed after retries:";
      for (const auto& [name, n] : why) line += " " + name + " " + std::to_string(n);
      log_.add(line);
    }
    for (const auto& probe : ops_.probe_history())
      for (const auto& [tp, acked] : probe) {
        result_.sent += 1;
        result_.acknowledged += static_cast<int64_t>(acked.size());
      }
    result_.anomalies = anomalies_;
    result_.events = log_.lines();
    result_.seconds = log_.seconds();
  }

  // The nodes' logs (node<id>-<start>.err) into --logs, when an anomaly was found.
  void keep_logs() {
    if (o_.logs_dir.empty() || anomalies_.empty()) return;
    std::error_code ec;
    std::filesystem::create_directories(o_.logs_dir, ec);
    for (const auto& e : std::filesystem::directory_iterator(c_.dir.path(), ec))
      if (e.path().extension() == ".err" && e.path().filename().string().rfind("node", 0) == 0)
        std::filesystem::copy_file(e.path(),
                                   std::filesystem::path(o_.logs_dir) / e.path().filename(),
                                   std::filesystem::copy_options::overwrite_existing, ec);
    log_.add("node logs copied to " + o_.logs_dir);
  }

  [[noreturn]] void fail_fast() {
    log_.add("--fail-fast: stopping at the first anomaly");
    keep_logs();
    collect_counts();
    report_(result_);
    for (auto& n : c_.nodes)
      if (n->running()) n->kill();
    std::error_code ec;
    std::filesystem::remove_all(c_.dir.path(), ec);
    std::fflush(nullptr);
    std::_Exit(1);
  }

  void finish(bool whole) {
    // After a step left the cluster broken, every wait below is shorter: it will not heal now.
    const auto limit = whole ? std::chrono::milliseconds(60s) : std::chrono::milliseconds(20s);
    for (int id = 1; id <= 3; ++id) ops_.start(id);
    ops_.clear_faults();
    log_.add("final: every fault healed");
    auto broken = ops_.await_whole(limit);
    if (broken.empty()) broken = ops_.probe("probe-final", limit);
    if (!broken.empty()) {
      anomalies_.push_back({"unavailable", "after the last heal:" + broken});
      log_.add("ANOMALY unavailable: " + anomalies_.back().detail);
    }
    for (auto& p : producers_) p->stop();
    log_.add("producers stopped");

    std::map<std::string, std::map<int, std::vector<test::read_record>>> final_reads;
    bool read = true;
    for (const auto& t : ops_.topics()) {
      const auto ends = test::end_offsets(c_, t, o_.partitions, limit);
      if (!ends) {
        read = false;
        break;
      }
      for (auto& consumer : consumers_)
        if (consumer->topic() == t &&
            !test::eventually([&] { return consumer->reached(*ends); }, limit))
          log_.add("a consumer of " + t + " did not catch up with the end offsets");
      auto all = test::read_to(c_, t, *ends, limit);
      if (!all) {
        read = false;
        break;
      }
      final_reads[t] = std::move(*all);
    }
    for (auto& consumer : consumers_) consumer->stop();
    if (!read) {
      anomalies_.push_back({"unavailable", "the final read did not finish"});
      log_.add("ANOMALY unavailable: the final read did not finish; histories not checked");
    }

    for (auto& n : c_.nodes) {
      if (!n->running()) continue;
      try {
        n->stop();
      } catch (const test::test_failure& e) {
        anomalies_.push_back({"unclean-stop", e.what()});
      }
    }
    log_.add("nodes stopped");
    if (read) check_histories(final_reads);
    check_windows();
    for (auto& consumer : consumers_)
      for (const auto& e : consumer->errors())
        anomalies_.push_back({"offset-out-of-range", consumer->topic() + ": " + e});
    keep_logs();
    collect_counts();
    report_(result_);
  }

  void check_histories(
      const std::map<std::string, std::map<int, std::vector<test::read_record>>>& final_reads) {
    for (const auto& tp : ops_.all_partitions()) {
      test::partition_history h;
      h.tp = tp;
      for (auto& p : producers_) h.acked.push_back(p->acknowledged()[tp]);
      for (const auto& probe : ops_.probe_history())
        if (auto it = probe.find(tp); it != probe.end()) h.acked.push_back(it->second);
      const auto& reads = final_reads.at(tp.first);
      if (auto it = reads.find(tp.second); it != reads.end()) h.final_read = it->second;
      for (auto& consumer : consumers_)
        if (consumer->topic() == tp.first) h.consumed.push_back(consumer->records()[tp.second]);
      for (auto& n : c_.nodes)
        h.replicas.emplace_back(n->id(), test::partition_dir_records(n->partition_dir(tp)));
      for (auto& a : test::check_partition(h)) anomalies_.push_back(std::move(a));
    }
  }

  const run_options& o_;
  const std::function<void(const run_result&)>& report_;
  event_log log_;
  test::node_cluster c_;
  cluster_ops ops_;
  std::vector<anomaly> anomalies_;
  nemesis nemesis_;
  std::vector<std::unique_ptr<test::busy_producer>> producers_;
  std::vector<std::unique_ptr<test::busy_consumer>> consumers_;
  size_t windows_checked_ = 0;
  run_result result_;
};

} // namespace

void run_safety(const run_options& o, const std::function<void(const run_result&)>& report) {
  safety_run(o, report).run();
}

} // namespace capstan::safety
