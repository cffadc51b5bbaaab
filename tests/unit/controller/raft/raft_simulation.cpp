#include "tests/unit/controller/raft/raft_simulation.hpp"

#include <algorithm>
#include <array>
#include <iostream>
#include <random>
#include <sstream>
#include <vector>

#include "actors/controller/raft/raft_core.hpp"
#include "tests/unit/controller/raft/raft_invariant_checker.hpp"
#include "tests/unit/controller/raft/step_choice.hpp"

namespace capstan::raft::test {

namespace {

sim_position g_position;

enum class action : uint8_t {
  deliver,
  drain,
  tick,
  propose,
  drop,
  duplicate,
  partition,
  heal,
  crash,
  torn_persist,
  restart,
  transfer,
  lose_disk,
  damage,
  add_voter,
  remove_voter,
  count_
};

constexpr std::array<uint32_t, static_cast<size_t>(action::count_)> base_weights{
    40, // deliver
    10, // drain
    20, // tick
    10, // propose
    3,  // drop
    3,  // duplicate
    2,  // partition
    1,  // heal
    1,  // crash
    1,  // torn_persist
    3,  // restart
    4,  // transfer
    1,  // lose_disk
    1,  // damage
    2,  // add_voter (with sim_options::voter_changes only)
    2,  // remove_voter (likewise)
};

// The state machine: the data of every applied index, from 1. Its snapshot is all of it.
using app_state = std::vector<bytes>;

bytes encode_app(const app_state& app) {
  bytes out;
  auto put32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  };
  put32(static_cast<uint32_t>(app.size()));
  for (const auto& d : app) {
    put32(static_cast<uint32_t>(d.size()));
    out.insert(out.end(), d.begin(), d.end());
  }
  return out;
}

app_state decode_app(const bytes& in) {
  app_state app;
  if (in.empty()) return app;
  size_t pos = 0;
  auto get32 = [&] {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t{in.at(pos++)} << (8 * i);
    return v;
  };
  const uint32_t n = get32();
  for (uint32_t k = 0; k < n; ++k) {
    const uint32_t len = get32();
    app.emplace_back(in.begin() + static_cast<ptrdiff_t>(pos),
                     in.begin() + static_cast<ptrdiff_t>(pos + len));
    pos += len;
  }
  return app;
}

bytes to_bytes(const std::string& s) {
  return bytes(s.begin(), s.end());
}

struct sim_node {
  node_id id;
  // The node's Raft directory id; a new one whenever its disk is lost or damaged, as
  // raft_storage gives one (docs/controller.md, "Quorum identity").
  directory_id dir{};
  durable_state disk;
  std::optional<raft_core> core;
  app_state app;
};

struct violation {
  std::string what;
};

class simulation {
public:
  explicit simulation(const sim_options& o) : opts_(o), rng_(o.seed) {
    for (size_t k = 0; k < opts_.nodes; ++k)
      voters_.push_back(node_id{static_cast<int32_t>(k + 1)});
    weights_ = draw_step_weights(base_weights, [this](uint64_t n) { return pick(n); });
    // Disks are lost or damaged in one seed of four: in the others, the crashes, partitions and
    // elections that rare protocol paths need come as often as before those steps existed.
    if (pick(4) != 0 || opts_.voter_changes)
      weights_[static_cast<size_t>(action::lose_disk)] =
          weights_[static_cast<size_t>(action::damage)] = 0;
    if (!opts_.voter_changes)
      weights_[static_cast<size_t>(action::add_voter)] =
          weights_[static_cast<size_t>(action::remove_voter)] = 0;
    // Per-seed shape of replication, so seeds cover small and large batches and windows.
    max_entries_ = 1 + pick(4);
    max_inflight_ = 1 + pick(3);
    snapshot_entries_ = 4 + pick(16);
    drain_at_once_ = 1 + pick(8);
    calm_switch_ = 20 + pick(200);
    // Most seeds start where a new quorum is once it found out it is new (every voter whole,
    // nothing else yet), so the fault phase has Raft to break; the others start from the new
    // directories raft_storage makes.
    const bool new_directories = pick(8) == 0;
    for (node_id id : voters_) {
      nodes_.push_back(sim_node{id, {}, {}, std::nullopt, {}});
      new_directory(nodes_.back());
      nodes_.back().disk.hard.catching_up = new_directories;
      group_.push_back(0);
    }
    // The spare starts empty, as a node added to a running quorum does.
    if (opts_.voter_changes) {
      nodes_.push_back(sim_node{node_id{static_cast<int32_t>(opts_.nodes + 1)}, {}, {}, std::nullopt, {}});
      new_directory(nodes_.back());
      group_.push_back(0);
    }
  }

  sim_result run() {
    sim_result r;
    g_position = sim_position{opts_.seed, opts_.nodes, 0};
    try {
      for (auto& n : nodes_) restart(n);
      for (size_t s = 0; s < opts_.fault_steps; ++s) fault_step();
      liveness();
    } catch (const violation& v) {
      r.failure = v.what;
    }
    r.step = step_;
    r.fingerprint = fingerprint_;
    stats_.steps = step_;
    stats_.leaders = checker_.leader_count();
    stats_.committed = checker_.committed_count();
    r.stats = stats_;
    return r;
  }

private:
  uint64_t pick(uint64_t n) { return rng_() % n; }

  // Counts a step; `what` describes it, built only when tracing (most runs never print).
  template <class F>
  void note(uint64_t kind, F&& what) {
    ++step_;
    g_position.step = step_;
    fingerprint_ = (fingerprint_ ^ kind) * 0x100000001b3ULL;
    if (opts_.trace) std::cerr << "step " << step_ << ": " << what() << "\n";
  }

  void fail(std::string what) { throw violation{std::move(what)}; }
  void expect(std::optional<std::string> v) {
    if (v) fail(*v);
  }

  sim_node& node(node_id id) { return nodes_[static_cast<size_t>(id.value() - 1)]; }

  std::vector<sim_node*> up_nodes() {
    std::vector<sim_node*> up;
    for (auto& n : nodes_)
      if (n.core) up.push_back(&n);
    return up;
  }

  raft_config config_for(const sim_node& n) {
    raft_config c;
    c.id = n.id;
    c.directory = n.dir;
    c.voters = voters_;
    // Short timeouts: the step budget then holds many elections.
    c.election_timeout_ticks = 4;
    c.heartbeat_ticks = 1;
    c.seed = rng_();
    c.max_entries_per_append = max_entries_;
    c.max_bytes_per_append = 64;
    c.max_inflight_appends = max_inflight_;
    c.snapshot_entries = snapshot_entries_;
    c.voter_catch_up_ticks = 100;
    return c;
  }

  // --- the driver: the persistence contract of raft_ready.hpp, step by step ----------------

  // What raft_storage makes of a directory that is new or lost something: a new id, and the
  // node catching up (the disk keeps whatever is still valid).
  void new_directory(sim_node& n) {
    for (auto& b : n.dir) b = static_cast<uint8_t>(rng_());
    n.dir[0] |= 1;
    n.disk.hard.catching_up = true;
  }

  void restart(sim_node& n) {
    n.core.emplace(config_for(n), n.disk);
    expect(checker_.on_start(n.id, n.disk.hard.term));
    n.app = decode_app(n.disk.snap.data);
    expect(checker_.on_snapshot_loaded(n.id, n.app));
  }

  void crash(sim_node& n) {
    n.core.reset();
    n.app.clear();
    ++stats_.crashes;
  }

  void send_all(std::vector<message>& out) {
    for (auto& m : out) {
      checker_.on_sent(m.from, m.body);
      network_.push_back(std::move(m));
    }
    out.clear();
  }

  // Persists the first `ops` steps of the ready; returns false if it stopped early.
  bool persist(sim_node& n, ready& rd, size_t ops) {
    size_t done = 0;
    auto step = [&] { return done++ < ops; };
    if (rd.hard_state) {
      if (!step()) return false;
      n.disk.hard = *rd.hard_state;
    }
    if (rd.truncate_from) {
      if (!step()) return false;
      n.disk.truncate_from(*rd.truncate_from);
    }
    if (rd.snapshot) {
      if (!step()) return false;
      n.disk.save_snapshot(*rd.snapshot);
    }
    for (const auto& e : rd.entries) {
      if (!step()) return false;
      n.disk.append(std::span<const entry>(&e, 1));
    }
    return true;
  }

  static size_t persist_ops(const ready& rd) {
    return (rd.hard_state ? 1 : 0) + (rd.truncate_from ? 1 : 0) + (rd.snapshot ? 1 : 0) +
           rd.entries.size();
  }

  // Hands the node's ready batches to the driver until none is left. With `torn`, the first
  // batch is persisted only part-way (or fully but not sent) and the node crashes.
  void drain(sim_node& n, bool torn = false) {
    while (n.core && n.core->has_ready()) {
      ready rd = n.core->take_ready();
      if (opts_.send_before_persist) send_all(rd.messages);
      if (torn) {
        const size_t ops = pick(persist_ops(rd) + 1);
        persist(n, rd, ops);
        ++stats_.torn_persists;
        crash(n);
        return;
      }
      persist(n, rd, SIZE_MAX);
      send_all(rd.messages);
      if (rd.apply_snapshot) {
        n.app = decode_app(rd.snapshot->data);
        ++stats_.snapshots_installed;
        if (n.app.size() != rd.snapshot->meta.index.value())
          fail("node " + std::to_string(n.id.value()) + " got a snapshot at " +
               std::to_string(rd.snapshot->meta.index.value()) + " holding " +
               std::to_string(n.app.size()) + " entries");
        expect(checker_.on_snapshot_loaded(n.id, n.app));
      }
      for (const auto& e : rd.committed) {
        n.app.push_back(e.data);
        expect(checker_.on_apply(n.id, e.index, e.data));
      }
      if (rd.voter_change && rd.voter_change->code == errc::none)
        ++(rd.voter_change->add ? stats_.voters_added : stats_.voters_removed);
      n.core->advance();
      if (rd.snapshot_due && pick(2) == 0) {
        auto s = n.core->compact(n.core->applied_index(), encode_app(n.app));
        if (!s) fail("compact at the applied index failed: " + s.err().to_string());
        ++stats_.compactions;
      }
    }
  }

  // --- checks -------------------------------------------------------------------------------

  void check(std::optional<node_id> changed) {
    views_.clear();
    for (const auto& n : nodes_) {
      if (!n.core) continue;
      const auto& c = *n.core;
      views_.push_back(node_view{c.id(), c.role(), c.term(), c.commit_index(),
                                 c.log().latest_snapshot().meta, c.log().entries(), c.directory()});
    }
    std::span<const node_id> ch;
    if (changed) ch = std::span<const node_id>(&*changed, 1);
    expect(checker_.check(views_, ch));
  }

  // --- steps --------------------------------------------------------------------------------

  // Storms (every kind of step) alternate with calm stretches (deliver, drain, tick and
  // propose only) in which a leader gets to commit a long log, so the next storm has more to
  // break: diverged tails, snapshots, followers far behind.
  action choose() {
    return static_cast<action>(next_step_kind(weights_, static_cast<size_t>(action::propose) + 1,
                                              calm_switch_, calm_,
                                              [this](uint64_t n) { return pick(n); }));
  }

  // Delivers in-flight message `k` (the network keeps send order); returns the receiver if it
  // took it.
  std::optional<node_id> deliver(size_t k) {
    message m = std::move(network_[k]);
    network_.erase(network_.begin() + static_cast<ptrdiff_t>(k));
    auto& to = node(m.to);
    const bool cut = group_[static_cast<size_t>(m.from.value() - 1)] !=
                     group_[static_cast<size_t>(m.to.value() - 1)];
    note(1, [&] {
      return "deliver " + describe(m) +
             (cut        ? " (partitioned: lost)"
              : !to.core ? " (down: lost)"
                         : "");
    });
    ++stats_.delivered;
    if (cut || !to.core) return std::nullopt;
    if (const auto* v = std::get_if<vote>(&m.body); v != nullptr && v->leadership_transfer)
      ++stats_.transfer_votes;
    to.core->step(m);
    return m.to;
  }

  // A node that thinks it leads (the newest such if several do), or null.
  sim_node* leader_up() {
    sim_node* leader = nullptr;
    for (auto& n : nodes_)
      if (n.core && n.core->role() == raft::role::leader &&
          (leader == nullptr || n.core->term() > leader->core->term()))
        leader = &n;
    return leader;
  }

  sim_node* random_up() {
    auto up = up_nodes();
    return up.empty() ? nullptr : up[pick(up.size())];
  }

  // A node whose disk may be lost or damaged without taking the quorum below a majority of whole
  // nodes (it could never elect a leader again, as Raft promises nothing then); or null.
  sim_node* losable() {
    std::vector<sim_node*> whole;
    for (auto& n : nodes_)
      if (!n.disk.hard.catching_up) whole.push_back(&n);
    if (whole.size() <= nodes_.size() / 2 + 1) return nullptr;
    return whole[pick(whole.size())];
  }

  // What raft_storage keeps of a damaged directory: the log up to the first damaged frame; or
  // nothing after a damaged snapshot; or, with a damaged hard state, the log's term and no vote.
  void damage(sim_node& n) {
    auto& d = n.disk;
    switch (pick(3)) {
    case 0:
      if (!d.entries.empty()) d.truncate_from(d.snap.meta.index + 1 + pick(d.entries.size()));
      break;
    case 1:
      d.snap = snapshot{};
      d.entries.clear();
      break;
    default:
      d.hard = hard_state{d.entries.empty() ? d.snap.meta.term : d.entries.back().term, {}};
      break;
    }
  }

  // A node that thinks it leads adds a node that is no voter, or removes a voter; returns it.
  std::optional<node_id> change_voters(bool add) {
    sim_node* n = leader_up();
    if (n == nullptr) return std::nullopt;
    std::vector<node_id> candidates;
    for (const auto& m : nodes_)
      if (n->core->is_voter(m.id) != add) candidates.push_back(m.id);
    if (candidates.empty()) return std::nullopt;
    const node_id who = candidates[pick(candidates.size())];
    proposal p;
    if (add) {
      voter v;
      v.id = who;
      v.endpoint = "node" + std::to_string(who.value());
      p = n->core->add_voter(std::move(v));
    } else {
      p = n->core->remove_voter(who);
    }
    note(add ? 18 : 19, [&] {
      return "node " + std::to_string(n->id.value()) + (add ? " adds voter " : " removes voter ") +
             std::to_string(who.value()) +
             (p.ok() ? std::string() : " -> " + std::string(to_string(p.code)));
    });
    return n->id;
  }

  void fault_step() {
    std::optional<node_id> changed;
    const action a = choose();
    switch (a) {
    case action::deliver:
      if (network_.empty()) return tick_step();
      changed = deliver(pick(network_.size()));
      break;
    case action::drain: {
      std::vector<sim_node*> ready_nodes;
      for (auto* n : up_nodes())
        if (n->core->has_ready()) ready_nodes.push_back(n);
      if (ready_nodes.empty()) return tick_step();
      auto* n = ready_nodes[pick(ready_nodes.size())];
      note(2, [&] { return "drain node " + std::to_string(n->id.value()); });
      drain(*n);
      changed = n->id;
      break;
    }
    case action::tick:
      return tick_step();
    case action::propose: {
      // Changes also come in calm stretches, where a leader lasts long enough to finish them.
      if (opts_.voter_changes && pick(4) == 0) {
        changed = change_voters(pick(2) == 0);
        if (changed) break;
      }
      // Mostly at a node that thinks it leads (a stale leader too); sometimes at any node.
      sim_node* n = nullptr;
      for (auto* u : up_nodes())
        if (u->core->role() == raft::role::leader && (n == nullptr || pick(2) == 0)) n = u;
      if (n == nullptr || pick(4) == 0) n = random_up();
      if (n == nullptr) return tick_step();
      const bytes data =
          to_bytes("n" + std::to_string(n->id.value()) + "#" + std::to_string(++proposals_));
      auto p = n->core->propose(data);
      note(3, [&] {
        return "propose at node " + std::to_string(n->id.value()) +
               (p.ok() ? " -> index " + std::to_string(p.index.value()) : " -> refused");
      });
      changed = n->id;
      break;
    }
    case action::drop:
      if (network_.empty()) return tick_step();
      {
        const size_t k = pick(network_.size());
        note(4, [&] { return "drop " + describe(network_[k]); });
        network_.erase(network_.begin() + static_cast<ptrdiff_t>(k));
      }
      break;
    case action::duplicate:
      if (network_.empty()) return tick_step();
      {
        const size_t k = pick(network_.size());
        note(5, [&] { return "duplicate " + describe(network_[k]); });
        network_.push_back(network_[k]);
      }
      break;
    case action::partition: {
      // Half the time a random split; otherwise a node that thinks it leads goes into a
      // minority, so it keeps taking proposals that the majority's next leader overwrites.
      sim_node* leader = leader_up();
      if (leader != nullptr && pick(2) == 0) {
        std::fill(group_.begin(), group_.end(), 0);
        group_[static_cast<size_t>(leader->id.value() - 1)] = 1;
        for (size_t extra = pick((nodes_.size() + 1) / 2); extra > 0; --extra)
          group_[pick(group_.size())] = 1;
      } else {
        for (auto& g : group_) g = static_cast<int>(pick(2));
      }
      note(6, [&] {
        std::string groups;
        for (int g : group_) groups += std::to_string(g);
        return "partition " + groups;
      });
      break;
    }
    case action::heal:
      std::fill(group_.begin(), group_.end(), 0);
      note(7, [&] { return "heal"; });
      break;
    case action::crash: {
      // Half the time the leader: its crash is what leaves diverged logs behind.
      sim_node* n = pick(2) == 0 ? leader_up() : nullptr;
      if (n == nullptr) n = random_up();
      if (n == nullptr) return tick_step();
      note(8, [&] { return "crash node " + std::to_string(n->id.value()); });
      crash(*n);
      break;
    }
    case action::torn_persist: {
      std::vector<sim_node*> ready_nodes;
      for (auto* n : up_nodes())
        if (n->core->has_ready()) ready_nodes.push_back(n);
      if (ready_nodes.empty()) return tick_step();
      auto* n = ready_nodes[pick(ready_nodes.size())];
      note(9, [&] { return "crash node " + std::to_string(n->id.value()) + " while it persists"; });
      drain(*n, true);
      break;
    }
    case action::restart: {
      std::vector<sim_node*> down;
      for (auto& n : nodes_)
        if (!n.core) down.push_back(&n);
      if (down.empty()) return tick_step();
      auto* n = down[pick(down.size())];
      note(10, [&] { return "restart node " + std::to_string(n->id.value()); });
      restart(*n);
      changed = n->id;
      break;
    }
    case action::transfer: {
      sim_node* n = leader_up();
      if (n == nullptr) return tick_step();
      n->core->transfer_leadership();
      note(15, [&] {
        const auto to = n->core->transferee();
        return "node " + std::to_string(n->id.value()) + " hands its leadership to " +
               (to ? "node " + std::to_string(to->value()) : std::string("nobody"));
      });
      changed = n->id;
      break;
    }
    case action::lose_disk:
    case action::damage: {
      auto* n = losable();
      if (n == nullptr) return tick_step();
      const bool lose = a == action::lose_disk;
      note(lose ? 16 : 17, [&] {
        return std::string(lose ? "lose the disk of node " : "damage the disk of node ") +
               std::to_string(n->id.value());
      });
      if (n->core) crash(*n);
      if (lose)
        n->disk = durable_state{};
      else
        damage(*n);
      new_directory(*n);
      checker_.on_lost(n->id);
      ++stats_.disks_lost;
      break;
    }
    case action::add_voter:
    case action::remove_voter:
      changed = change_voters(a == action::add_voter);
      if (!changed) return tick_step();
      break;
    case action::count_:
      break;
    }
    if (changed && pick(8) < drain_at_once_) drain(node(*changed));
    check(changed);
  }

  void tick_step() {
    auto* n = random_up();
    if (n == nullptr) {
      note(11, [&] { return "idle (every node is down)"; });
      check(std::nullopt);
      return;
    }
    note(12, [&] { return "tick node " + std::to_string(n->id.value()); });
    n->core->tick();
    if (pick(8) < drain_at_once_) drain(*n);
    check(n->id);
  }

  // Faults stop: the network heals and delivers in send order without loss, crashed nodes
  // restart, and every node drains after each input.
  void liveness() {
    std::fill(group_.begin(), group_.end(), 0);
    note(13, [&] { return "heal; faults stop"; });
    for (auto& n : nodes_) {
      if (!n.core) {
        note(10, [&] { return "restart node " + std::to_string(n.id.value()); });
        restart(n);
      }
      drain(n);
      check(n.id);
    }
    std::vector<std::pair<log_index, bytes>> markers;
    std::optional<raft_term> proposed_in;
    const size_t start = step_;
    while (step_ - start < opts_.liveness_steps) {
      // Every voter of the current leader's set, and only those: a learner or a removed voter
      // is not replicated to.
      const sim_node* now_leading = nullptr;
      for (const auto& n : nodes_)
        if (n.core->role() == raft::role::leader) now_leading = &n;
      for (const auto& marker : markers) {
        if (now_leading == nullptr) break;
        const auto& index = marker.first; // not a structured binding: the lambda captures it
        const auto& data = marker.second;
        const bool everywhere = std::all_of(nodes_.begin(), nodes_.end(), [&](const sim_node& n) {
          return !now_leading->core->is_voter(n.id) ||
                 (n.app.size() >= index.value() && n.app[index.value() - 1] == data);
        });
        if (everywhere) {
          stats_.liveness_steps = step_ - start;
          return;
        }
      }
      std::optional<node_id> changed;
      sim_node* leader = nullptr;
      for (auto& n : nodes_)
        if (n.core->role() == raft::role::leader) leader = &n;
      // A leader still handing over (from the fault phase) refuses proposals until it gives up.
      if (leader != nullptr && proposed_in != leader->core->term() && !leader->core->transferee()) {
        proposed_in = leader->core->term();
        bytes data = to_bytes("live#" + std::to_string(proposed_in->value()));
        auto p = leader->core->propose(data);
        note(14, [&] { return "propose at leader " + std::to_string(leader->id.value()); });
        if (p.ok()) markers.emplace_back(p.index, std::move(data));
        changed = leader->id;
        drain(*leader);
      } else if (!network_.empty() && pick(8) != 0) {
        changed = deliver(0);
        if (changed) drain(node(*changed));
      } else {
        auto& n = nodes_[pick(nodes_.size())];
        note(12, [&] { return "tick node " + std::to_string(n.id.value()); });
        n.core->tick();
        drain(n);
        changed = n.id;
      }
      check(changed);
    }
    std::string nodes;
    for (const auto& n : nodes_) {
      nodes += "; node " + std::to_string(n.id.value()) + " " +
               std::string(to_string(n.core->role())) + " t" +
               std::to_string(n.core->term().value()) + " last " +
               std::to_string(n.core->last_index().value()) + " commit " +
               std::to_string(n.core->commit_index().value()) + " voters";
      for (const auto& v : n.core->voters()) nodes += " " + std::to_string(v.id.value());
      if (n.core->catching_up()) nodes += " (catching up)";
    }
    fail("liveness: no proposal reached every node within " + std::to_string(opts_.liveness_steps) +
         " steps after the faults stopped" + nodes);
  }

  sim_options opts_;
  std::mt19937_64 rng_;
  std::array<uint32_t, static_cast<size_t>(action::count_)> weights_{};
  size_t max_entries_ = 1;
  size_t max_inflight_ = 1;
  uint64_t snapshot_entries_ = 8;
  // A node that took an input drains in the same step unless pick(8) >= this; otherwise its
  // ready waits for a drain step (more inputs pile up before it persists).
  uint64_t drain_at_once_ = 8;
  uint64_t calm_switch_ = 100; // a stretch lasts this many steps on average
  bool calm_ = false;
  std::vector<node_id> voters_;
  std::vector<sim_node> nodes_;
  std::vector<int> group_;
  std::vector<message> network_;
  raft_invariant_checker checker_;
  std::vector<node_view> views_;
  sim_stats stats_;
  size_t step_ = 0;
  uint64_t proposals_ = 0;
  uint64_t fingerprint_ = 0xcbf29ce484222325ULL;
};

} // namespace

std::string describe(const message& m) {
  std::ostringstream s;
  s << m.from.value() << "->" << m.to.value() << " ";
  std::visit(
      [&](const auto& b) {
        using T = std::decay_t<decltype(b)>;
        if constexpr (std::is_same_v<T, pre_vote>)
          s << "PreVote t" << b.term.value();
        else if constexpr (std::is_same_v<T, pre_vote_response>)
          s << "PreVoteResponse t" << b.term.value() << (b.granted ? " yes" : " no");
        else if constexpr (std::is_same_v<T, vote>)
          s << "Vote t" << b.term.value() << (b.leadership_transfer ? " (transfer)" : "");
        else if constexpr (std::is_same_v<T, vote_response>)
          s << "VoteResponse t" << b.term.value() << (b.granted ? " yes" : " no");
        else if constexpr (std::is_same_v<T, append_entries>)
          s << "AppendEntries t" << b.term.value() << " prev " << b.prev_log_index.value() << "/t"
            << b.prev_log_term.value() << " n=" << b.entries.size() << " commit "
            << b.leader_commit.value();
        else if constexpr (std::is_same_v<T, append_entries_response>)
          s << "AppendEntriesResponse t" << b.term.value() << (b.success ? " ok " : " refused ")
            << b.index.value();
        else if constexpr (std::is_same_v<T, install_snapshot>)
          s << "InstallSnapshot t" << b.term.value() << " at " << b.snap.meta.index.value();
        else if constexpr (std::is_same_v<T, install_snapshot_response>)
          s << "InstallSnapshotResponse t" << b.term.value() << " " << b.last_index.value();
        else if constexpr (std::is_same_v<T, timeout_now>)
          s << "TimeoutNow t" << b.term.value();
        else if constexpr (std::is_same_v<T, catch_up_request>)
          s << "CatchUpRequest t" << b.term.value();
        else
          s << "CatchUpResponse t" << b.term.value() << (b.fresh ? " fresh" : "");
      },
      m.body);
  if (m.catching_up) s << " (catching up)";
  return s.str();
}

sim_result run_simulation(const sim_options& options) {
  return simulation(options).run();
}

const sim_position& current_sim_position() {
  return g_position;
}

} // namespace capstan::raft::test
