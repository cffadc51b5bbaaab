// bench_group_join: how long a member's join stops the other members' consumption. Two group
// members of STRATEGY (cooperative-sticky, range, ...), started half a heartbeat interval
// (heartbeat.interval.ms 1000) apart, share TOPIC's partitions, starting at its end, while a producer writes one record to every partition every INTERVAL_MS (acks=-1);
// then a third member joins. Per partition, the longest time between two records read (by
// whichever member owns it) is taken over two windows: the 2 s before the join (steady), and
// from the join until the third member holds its share. Partitions are "kept" when the same
// member owns them before and after, else "moved". Prints one line:
//   STRATEGY: steady longest gap S ms; join took J ms; kept partitions (K): longest gap G ms;
//   moved partitions (M): longest gap H ms
// With cooperative-sticky the kept partitions should go on as in the steady window; an eager
// strategy stops every partition for the rebalance. Run on demand (not a test), e.g. by
// tests/bench/groups.sh:
//   BUILD/tests/bench_group_join BOOTSTRAP TOPIC GROUP STRATEGY [INTERVAL_MS]

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "runtime/client/cluster_client.hpp"
#include "runtime/client/group_consumer.hpp"
#include "runtime/client/producer.hpp"

using namespace capstan;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

// What every member read, per partition, as receipt times; and who owns what.
struct observations {
  std::mutex mu;
  std::map<int32_t, std::vector<clock_type::time_point>> reads;
  std::map<int32_t, int> owner; // partition -> member index

  void read(int32_t partition) {
    std::lock_guard lock(mu);
    reads[partition].push_back(clock_type::now());
  }
  void own(int member, const std::vector<client::topic_partition_key>& tps, bool add) {
    std::lock_guard lock(mu);
    for (const auto& tp : tps) {
      if (add) owner[tp.partition] = member;
      else if (owner[tp.partition] == member) owner.erase(tp.partition);
    }
  }
  std::map<int32_t, int> owners() {
    std::lock_guard lock(mu);
    return owner;
  }
  // The longest gap between reads of `partition` within [from, to], its ends counted as reads.
  int64_t longest_gap(int32_t partition, clock_type::time_point from, clock_type::time_point to) {
    std::lock_guard lock(mu);
    auto last = from;
    clock_type::duration longest{};
    for (auto t : reads[partition]) {
      if (t < from || t > to) continue;
      longest = std::max(longest, t - last);
      last = t;
    }
    longest = std::max(longest, to - last);
    return std::chrono::duration_cast<std::chrono::milliseconds>(longest).count();
  }
};

class member {
public:
  member(int index, const client::client_config& config, const std::string& group, const std::string& topic,
         observations& seen)
      : index_(index), seen_(seen) {
    auto c = client::cluster_client::connect(config);
    if (!c) throw std::runtime_error("connect: " + c.err().to_string());
    client_ = std::move(*c);
    auto g = client::group_consumer::create(*client_, config, group);
    if (!g) throw std::runtime_error("group consumer: " + g.err().to_string());
    consumer_ = std::move(*g);
    client::rebalance_listener l;
    l.on_assigned = [this](const auto& tps) { seen_.own(index_, tps, true); };
    l.on_revoked = [this](const auto& tps) { seen_.own(index_, tps, false); };
    l.on_lost = l.on_revoked;
    consumer_->subscribe({topic}, std::move(l));
    thread_ = std::thread([this] { run(); });
  }
  ~member() {
    stopping_ = true;
    thread_.join();
  }
  member(const member&) = delete;
  member& operator=(const member&) = delete;

private:
  void run() {
    while (!stopping_) {
      auto n = consumer_->poll_each(100ms, [this](const client::record_ref& r) { seen_.read(r.tp.partition); });
      if (!n) {
        std::fprintf(stderr, "member %d: %s\n", index_, n.err().to_string().c_str());
        std::exit(1);
      }
    }
    (void)consumer_->close();
  }

  const int index_;
  observations& seen_;
  std::unique_ptr<client::cluster_client> client_;
  std::unique_ptr<client::group_consumer> consumer_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

// Waits until every one of `partitions` has an owner and each of `members` owns some.
bool await_owners(observations& seen, int32_t partitions, int members, std::chrono::seconds bound) {
  const auto deadline = clock_type::now() + bound;
  while (clock_type::now() < deadline) {
    const auto owners = seen.owners();
    std::set<int> who;
    for (const auto& [p, m] : owners) who.insert(m);
    if (owners.size() == static_cast<size_t>(partitions) && who.size() == static_cast<size_t>(members)) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: %s BOOTSTRAP TOPIC GROUP STRATEGY [INTERVAL_MS]\n", argv[0]);
    return 2;
  }
  const std::string topic = argv[2], group = argv[3], strategy = argv[4];
  const int interval_ms = argc > 5 ? std::atoi(argv[5]) : 5;
  if (interval_ms <= 0) {
    std::fprintf(stderr, "INTERVAL_MS must be > 0\n");
    return 2;
  }
  client::client_config config;
  config.bootstrap = client::split_bootstrap(argv[1]);
  config.acks = -1;
  config.linger_ms = 0;
  config.auto_offset_reset = client::offset_reset::latest;
  config.session_timeout_ms = 10000;
  config.heartbeat_interval_ms = 1000;
  config.partition_assignment_strategy = {strategy};

  auto admin = client::cluster_client::connect(config);
  if (!admin) {
    std::fprintf(stderr, "connect: %s\n", admin.err().to_string().c_str());
    return 1;
  }
  auto md = (*admin)->metadata({topic});
  if (!md || md->topics.count(topic) == 0) {
    std::fprintf(stderr, "no topic %s\n", topic.c_str());
    return 1;
  }
  const auto partitions = static_cast<int32_t>(md->topics.at(topic).partitions.size());

  std::atomic<bool> producing{true};
  std::thread writer([&] {
    client::producer producer(**admin, config);
    const std::string value = "join-bench";
    const bytes_view payload(reinterpret_cast<const uint8_t*>(value.data()), value.size());
    while (producing) {
      for (int32_t p = 0; p < partitions; ++p) producer.send(topic, std::nullopt, payload, p, {});
      std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
    }
  });

  observations seen;
  int status = 0;
  try {
    member a(0, config, group, topic, seen);
    if (!await_owners(seen, partitions, 1, 60s)) throw std::runtime_error("the first member never got the partitions");
    // Half a heartbeat interval apart, as members started independently are: they learn of the
    // rebalance at different times, and an eager member stops from its own rejoin until the
    // other's.
    std::this_thread::sleep_for(std::chrono::milliseconds(config.heartbeat_interval_ms / 2));
    member b(1, config, group, topic, seen);
    if (!await_owners(seen, partitions, 2, 60s)) throw std::runtime_error("two members never shared the partitions");
    // Steady state: both read from their partitions' end for a while.
    std::this_thread::sleep_for(3s);
    const auto before = seen.owners();
    const auto joined_at = clock_type::now();
    member c(2, config, group, topic, seen);
    if (!await_owners(seen, partitions, 3, 60s)) throw std::runtime_error("the third member never got a share");
    const auto settled_at = clock_type::now();
    // Let the third member read its first records.
    std::this_thread::sleep_for(1s);
    const auto after = seen.owners();

    int64_t steady = 0, kept_gap = 0, moved_gap = 0;
    int kept = 0, moved = 0;
    for (int32_t p = 0; p < partitions; ++p) {
      steady = std::max(steady, seen.longest_gap(p, joined_at - 2s, joined_at));
      const auto gap = seen.longest_gap(p, joined_at, settled_at + 1s);
      if (before.at(p) == after.at(p)) {
        ++kept;
        kept_gap = std::max(kept_gap, gap);
      } else {
        ++moved;
        moved_gap = std::max(moved_gap, gap);
      }
    }
    std::printf("%s: steady longest gap %lld ms; join took %lld ms; kept partitions (%d): longest gap %lld ms; "
                "moved partitions (%d): longest gap %lld ms\n",
                strategy.c_str(), static_cast<long long>(steady),
                static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(settled_at - joined_at).count()),
                kept, static_cast<long long>(kept ? kept_gap : 0), moved, static_cast<long long>(moved ? moved_gap : 0));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    status = 1;
  }
  producing = false;
  writer.join();
  return status;
}
