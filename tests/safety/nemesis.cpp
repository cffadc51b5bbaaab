#include "tests/safety/nemesis.hpp"

#include <algorithm>
#include <array>
#include <csignal>
#include <thread>

#include "tests/support/eventually.hpp"

namespace capstan::safety {

using namespace std::chrono_literals;

namespace {

constexpr auto settle_limit = 60s;

void sleep_ms(int ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

std::string joined(const std::vector<int>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? "," : "") + std::to_string(ids[i]);
  return out;
}

bool loses_control(const fault_step& step) {
  const auto control = [](const fault& f) {
    return f.kind == fault_kind::drop_control || f.kind == fault_kind::delay_control;
  };
  return control(step.first) || (step.second && control(*step.second));
}

} // namespace

nemesis::nemesis(cluster_ops& ops, std::vector<test::anomaly>& anomalies)
    : ops_(ops), anomalies_(anomalies) {}

void nemesis::add(const std::string& kind, const std::string& detail) {
  anomalies_.push_back({kind, detail});
  ops_.log().add("ANOMALY " + kind + ": " + detail);
}

int nemesis::pick_node(uint32_t pick, const std::set<int>& busy) {
  std::vector<int> free;
  for (int id : ops_.running())
    if (busy.count(id) == 0) free.push_back(id);
  return free.empty() ? 0 : free[pick % free.size()];
}

std::vector<int> nemesis::pick_peers(int node, uint32_t pick) {
  std::vector<int> others;
  for (int id = 1; id <= 3; ++id)
    if (id != node) others.push_back(id);
  switch (pick % 3) {
  case 0:
    return others;
  case 1:
    return {others[0]};
  default:
    return {others[1]};
  }
}

int nemesis::await_controller() {
  int controller = 0;
  test::eventually([&] { return (controller = ops_.active_controller()) != 0; }, 30s);
  return controller;
}

nemesis::held nemesis::start(const fault& f, const std::set<int>& busy) {
  const auto free_or = [&](int wanted) {
    return wanted > 0 && busy.count(wanted) == 0 && ops_.cluster().node(wanted).running()
               ? wanted
               : pick_node(f.pick, busy);
  };
  int node = 0;
  switch (f.kind) {
  case fault_kind::kill_leader: {
    const auto parts = ops_.all_partitions();
    const auto& tp = parts[f.pick % parts.size()];
    node = free_or(ops_.leader_of(tp));
    ops_.log().add("the leader of " + tp.first + "-" + std::to_string(tp.second) + ": node " +
                   std::to_string(node));
    break;
  }
  case fault_kind::kill_controller:
    node = free_or(ops_.active_controller());
    ops_.log().add("the active controller: node " + std::to_string(node));
    break;
  default:
    node = pick_node(f.pick, busy);
  }
  if (node == 0) {
    ops_.log().add(std::string(to_string(f.kind)) + ": no node to put it on; skipped");
    return {{}, [] {}};
  }
  switch (f.kind) {
  case fault_kind::kill_leader:
  case fault_kind::kill_controller:
  case fault_kind::kill_node:
    ops_.kill(node);
    return {{node}, [this, node] { ops_.start(node); }};
  case fault_kind::pause:
    ops_.signal(node, SIGSTOP, "paused (SIGSTOP)");
    return {{node}, [this, node] { ops_.signal(node, SIGCONT, "resumed (SIGCONT)"); }};
  case fault_kind::cut_both:
  case fault_kind::cut_one_way: {
    const auto peers = pick_peers(node, f.pick2);
    const char* how = f.kind == fault_kind::cut_both
                          ? "isolate"
                          : ((f.pick2 / 3) % 2 == 0 ? "drop-outgoing" : "drop-incoming");
    ops_.fault(node, {how, "--peers", joined(peers)});
    return {{node}, [this, node] { ops_.fault(node, {"clear"}); }};
  }
  default:
    return {{}, [] {}};
  }
}

void nemesis::run_alone(const fault& f) {
  switch (f.kind) {
  case fault_kind::kill_all: {
    for (int id : ops_.running()) ops_.kill(id);
    sleep_ms(f.duration_ms);
    for (int id = 1; id <= 3; ++id) ops_.start(id);
    break;
  }
  case fault_kind::kill_all_two:
    kill_all_two_back(f);
    break;
  case fault_kind::drop_control:
    lose_control(f, true);
    break;
  case fault_kind::delay_control:
    lose_control(f, false);
    break;
  case fault_kind::damage_tail:
    damage_tail(f);
    break;
  case fault_kind::raise_min_isr:
    raise_min_isr(f);
    break;
  case fault_kind::disk_fault:
    disk_fault(f);
    break;
  case fault_kind::wipe_node:
    wipe_node(f);
    break;
  default:
    break;
  }
}

void nemesis::kill_all_two_back(const fault& f) {
  for (int id : ops_.running()) ops_.kill(id);
  const int left_out = static_cast<int>(f.pick % 3) + 1;
  std::vector<int> back;
  for (int id = 1; id <= 3; ++id)
    if (id != left_out) back.push_back(id);
  for (int id : back) ops_.start(id);
  // Two of three replicas of every partition are up, and min.insync.replicas=2: each must get a
  // leader among them.
  const auto offline = ops_.await_all(
      [&](const row& r) { return std::find(back.begin(), back.end(), r.leader) != back.end(); },
      settle_limit);
  if (!offline.empty())
    add("offline-with-two-nodes", "60 s after nodes " + joined(back) + " came back (node " +
                                      std::to_string(left_out) + " still down):" + offline);
  else
    ops_.log().add("every partition has a leader among nodes " + joined(back));
  sleep_ms(f.duration_ms);
  ops_.start(left_out);
}

void nemesis::lose_control(const fault& f, bool drop) {
  const int controller = await_controller();
  if (controller == 0) {
    ops_.log().add("no active controller: control messages not touched");
    return;
  }
  // A node that is not the controller and leads a partition (any other node if none does): its
  // partitions need new leaders, which only LeaderAndIsr makes.
  std::set<int> leaders;
  if (auto rows = ops_.describe_all())
    for (const auto& [tp, r] : *rows)
      if (r.leader > 0 && r.leader != controller) leaders.insert(r.leader);
  std::vector<int> victims(leaders.begin(), leaders.end());
  if (victims.empty())
    for (int id : ops_.running())
      if (id != controller) victims.push_back(id);
  if (drop) {
    std::vector<std::string> args{"drop-control", "--count", std::to_string(f.amount)};
    if (f.probability > 0) {
      args.push_back("--probability");
      args.push_back(std::to_string(f.probability));
    }
    ops_.fault(controller, args);
  } else {
    ops_.fault(controller, {"delay-control", "--delay-ms", std::to_string(f.amount)});
  }
  const int victim = victims.empty() ? 0 : victims[f.pick % victims.size()];
  if (victim) ops_.kill(victim);
  sleep_ms(f.duration_ms);
  ops_.fault(controller, {"clear"});
  if (victim) ops_.start(victim);
}

void nemesis::damage_tail(const fault& f) {
  const int node = static_cast<int>(f.pick % 3) + 1;
  ops_.kill(node);
  ops_.damage_tails(node, f.amount, f.pick2 % 2 == 1, static_cast<int>(f.pick2 / 2));
  sleep_ms(f.duration_ms);
  ops_.start(node);
}

void nemesis::wipe_node(const fault& f) {
  const int node = static_cast<int>(f.pick % 3) + 1;
  ops_.kill(node);
  ops_.wipe(node);
  sleep_ms(f.duration_ms);
  ops_.start(node);
  // Until its voter caught up and its replicas rejoined the ISRs, the node counts for neither
  // the quorum nor last-replica-standing recovery: the next fault must find it whole.
  if (const auto broken = ops_.await_whole(settle_limit); !broken.empty())
    ops_.log().add("not whole after node " + std::to_string(node) + " came back wiped:" + broken);
}

void nemesis::raise_min_isr(const fault& f) {
  const auto& topic = ops_.topics()[f.pick % ops_.topics().size()];
  if (!ops_.set_min_isr(topic, 3)) return;
  const int controller = await_controller();
  std::set<int> spared;
  if (controller) spared.insert(controller);
  const int victim = pick_node(f.pick2, spared);
  if (victim) {
    ops_.kill(victim);
    // Every partition's ISR is the two others once the controller fenced the victim.
    const auto pending = ops_.await_all(
        [&](const row& r) {
          return r.isr.size() == 2 && std::find(r.isr.begin(), r.isr.end(), victim) == r.isr.end();
        },
        30s);
    if (pending.empty()) {
      const auto from = test::workload_clock::now();
      ops_.log().add("min.insync.replicas=3 on " + topic +
                     " with an ISR of two: from now on no "
                     "acks=all record of it may be acknowledged");
      sleep_ms(f.duration_ms);
      windows_.push_back({topic, from, test::workload_clock::now()});
      ops_.log().add("end of the min.insync.replicas=3 window on " + topic);
    } else {
      ops_.log().add("the ISRs did not shrink to two:" + pending);
    }
    ops_.start(victim);
    const auto broken = ops_.await_whole(settle_limit);
    if (!broken.empty()) ops_.log().add("not whole before lowering min.insync.replicas:" + broken);
  }
  ops_.set_min_isr(topic, 2);
}

void nemesis::disk_fault(const fault& f) {
  // A full disk, a file system remounted read-only, or a disk failing every write: the node's
  // storage sees only another errno, and must go the same way.
  static constexpr std::array<const char*, 3> how{"disk-full", "disk-read-only", "disk-io-error"};
  const char* fault_name = how[f.pick2 % how.size()];
  const int node = pick_node(f.pick, {});
  if (node == 0) {
    ops_.log().add(std::string(fault_name) + ": no node to put it on; skipped");
    return;
  }
  // Its replicas can only move if each partition has another in-sync replica.
  const auto alone = ops_.await_all(
      [&](const row& r) {
        return std::any_of(r.isr.begin(), r.isr.end(), [&](int id) { return id != node; });
      },
      30s);
  if (!alone.empty())
    ops_.log().add("node " + std::to_string(node) + " is the only in-sync replica of:" + alone);
  ops_.fault(node, {fault_name});
  sleep_ms(f.duration_ms);
  if (auto rows = ops_.describe_all()) {
    std::string led;
    for (const auto& [tp, r] : *rows)
      if (r.leader == node) led += " " + tp.first + "-" + std::to_string(tp.second);
    ops_.log().add("partitions node " + std::to_string(node) +
                   " leads with " + fault_name + ":" + (led.empty() ? " none" : led));
  }
  // The node stops by itself once its Raft log cannot take a record (docs/operations.md).
  if (!ops_.stopped_by_itself(node)) ops_.fault(node, {"clear"});
  // As in Kafka, a replica whose log dir failed comes back only with a restart of its node.
  ops_.restart(node);
}

bool nemesis::run(const fault_step& step, int index) {
  ops_.log().add("step " + std::to_string(index) + ": " + to_string(step.first) +
                 (step.second ? " + " + to_string(*step.second) : ""));
  sleep_ms(step.quiet_ms);
  ++counts_[step.first.kind];
  if (step.second) ++counts_[step.second->kind];
  const bool overlapping = step.second.has_value();
  const auto alone = [](fault_kind k) {
    return k == fault_kind::kill_all || k == fault_kind::kill_all_two ||
           k == fault_kind::drop_control || k == fault_kind::delay_control ||
           k == fault_kind::damage_tail || k == fault_kind::raise_min_isr ||
           k == fault_kind::disk_fault || k == fault_kind::wipe_node;
  };
  if (alone(step.first.kind)) {
    run_alone(step.first);
  } else {
    auto first = start(step.first, {});
    if (!overlapping) {
      sleep_ms(step.first.duration_ms);
      first.heal();
    } else {
      sleep_ms(step.second_after_ms);
      auto second = start(*step.second, first.nodes);
      // Heal each when its duration is over, the earlier first.
      const int first_left = std::max(0, step.first.duration_ms - step.second_after_ms);
      const int second_left = step.second->duration_ms;
      sleep_ms(std::min(first_left, second_left));
      (first_left <= second_left ? first : second).heal();
      sleep_ms(std::abs(first_left - second_left));
      (first_left <= second_left ? second : first).heal();
    }
  }

  // Whatever a heal missed (a node that did not start): every node up, every switch clear.
  for (int id = 1; id <= 3; ++id) ops_.start(id);
  ops_.clear_faults();
  const auto label = "probe-" + std::to_string(index);
  auto broken = ops_.await_whole(settle_limit);
  if (broken.empty()) broken = ops_.probe(label, settle_limit);
  if (broken.empty()) {
    ops_.log().add("step " + std::to_string(index) +
                   ": healed; every partition whole and "
                   "taking acks=all writes");
    return true;
  }
  add(loses_control(step) ? "leader-not-serving" : "unavailable",
      "60 s after step " + std::to_string(index) + " healed:" + broken);
  return false;
}

} // namespace capstan::safety
