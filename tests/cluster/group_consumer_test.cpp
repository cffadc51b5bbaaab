// Group consumers (runtime/client/group_consumer.hpp) against a real node's coordinator: members
// share a topic's partitions, hand them over on a join, a leave or a stalled poll, and together
// read every record once.

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "actors/node/node.hpp"
#include "runtime/client/group_consumer.hpp"
#include "tests/support/eventually.hpp"
#include "tests/support/log_builder.hpp"
#include "tests/support/loopback_node.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

constexpr int32_t partitions = 6;

struct started_node {
  temp_dir dir;
  std::unique_ptr<node> n;
  std::unique_ptr<client::cluster_client> admin;

  started_node() {
    auto c = loopback_node_config(dir.path());
    // Members here join one by one on purpose; no reason to wait for more.
    c.group_membership_limits.initial_rebalance_delay_ms = 0;
    auto started = node::start(c);
    INFO((started ? std::string() : started.err().to_string()));
    REQUIRE(started);
    n = std::move(*started);
    admin = connect_client(*n);
    REQUIRE(admin->create_topic(topic_spec{"t", partitions, 1, {}}));
  }
  ~started_node() { n->stop(); }

  void produce(int per_partition, const std::string& prefix) {
    for (int32_t p = 0; p < partitions; ++p) REQUIRE(admin->produce_sync("t", p, -1, make_batch(per_partition, prefix, 1000)));
  }
};

// A group member polling on a thread of its own, as an application would.
class member {
public:
  member(const started_node& sn, const std::string& strategy, int32_t max_poll_interval_ms = 300000,
         const std::string& instance = {}) {
    client_ = connect_client(*sn.n);
    client::client_config config;
    config.auto_offset_reset = client::offset_reset::earliest;
    config.session_timeout_ms = 6000;
    config.heartbeat_interval_ms = 300;
    config.max_poll_interval_ms = max_poll_interval_ms;
    config.partition_assignment_strategy = {strategy};
    config.group_instance_id = instance;
    auto c = client::group_consumer::create(*client_, config, "g");
    REQUIRE(c);
    consumer_ = std::move(*c);
    client::rebalance_listener l;
    l.on_assigned = [this](const auto& tps) { update(tps, assigned_events_, true); };
    l.on_revoked = [this](const auto& tps) { update(tps, revoked_events_, false); };
    l.on_lost = [this](const auto& tps) { update(tps, lost_events_, false); };
    consumer_->subscribe({"t"}, std::move(l));
    thread_ = std::thread([this] { run(); });
  }
  ~member() { stop(); }

  void stop() {
    stopping_ = true;
    if (thread_.joinable()) thread_.join();
  }
  // Paused, it is between polls once this returns.
  void pause(bool paused) {
    paused_ = paused;
    if (paused) REQUIRE(eventually([&] { return idle_.load(); }, 20s));
  }

  std::set<int32_t> owned() {
    std::lock_guard lock(mu_);
    return owned_;
  }
  // (partition, offset) of every record read, in order.
  std::vector<std::pair<int32_t, int64_t>> reads() {
    std::lock_guard lock(mu_);
    return reads_;
  }
  std::vector<std::set<int32_t>> revoked() {
    std::lock_guard lock(mu_);
    return revoked_events_;
  }
  std::vector<std::set<int32_t>> lost() {
    std::lock_guard lock(mu_);
    return lost_events_;
  }
  std::string failure() {
    std::lock_guard lock(mu_);
    return failure_;
  }

private:
  void update(const std::vector<client::topic_partition_key>& tps, std::vector<std::set<int32_t>>& events,
              bool add) {
    std::lock_guard lock(mu_);
    std::set<int32_t> ps;
    for (const auto& tp : tps) {
      ps.insert(tp.partition);
      if (add)
        owned_.insert(tp.partition);
      else
        owned_.erase(tp.partition);
    }
    events.push_back(ps);
  }

  void run() {
    while (!stopping_) {
      if (paused_) {
        idle_ = true;
        std::this_thread::sleep_for(50ms);
        continue;
      }
      idle_ = false;
      auto n = consumer_->poll_each(200ms, [this](const client::record_ref& r) {
        std::lock_guard lock(mu_);
        reads_.emplace_back(r.tp.partition, r.off.value());
      });
      if (!n) {
        std::lock_guard lock(mu_);
        failure_ = n.err().to_string();
        break;
      }
    }
    (void)consumer_->close();
  }

  std::unique_ptr<client::cluster_client> client_;
  std::unique_ptr<client::group_consumer> consumer_;
  std::atomic<bool> stopping_{false}, paused_{false}, idle_{false};
  std::mutex mu_;
  std::set<int32_t> owned_;
  std::vector<std::pair<int32_t, int64_t>> reads_;
  std::vector<std::set<int32_t>> assigned_events_, revoked_events_, lost_events_;
  std::string failure_;
  std::thread thread_;
};

bool shared(member& a, member& b, size_t each) {
  auto x = a.owned(), y = b.owned();
  std::set<int32_t> both(x.begin(), x.end());
  both.insert(y.begin(), y.end());
  return x.size() == each && y.size() == each && both.size() == x.size() + y.size();
}

// Every offset below `per_partition` of every partition read exactly once by the members
// together.
void check_read_once(std::vector<member*> members, int per_partition) {
  std::map<std::pair<int32_t, int64_t>, int> times;
  for (auto* m : members)
    for (const auto& r : m->reads()) ++times[r];
  for (int32_t p = 0; p < partitions; ++p)
    for (int64_t o = 0; o < per_partition; ++o) {
      INFO("partition " << p << " offset " << o);
      CHECK(times[{p, o}] == 1);
    }
  CHECK(times.size() == static_cast<size_t>(partitions * per_partition));
}

size_t total_reads(std::vector<member*> members) {
  size_t n = 0;
  for (auto* m : members) n += m->reads().size();
  return n;
}

} // namespace

TEST_CASE("range members share a topic's partitions, hand them over when one leaves, and read "
          "every record once",
          "[cluster][groups]") {
  started_node sn;
  sn.produce(5, "a");
  member a(sn, "range");
  REQUIRE(eventually([&] { return a.owned().size() == partitions; }, 20s));
  member b(sn, "range");
  REQUIRE(eventually([&] { return shared(a, b, 3); }, 20s));
  sn.produce(5, "b");
  REQUIRE(eventually([&] { return total_reads({&a, &b}) >= 60; }, 20s));
  // Eager: a revoked everything before the rebalance that let b in.
  CHECK_FALSE(a.revoked().empty());
  CHECK(a.revoked().front().size() == partitions);

  b.stop();
  REQUIRE(eventually([&] { return a.owned().size() == partitions; }, 20s));
  sn.produce(5, "c");
  REQUIRE(eventually([&] { return total_reads({&a, &b}) >= 90; }, 20s));
  a.stop();
  CHECK(a.failure().empty());
  CHECK(b.failure().empty());
  CHECK(a.lost().empty());
  check_read_once({&a, &b}, 15);
}

TEST_CASE("cooperative-sticky members keep what does not move: a join revokes only the partitions "
          "handed to the new member",
          "[cluster][groups]") {
  started_node sn;
  sn.produce(5, "a");
  member a(sn, "cooperative-sticky");
  REQUIRE(eventually([&] { return a.owned().size() == partitions; }, 20s));
  REQUIRE(eventually([&] { return total_reads({&a}) >= 30; }, 20s));
  member b(sn, "cooperative-sticky");
  REQUIRE(eventually([&] { return shared(a, b, 3); }, 20s));
  sn.produce(5, "b");
  REQUIRE(eventually([&] { return total_reads({&a, &b}) >= 60; }, 20s));
  a.stop();
  b.stop();
  REQUIRE(a.revoked().size() >= 1);
  // The first revocation took only what b got; the close then revoked a's three.
  CHECK(a.revoked().front().size() == 3);
  CHECK(a.lost().empty());
  CHECK(a.failure().empty());
  CHECK(b.failure().empty());
  check_read_once({&a, &b}, 10);
}

TEST_CASE("a member that stops polling for max.poll.interval.ms leaves, its partitions move, and "
          "it learns they were lost when it polls again",
          "[cluster][groups]") {
  started_node sn;
  member a(sn, "range", 1500);
  REQUIRE(eventually([&] { return a.owned().size() == partitions; }, 20s));
  member b(sn, "range");
  REQUIRE(eventually([&] { return shared(a, b, 3); }, 20s));
  a.pause(true);
  REQUIRE(eventually([&] { return b.owned().size() == partitions; }, 20s));
  a.pause(false);
  REQUIRE(eventually([&] { return !a.lost().empty(); }, 20s));
  CHECK(a.lost().front().size() == 3);
  REQUIRE(eventually([&] { return shared(a, b, 3); }, 20s));
  a.stop();
  b.stop();
  CHECK(a.failure().empty());
  CHECK(b.failure().empty());
}

TEST_CASE("a static member that comes back within its session timeout gets its partitions again "
          "without a rebalance",
          "[cluster][groups]") {
  started_node sn;
  member a(sn, "range", 300000, "instance-a");
  member b(sn, "range", 300000, "instance-b");
  REQUIRE(eventually([&] { return shared(a, b, 3); }, 20s));
  auto before = sn.admin->describe_group("g");
  REQUIRE(before);
  REQUIRE(before->state == "Stable");
  const auto owned = a.owned();
  const auto revoked_by_b = b.revoked().size();

  // A static member's close does not leave: its place waits for it.
  a.stop();
  member again(sn, "range", 300000, "instance-a");
  REQUIRE(eventually([&] { return again.owned() == owned; }, 20s));
  auto after = sn.admin->describe_group("g");
  REQUIRE(after);
  CHECK(after->state == "Stable");
  CHECK(after->generation == before->generation);
  CHECK(b.revoked().size() == revoked_by_b);
  CHECK(b.lost().empty());
  again.stop();
  b.stop();
  CHECK(again.failure().empty());
}

TEST_CASE("a cooperative member reads the partitions it keeps while a rebalance waits for a member "
          "slow to poll, which keeps its place past its session timeout",
          "[cluster][groups]") {
  started_node sn;
  sn.produce(5, "a");
  member a(sn, "cooperative-sticky");
  member b(sn, "cooperative-sticky");
  REQUIRE(eventually([&] { return shared(a, b, 3); }, 20s));
  REQUIRE(eventually([&] { return total_reads({&a, &b}) >= 30; }, 20s));
  auto state = [&] {
    auto d = sn.admin->describe_group("g");
    return d ? d->state : d.err().to_string();
  };

  // b processes one poll's records for longer than its session timeout (6 s); c joins meanwhile.
  b.pause(true);
  const auto paused_at = std::chrono::steady_clock::now();
  member c(sn, "cooperative-sticky");
  REQUIRE(eventually([&] { return state() == "PreparingRebalance"; }, 20s));
  sn.produce(5, "b");
  auto new_reads = [](member& m) {
    const auto reads = m.reads();
    return std::count_if(reads.begin(), reads.end(), [](const auto& r) { return r.second >= 5; });
  };
  REQUIRE(eventually([&] { return new_reads(a) == 15; }, 20s));
  CHECK(state() == "PreparingRebalance");
  std::this_thread::sleep_until(paused_at + 8s);
  // The rebalance still waits for b, whose heartbeats kept its session.
  CHECK(state() == "PreparingRebalance");
  CHECK(new_reads(b) == 0);

  b.pause(false);
  REQUIRE(eventually([&] {
    auto x = a.owned(), y = b.owned(), z = c.owned();
    std::set<int32_t> all(x.begin(), x.end());
    all.insert(y.begin(), y.end());
    all.insert(z.begin(), z.end());
    return x.size() == 2 && y.size() == 2 && z.size() == 2 && all.size() == partitions;
  }, 20s));
  sn.produce(5, "c");
  REQUIRE(eventually([&] { return total_reads({&a, &b, &c}) >= 90; }, 20s));
  // One at a time, each after the rebalance the last one caused: a member that closes while a
  // rebalance completes cannot commit (REBALANCE_IN_PROGRESS, as in Kafka), and whoever gets its
  // partitions reads its last records again.
  a.stop();
  REQUIRE(eventually([&] { return b.owned().size() + c.owned().size() == partitions; }, 20s));
  b.stop();
  REQUIRE(eventually([&] { return c.owned().size() == partitions; }, 20s));
  c.stop();
  CHECK(a.lost().empty());
  CHECK(b.lost().empty());
  for (auto* m : {&a, &b, &c}) CHECK(m->failure().empty());
  check_read_once({&a, &b, &c}, 15);
}

TEST_CASE("a cooperative member whose background join completes while its caller does not poll "
          "keeps its place past its session timeout",
          "[cluster][groups]") {
  started_node sn;
  sn.produce(5, "a");
  auto x_client = connect_client(*sn.n);
  client::client_config config;
  config.auto_offset_reset = client::offset_reset::earliest;
  config.session_timeout_ms = 6000;
  config.heartbeat_interval_ms = 300;
  config.partition_assignment_strategy = {"cooperative-sticky"};
  auto x = client::group_consumer::create(*x_client, config, "g");
  REQUIRE(x);
  (*x)->subscribe({"t"});
  auto poll_x = [&] { REQUIRE((*x)->poll_each(1ms, [](const client::record_ref&) {})); };
  REQUIRE(eventually([&] {
    poll_x();
    return (*x)->assignment().size() == partitions;
  }, 20s));
  auto group = [&] {
    auto d = sn.admin->describe_group("g");
    REQUIRE(d);
    return *d;
  };

  // y joins; x learns of the rebalance from its heartbeats, and its next poll sends its join
  // in the background (it owns partitions, so the poll does not wait). x's caller then stops
  // polling: the join and its sync complete without it.
  member y(sn, "cooperative-sticky");
  REQUIRE(eventually([&] { return group().state == "PreparingRebalance"; }, 20s));
  REQUIRE(eventually([&] {
    if (group().state != "PreparingRebalance") return true;
    poll_x();
    return false;
  }, 20s));
  REQUIRE(eventually([&] { return group().state == "Stable"; }, 20s));
  const auto joined = group();
  REQUIRE(joined.members.size() == 2);

  // Past x's session timeout, x is still counted: its heartbeats went on in the new generation.
  std::this_thread::sleep_for(8s);
  const auto later = group();
  CHECK(later.state == "Stable");
  CHECK(later.generation == joined.generation);
  CHECK(later.members.size() == 2);

  // Polling again, x hands on what the cooperative rebalance moves, and each ends with half.
  REQUIRE(eventually([&] {
    poll_x();
    return (*x)->assignment().size() == partitions / 2 && y.owned().size() == partitions / 2;
  }, 20s));
  y.stop();
  CHECK(y.failure().empty());
  CHECK((*x)->close());
}
