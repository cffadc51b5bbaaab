#include "tests/unit/controller/controller_simulation.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <tuple>
#include <variant>
#include <vector>

#include "actors/controller/active_controller.hpp"
#include "actors/controller/controller_driver.hpp"
#include "actors/controller/metadata/broker_decisions.hpp"
#include "actors/controller/quorum_member.hpp"
#include "actors/controller/raft/raft_codec.hpp"
#include "actors/controller/raft/raft_storage_format.hpp"
#include "actors/controller/raft/raft_storage_records.hpp"
#include "actors/replica/control_codec.hpp"
#include "actors/replica/control_sequence.hpp"
#include "actors/replica/metadata_cache.hpp"
#include "runtime/cluster/topic_validation.hpp"
#include "tests/unit/controller/controller_invariant_checker.hpp"
#include "tests/unit/controller/memory_raft_files.hpp"
#include "tests/unit/controller/raft/raft_invariant_checker.hpp"
#include "tests/unit/controller/raft/raft_simulation.hpp"
#include "tests/unit/controller/raft/step_choice.hpp"
#include "tests/unit/controller/simulated_log.hpp"

namespace capstan::controller::test {

namespace {

using raft::log_index;
namespace sf = raft::storage_format;

const std::string cluster = "sim-cluster";
// Simulated time: every voter tick moves the one clock on by this much. The ratios follow
// Kafka's defaults (broker.session.timeout.ms 9000, broker.heartbeat.interval.ms 2000, a
// registration waits 2000 and a heartbeat one interval): an election timeout is 4 ticks of a
// voter, so a few hundred milliseconds here.
constexpr int64_t tick_ms = 25;
constexpr int64_t session_timeout_ms = 500;
constexpr int64_t heartbeat_interval_ms = 100;
// A broker gives up on an answer after this long and asks the next voter.
constexpr int64_t registration_timeout_ms = 500;
// A control message unanswered this long failed (the controller actor's request_timeout).
constexpr int64_t control_timeout_ms = 250;

enum class action : uint8_t {
  deliver,
  tick,
  broker,
  fetch,
  alter_isr,
  client,
  drop,
  duplicate,
  partition,
  heal,
  crash_voter,
  torn_write,
  restart_voter,
  lose_disk,
  damage_disk,
  crash_broker,
  restart_broker,
  transfer,
  count_
};

constexpr std::array<uint32_t, static_cast<size_t>(action::count_)> base_weights{
    40, // deliver
    20, // tick
    12, // broker: register or heartbeat
    8,  // fetch: a follower catches up with its leader
    6,  // alter_isr
    4,  // client
    3,  // drop
    3,  // duplicate
    2,  // partition
    1,  // heal
    1,  // crash_voter
    1,  // torn_write
    3,  // restart_voter
    1,  // lose_disk
    1,  // damage_disk
    2,  // crash_broker
    3,  // restart_broker
    1,  // transfer
};

struct raft_frame {
  capnp_frame frame;
};
struct request {
  uint64_t id = 0;
  controller_request body;
};
struct answer {
  uint64_t id = 0;
  controller_answer body;
};
// A control message of a voter's driver, and a broker's answer to it.
struct control {
  uint64_t id = 0;
  uint64_t generation = 0;
  control_streams::sendable message;
};
struct control_answer {
  uint64_t id = 0;
  uint64_t generation = 0;
  bool applied = false;
};

// Node 0 is the client: it is never cut off and nobody reads its answers.
struct envelope {
  int from = 0;
  int to = 0;
  std::variant<raft_frame, request, answer, control, control_answer> body;
};

using partition_key = std::pair<topic_id, int32_t>;

// A voter: a quorum member with the controller actor's driver beside it (controller_driver),
// whose requests to its shell the simulation carries out in memory.
struct sim_voter {
  node_id id;
  memory_disk disk;
  std::unique_ptr<quorum_member> member; // null: down
  std::unique_ptr<controller_io> io;
  std::unique_ptr<controller_driver> driver;
  // Where each answer the driver gives goes: the asker and its request id, and the request's
  // kind (its index in controller_request).
  struct asker {
    int node = -1;
    uint64_t request = 0;
    size_t kind = 0;
  };
  std::map<uint64_t, asker> askers;
  uint64_t next_reply = 0;
  // What the driver asked for and gets once its current input returns: proposals the member
  // refused at once, and the image to become active with.
  std::vector<std::pair<uint64_t, raft::proposal>> refused_proposals;
  bool image_wanted = false;
  // The control message out to each node: its id, generation and when it went.
  struct out_message {
    uint64_t id = 0;
    uint64_t generation = 0;
    int64_t sent = 0;
  };
  std::map<int, out_message> out;
  // The logs behind the leaderless reports of each node's latest heartbeat the active driver
  // took, as active_controller keeps them.
  std::map<int, std::map<partition_key, simulated_log>> reports;
  // The member's image before the entry it applies next.
  metadata_image image{cluster};
  // Its disk was lost or damaged since it was last seen whole.
  bool lost = false;
};

// A broker's replica of one partition.
struct sim_replica {
  simulated_log log;
  // The latest leader epoch it acted on (led, followed, or reported without a leader): like the
  // replica manager, it ignores a view of the partition older than that.
  int32_t epoch = -1;
};

struct sim_broker {
  node_id id;
  bool up = false;
  incarnation_id incarnation{};
  // What its data dir keeps across a crash (every append is taken as synced): the incarnation of
  // the last process whose registration was accepted (zeros: none), as broker_lifecycle writes
  // it, and its replicas.
  incarnation_id kept_incarnation{};
  std::map<partition_key, sim_replica> replicas;
  // The kept incarnation as this process read it at its start: its registrations name it.
  incarnation_id previous{};
  int64_t epoch = -1; // of its registration; -1: none yet
  std::optional<uint64_t> request;
  int64_t request_sent = 0;
  int target = 1;
  int64_t next_heartbeat = 0;
  // What this process took from the controllers' control messages, as a replica manager does:
  // the state of each partition it hosts (LeaderAndIsr), the metadata cache (UpdateMetadata), the
  // highest controller epoch seen and its place in that controller's stream.
  std::map<partition_key, partition_state_msg> states;
  std::optional<metadata_cache> cache;
  int32_t controller_epoch = -1;
  control_sequence stream;
};

struct violation {
  std::string what;
};

class simulation {
public:
  explicit simulation(const controller_sim_options& o) : opts_(o), rng_(o.seed) {
    weights_ = raft::test::draw_step_weights(base_weights, [this](uint64_t n) { return pick(n); });
    snapshot_entries_ = 4 + pick(12);
    calm_switch_ = 20 + pick(100);
    for (size_t k = 1; k <= opts_.voters; ++k) {
      voters_.push_back(std::make_unique<sim_voter>());
      voters_.back()->id = node_id{static_cast<int32_t>(k)};
      voter_ids_.push_back(voters_.back()->id);
    }
    for (size_t k = 1; k <= opts_.brokers; ++k) {
      brokers_.push_back(sim_broker{});
      brokers_.back().id = node_id{static_cast<int32_t>(k)};
    }
    group_.assign(opts_.brokers + 1, 0);
  }

  controller_sim_result run() {
    controller_sim_result r;
    try {
      for (auto& v : voters_) restart_voter(*v);
      for (auto& b : brokers_) restart_broker(b, true);
      // Most seeds first let the new cluster settle (every broker registered, a few topics), so
      // the faults have a running cluster to break; the others break it while it starts.
      if (pick(8) != 0) warm_up();
      for (size_t s = 0; s < opts_.fault_steps; ++s) fault_step();
      liveness();
    } catch (const violation& v) {
      r.failure = v.what;
    }
    for (const auto& [key, log] : acked_) stats_.acknowledged += static_cast<size_t>(log.end());
    r.step = step_;
    r.fingerprint = fingerprint_;
    stats_.steps = step_;
    r.stats = stats_;
    return r;
  }

private:
  uint64_t pick(uint64_t n) { return rng_() % n; }
  int64_t now() const { return now_; }

  template <class F>
  void note(uint64_t kind, F&& what) {
    ++step_;
    fingerprint_ = (fingerprint_ ^ kind) * 0x100000001b3ULL;
    if (opts_.trace) std::cerr << "step " << step_ << " (t=" << now_ << "ms): " << what() << "\n";
  }

  [[noreturn]] void fail(std::string what) { throw violation{std::move(what)}; }
  void expect(std::optional<std::string> v) {
    if (v) fail(*v);
  }

  sim_voter& voter(int id) { return *voters_[static_cast<size_t>(id - 1)]; }
  sim_broker& broker(int id) { return brokers_[static_cast<size_t>(id - 1)]; }
  bool is_voter(int id) const { return id >= 1 && static_cast<size_t>(id) <= opts_.voters; }
  bool cut(int a, int b) const {
    return a != 0 && b != 0 && group_[static_cast<size_t>(a)] != group_[static_cast<size_t>(b)];
  }

  std::vector<sim_voter*> up_voters() {
    std::vector<sim_voter*> up;
    for (auto& v : voters_)
      if (v->member) up.push_back(v.get());
    return up;
  }

  void send(int from, int to, decltype(envelope::body) body) {
    network_.push_back(envelope{from, to, std::move(body)});
  }

  // --- voters --------------------------------------------------------------------------------

  void restart_voter(sim_voter& v) {
    v.disk.reopen();
    quorum_member_config c;
    c.raft.id = v.id;
    c.raft.voters = voter_ids_;
    // Short timeouts: the step budget then holds many elections.
    c.raft.election_timeout_ticks = 4;
    c.raft.heartbeat_ticks = 1;
    c.raft.seed = rng_();
    c.raft.max_entries_per_append = 1 + pick(4);
    c.raft.max_inflight_appends = 1 + pick(3);
    c.raft.snapshot_entries = snapshot_entries_;
    c.cluster_id = cluster;
    for (auto& b : c.new_directory) b = static_cast<uint8_t>(rng_());
    c.new_directory[0] |= 1;
    auto m = quorum_member::open(c, v.disk.open("voter-" + std::to_string(v.id.value())));
    if (!m)
      fail("voter " + std::to_string(v.id.value()) + " does not open: " + m.err().to_string());
    v.member = std::make_unique<quorum_member>(std::move(*m));
    active_controller_options co;
    co.node = v.id;
    co.session_timeout_ms = session_timeout_ms;
    co.seed = rng_();
    v.io = std::make_unique<voter_io>(*this, v);
    v.driver = std::make_unique<controller_driver>(co, *v.io);
    v.askers.clear();
    v.refused_proposals.clear();
    v.image_wanted = false;
    v.out.clear();
    v.reports.clear();
    v.image = v.member->image();
    const auto& core = v.member->core();
    const auto snap = core.log().snapshot_index();
    expect(raft_.on_start(v.id, core.term()));
    expect(raft_.on_snapshot_loaded(v.id, applied_prefix(snap)));
    expect(images_.on_loaded(v.id, snap, v.image));
    v.member->observe(quorum_member::drain_observer{
        [this, &v](const raft::message& m) { raft_.on_sent(v.id, m.body); },
        [this, &v](const raft::entry& e, const status& applied) { on_entry(v, e, applied); },
        [this, &v](const raft::snapshot_meta& meta) { on_snapshot(v, meta); }});
  }

  // The data of every index up to `n` as first applied anywhere: what a snapshot at `n` holds.
  std::span<const bytes> applied_prefix(log_index n) {
    if (n.value() > applied_data_.size())
      fail("a snapshot at " + std::to_string(n.value()) + " covers entries nobody applied");
    return std::span<const bytes>(applied_data_).first(n.value());
  }

  void on_entry(sim_voter& v, const raft::entry& e, const status& applied) {
    ++stats_.entries_applied;
    const bool first = e.index.value() == applied_data_.size() + 1;
    if (first) applied_data_.push_back(e.data);
    expect(raft_.on_apply(v.id, e.index, e.data));
    const metadata_image& after = v.member->image();
    expect(images_.on_applied(v.id, e.index, v.image, after, applied));
    if (first) committed_ = after;
    v.image = after;
  }

  void on_snapshot(sim_voter& v, const raft::snapshot_meta& meta) {
    ++stats_.snapshots_loaded;
    v.image = v.member->image();
    expect(raft_.on_snapshot_loaded(v.id, applied_prefix(meta.index)));
    expect(images_.on_loaded(v.id, meta.index, v.image));
  }

  void crash_voter(sim_voter& v) {
    v.member.reset();
    v.driver.reset();
    v.io.reset();
  }

  // The driver's requests to its shell, carried out as the controller actor does, over the
  // simulated network and the voter's member.
  class voter_io final : public controller_io {
  public:
    voter_io(simulation& sim, sim_voter& v) : sim_(sim), v_(v) {}

    void reply(uint64_t reply, const controller_answer& a) override {
      auto it = v_.askers.find(reply);
      if (it == v_.askers.end()) return;
      const auto asker = it->second;
      v_.askers.erase(it);
      sim_.count_answer(asker.kind, a);
      sim_.send(v_.id.value(), asker.node, answer{asker.request, a});
    }
    void propose(uint64_t token, const std::vector<metadata_record>& records) override {
      if (const auto* p = v_.driver->proposal(token)) sim_.check_decision(v_, *p);
      auto proposed = v_.member->propose(token, records);
      if (!proposed.ok()) v_.refused_proposals.emplace_back(token, std::move(proposed));
    }
    void read_image() override { v_.image_wanted = true; }
    void learn_nodes(const metadata_image&) override {}
    void send(node_id to, uint64_t generation, control_streams::sendable m) override {
      const uint64_t id = ++sim_.control_ids_;
      v_.out[to.value()] = sim_voter::out_message{id, generation, sim_.now()};
      sim_.send(v_.id.value(), to.value(), control{id, generation, std::move(m)});
    }

  private:
    simulation& sim_;
    sim_voter& v_;
  };

  void count_answer(size_t kind, const controller_answer& a) {
    if (auto r = std::get_if<broker_registration_response_msg>(&a); r && r->error == errc::none)
      ++stats_.registrations;
    if (auto t = std::get_if<topic_response_msg>(&a);
        t && t->error == errc::none && kind == controller_request(topic_spec{}).index())
      ++stats_.topics;
    if (auto ap = std::get_if<alter_partition_response_msg>(&a))
      for (const auto& item : ap->partitions) stats_.isr_changes += item.error == errc::none;
  }

  // What a voter's driver decided, as it proposes it: fencings and recoveries are counted, and a
  // leader that last-replica-standing recovery elects (from outside the ISR) must hold every
  // record acknowledged before in the log it reported, which is the log the decision rests on (a
  // replica without a leader neither leads nor follows at that leader epoch or an older one, so
  // it still holds that log when it takes the leadership).
  void check_decision(sim_voter& v, const prepared_request& p) {
    if (std::holds_alternative<session_expiry>(p.request)) ++stats_.fencings;
    if (!std::holds_alternative<leader_recovery>(p.request)) return;
    stats_.recoveries += p.changes.records.size();
    for (const auto& r : p.changes.records) {
      const auto* c = std::get_if<partition_change_record>(&r);
      if (c == nullptr || !c->leader) continue;
      images_.on_recovery_decided(c->topic, c->partition, c->leader_epoch, *c->leader);
      const partition_key key{c->topic, c->partition.value()};
      const auto& reported = v.reports[c->leader->value()];
      auto it = reported.find(key);
      if (it == reported.end())
        fail("recovery: voter " + std::to_string(v.id.value()) + " elects node " +
             std::to_string(c->leader->value()) + " for partition " + std::to_string(key.second) +
             ", which reported no log for it");
      const auto& acked = acked_[key];
      if (!it->second.holds(acked))
        fail("acknowledged records: partition " + std::to_string(key.second) +
             " recovered on node " + std::to_string(c->leader->value()) + " (reported last epoch " +
             std::to_string(it->second.last_epoch()) + ", log end " +
             std::to_string(it->second.end()) +
             "), which lacks records acknowledged up to offset " + std::to_string(acked.end()) +
             " (last epoch " + std::to_string(acked.last_epoch()) + ")");
    }
  }

  int32_t leader_hint(const sim_voter& v) const {
    const auto l = v.member->core().leader();
    return l ? l->value() : -1;
  }

  // Drains the member and hands the driver what came of it (proposals' outcomes, the image it
  // asked for), until nothing is left to do. A failed persist (the armed crash) takes the voter
  // down.
  void run_voter(sim_voter& v) {
    while (v.member) {
      auto out = v.member->drain([this, &v](node_id to, capnp_frame f) {
        send(v.id.value(), to.value(), raft_frame{std::move(f)});
      });
      if (!out) {
        ++stats_.torn_writes;
        ++stats_.voter_crashes;
        crash_voter(v);
        return;
      }
      // As the quorum actor answers a proposal: committed (applied, or with the error its records
      // failed to apply with), or NOT_CONTROLLER / REQUEST_TIMED_OUT.
      for (auto& o : *out) {
        if (o.code == errc::not_controller || o.code == errc::request_timed_out) {
          v.driver->proposal_failed(o.token, o.code, o.message, leader_hint(v));
          continue;
        }
        const error applied = o.code == errc::none ? error{} : make_error(o.code, o.message);
        v.driver->proposal_committed(o.token, v.member->image(), applied, now());
      }
      auto refused = std::move(v.refused_proposals);
      v.refused_proposals.clear();
      for (auto& [token, r] : refused)
        v.driver->proposal_failed(token, errc::not_controller, "not the leader",
                                  r.leader ? std::optional<int32_t>(r.leader->value())
                                           : std::nullopt);
      if (v.image_wanted) {
        v.image_wanted = false;
        v.reports.clear();
        v.driver->activate(v.member->image(), now());
        ++stats_.activations;
      }
      if (!v.member->core().has_ready() && v.refused_proposals.empty() && !v.image_wanted) return;
    }
  }

  // The controller actor's poll, and its control messages' timeouts.
  void poll(sim_voter& v) {
    v.driver->status(v.member->status_now(), now());
    for (auto it = v.out.begin(); it != v.out.end();) {
      if (now() - it->second.sent <= control_timeout_ms) {
        ++it;
        continue;
      }
      const auto [to, m] = *it;
      it = v.out.erase(it);
      v.driver->answered(node_id{to}, m.generation, false);
    }
  }

  void take_request(sim_voter& v, int from, request r) {
    if (auto hb = std::get_if<broker_heartbeat_msg>(&r.body);
        hb && v.driver->active() &&
        check_broker_epoch(v.driver->core().image(), hb->node, broker_epoch{hb->broker_epoch})) {
      auto& reported = v.reports[hb->node.value()];
      reported.clear();
      if (auto it = report_logs_.find(r.id); it != report_logs_.end()) reported = it->second;
    }
    const uint64_t reply = ++v.next_reply;
    v.askers[reply] = sim_voter::asker{from, r.id, r.body.index()};
    const controller_request shape = r.body;
    v.driver->request(std::move(r.body), shape, reply, now());
    run_voter(v);
  }

  void take_control_answer(sim_voter& v, int from, const control_answer& a) {
    auto it = v.out.find(from);
    if (it == v.out.end() || it->second.id != a.id) return;
    v.out.erase(it);
    v.driver->answered(node_id{from}, a.generation, a.applied);
    run_voter(v);
  }

  // --- brokers -------------------------------------------------------------------------------

  // Starts a new process of `b`'s broker. On a new data dir (a lost disk, a new machine under its
  // id) its replicas start empty and it names no predecessor; otherwise it keeps its replicas'
  // logs and names the last process on the data dir whose registration was accepted (which did
  // not stop cleanly).
  void restart_broker(sim_broker& b, bool new_data_dir) {
    b.up = true;
    if (new_data_dir) {
      b.kept_incarnation = {};
      b.replicas.clear();
    }
    b.previous = b.kept_incarnation;
    for (auto& x : b.incarnation) x = static_cast<uint8_t>(rng_());
    b.epoch = -1;
    b.request.reset();
    b.target = 1 + static_cast<int>(pick(opts_.voters));
    b.states.clear();
    b.cache.reset();
    b.controller_epoch = -1;
    b.stream = control_sequence{};
  }

  void redirect(sim_broker& b, int32_t hint) {
    b.target = is_voter(hint) ? hint : b.target % static_cast<int>(opts_.voters) + 1;
  }

  // `r` takes the partition's state `p`, unless it acted on a later leader epoch already.
  static bool takes(sim_replica& r, const partition_state_msg& p) {
    if (p.epoch.value() < r.epoch) return false;
    r.epoch = p.epoch.value();
    return true;
  }

  // Whether `b` admits a control message, as a replica manager does: not of a controller epoch
  // older than one it saw, not for another process of its node, and next in its controller's
  // stream. Nullopt: refused; false: a duplicate, answered as applied without acting on it.
  static std::optional<bool> admit(sim_broker& b, int32_t epoch, const incarnation_bytes& target,
                                   int64_t sequence, bool full) {
    if (epoch < b.controller_epoch) return std::nullopt;
    b.controller_epoch = epoch;
    const bool unset = std::all_of(target.begin(), target.end(), [](uint8_t x) { return x == 0; });
    if (!unset && target != b.incarnation) return std::nullopt;
    switch (b.stream.admit(epoch, sequence, full)) {
    case control_sequence::verdict::apply:
      return true;
    case control_sequence::verdict::duplicate:
      return false;
    case control_sequence::verdict::gap:
      return std::nullopt;
    }
    return std::nullopt;
  }

  // `b` takes a control message (controller_streams' frames, decoded as a node decodes them);
  // returns whether it applied it.
  bool take_control(sim_broker& b, const control_streams::sendable& m) {
    switch (m.what) {
    case outgoing_message::kind::update_metadata: {
      auto u = decode_update_metadata(m.frame);
      if (!u) fail("UpdateMetadata does not decode: " + u.err().to_string());
      auto admitted = admit(b, u->controller_epoch, u->target, u->sequence, u->full);
      if (!admitted) return false;
      if (!*admitted) return true;
      if (u->full || !b.cache)
        b.cache.emplace(*u, std::map<std::string, std::string>{});
      else
        b.cache = metadata_cache(*b.cache, *u);
      return true;
    }
    case outgoing_message::kind::leader_and_isr: {
      auto l = decode_leader_and_isr(m.frame);
      if (!l) fail("LeaderAndIsr does not decode: " + l.err().to_string());
      auto admitted = admit(b, l->controller_epoch, l->target, l->sequence, false);
      if (!admitted) return false;
      if (!*admitted) return true;
      for (const auto& p : l->partitions) {
        if (std::find(p.replicas.begin(), p.replicas.end(), b.id) == p.replicas.end()) continue;
        const partition_key key{p.id, p.tp.second};
        auto it = b.states.find(key);
        // As the replica manager: only a newer state is taken.
        if (it != b.states.end() && !supersedes(p, it->second.epoch, it->second.partition_epoch))
          continue;
        b.states[key] = p;
      }
      return true;
    }
    case outgoing_message::kind::stop_replica: {
      auto r = decode_stop_replica(m.frame);
      if (!r) fail("StopReplica does not decode: " + r.err().to_string());
      auto admitted = admit(b, r->controller_epoch, r->target, r->sequence, false);
      if (!admitted) return false;
      if (!*admitted) return true;
      for (const auto& p : r->partitions) {
        const partition_key key{p.id, p.tp.second};
        auto it = b.states.find(key);
        if (it == b.states.end() || (p.epoch.value() != -2 && p.epoch < it->second.epoch)) continue;
        b.states.erase(it);
        if (r->delete_partitions) b.replicas.erase(key);
      }
      return true;
    }
    }
    return false;
  }

  // A producer's record for each partition `b` leads.
  void produce(sim_broker& b) {
    if (!b.up) return;
    for (const auto& [key, p] : b.states) {
      if (p.leader != b.id) continue;
      auto& r = b.replicas[key];
      if (takes(r, p)) {
        r.log.append(p.epoch.value());
        acknowledge(key);
      }
    }
  }

  static int32_t min_insync(const topic_image& t) {
    const int32_t fallback = decision_options{}.min_insync_replicas;
    auto it = t.configs.find(min_insync_replicas_key);
    if (it == t.configs.end()) return fallback;
    auto parsed = parse_min_insync_replicas(it->second);
    return parsed ? *parsed : fallback;
  }

  // The records of partition `key` an acks=all producer has had acknowledged, by the latest
  // committed image: those its leader and every ISR member hold while the ISR has
  // min.insync.replicas members. Replicas caught up at the partition epoch count as ISR members
  // too: an expansion may take them in at that epoch, and a leader counts them towards its high
  // watermark from the moment it asks (KIP-497's maximal ISR). Acknowledged records never go:
  // the acknowledged prefix only grows.
  void acknowledge(const partition_key& key) {
    const auto* t = committed_.topic(key.first);
    if (t == nullptr || static_cast<size_t>(key.second) >= t->partitions.size()) return;
    const auto& p = t->partitions[static_cast<size_t>(key.second)];
    if (p.leader == no_leader) return;
    auto& leader = broker(p.leader.value()).replicas;
    auto it = leader.find(key);
    if (it == leader.end() || it->second.epoch != p.leader_epoch.value()) return;
    const auto& log = it->second.log;
    auto& known = acked_[key];
    // A leader acting at its epoch holds every acknowledged record, however it was elected: from
    // the ISR, whose members held them, or by recovery (check_recovered_leaders). Checked as it
    // acts, so that a leader lacking them is caught before it acknowledges anything itself.
    if (!log.holds(known))
      fail("acknowledged records: " + t->name + "-" + std::to_string(key.second) + " led by node " +
           std::to_string(p.leader.value()) + " at leader epoch " +
           std::to_string(p.leader_epoch.value()) + " (log end " + std::to_string(log.end()) +
           "), which lacks records acknowledged up to offset " + std::to_string(known.end()));
    if (static_cast<int32_t>(p.isr.size()) < min_insync(*t)) return;
    int64_t high_watermark = log.end();
    for (node_id r : p.replicas)
      if (p.in_isr(r) ||
          caught_up_.count({key.first, key.second, r.value(), p.partition_epoch.value()}))
        high_watermark =
            std::min(high_watermark, broker(r.value()).replicas[key].log.common_prefix(log));
    auto acked = log.prefix(high_watermark);
    if (acked.holds(known))
      known = std::move(acked);
    else if (!known.holds(acked))
      fail("acknowledged records: " + t->name + "-" + std::to_string(key.second) + " led by node " +
           std::to_string(p.leader.value()) + " at leader epoch " +
           std::to_string(p.leader_epoch.value()) + " acknowledges up to offset " +
           std::to_string(acked.end()) + " a log that lacks records acknowledged up to offset " +
           std::to_string(known.end()));
  }

  // The logs of `b`'s replicas whose partition has no leader, as a node's heartbeat carries them
  // (replica_manager_state's `leaderless`); `logs` gets each one's whole log for check_decision.
  replica_log_infos leaderless_logs(sim_broker& b, std::map<partition_key, simulated_log>& logs) {
    replica_log_infos out;
    for (const auto& [key, p] : b.states) {
      if (p.leader != no_leader) continue;
      auto& r = b.replicas[key];
      if (!takes(r, p)) continue;
      out.push_back(replica_log_info{key.first, key.second, r.log.last_epoch(), r.log.end(),
                                     p.epoch.value()});
      logs[key] = r.log;
    }
    return out;
  }

  void broker_acts(sim_broker& b) {
    const int64_t timeout = b.epoch < 0 ? registration_timeout_ms : heartbeat_interval_ms;
    if (b.request && now() - b.request_sent > timeout) {
      b.request.reset();
      redirect(b, -1);
    }
    if (b.request) return;
    controller_request body;
    if (b.epoch < 0) {
      const auto n = b.id.value();
      body = broker_registration_request{b.id,
                                         b.incarnation,
                                         cluster,
                                         "client-" + std::to_string(n),
                                         static_cast<uint16_t>(9000 + n),
                                         "cluster-" + std::to_string(n),
                                         static_cast<uint16_t>(9100 + n),
                                         {},
                                         b.previous,
                                         false};
    } else if (now() >= b.next_heartbeat) {
      std::map<partition_key, simulated_log> logs;
      body = broker_heartbeat_msg{b.id, b.epoch, false, {}, false, leaderless_logs(b, logs)};
      if (!logs.empty()) report_logs_[request_ids_ + 1] = std::move(logs);
    } else {
      return;
    }
    b.request = ++request_ids_;
    b.request_sent = now();
    send(b.id.value(), b.target, request{*b.request, std::move(body)});
  }

  void broker_hears(sim_broker& b, const answer& a) {
    if (!b.up || b.request != a.id) return;
    b.request.reset();
    if (auto r = std::get_if<broker_registration_response_msg>(&a.body)) {
      if (r->error == errc::none) {
        b.kept_incarnation = b.incarnation;
        b.epoch = r->broker_epoch;
        b.next_heartbeat = now();
      } else {
        redirect(b, r->leader_hint);
      }
    } else if (auto h = std::get_if<broker_heartbeat_response_msg>(&a.body)) {
      if (h->error == errc::none) {
        b.next_heartbeat = now() + heartbeat_interval_ms;
      } else if (h->error == errc::stale_broker_epoch) {
        b.epoch = -1;
      } else {
        redirect(b, h->leader_hint);
      }
    }
  }

  // A partition `b` holds a state of, picked by `wanted`; null when none is.
  template <class Wanted>
  const partition_state_msg* pick_partition(const sim_broker& b, Wanted wanted) {
    std::vector<const partition_state_msg*> all;
    for (const auto& [key, p] : b.states)
      if (wanted(p)) all.push_back(&p);
    return all.empty() ? nullptr : all[pick(all.size())];
  }

  sim_broker* broker_with_states() {
    std::vector<sim_broker*> ready;
    for (auto& b : brokers_)
      if (b.up && !b.states.empty()) ready.push_back(&b);
    return ready.empty() ? nullptr : ready[pick(ready.size())];
  }

  // A follower fetches up to the log end of the leader both it and the leader take for the
  // partition's leader at the same partition epoch.
  bool fetch() {
    auto* r = broker_with_states();
    if (r == nullptr) return false;
    const auto* p = pick_partition(*r, [&](const partition_state_msg& s) {
      return s.leader != r->id && s.leader != no_leader;
    });
    return p != nullptr && catch_up(*r, {p->id, p->tp.second});
  }

  // `r` copies the log of partition `key` from the leader, when both hold states that name that
  // leader at the same partition epoch: it is then caught up at that epoch. Copying the whole log
  // is what truncating to the divergence point and fetching to the leader's log end leave.
  bool catch_up(sim_broker& r, const partition_key& key) {
    auto mine = r.states.find(key);
    if (!r.up || mine == r.states.end() || mine->second.leader == no_leader) return false;
    const auto p = mine->second;
    auto& l = broker(p.leader.value());
    auto theirs = l.states.find(key);
    if (!l.up || cut(r.id.value(), l.id.value()) || theirs == l.states.end()) return false;
    const auto& lp = theirs->second;
    if (lp.leader != p.leader || lp.epoch != p.epoch || lp.partition_epoch != p.partition_epoch)
      return false;
    auto& from = l.replicas[key];
    auto& to = r.replicas[key];
    if (!takes(from, p) || !takes(to, p)) return false;
    note(20, [&] {
      return "node " + std::to_string(r.id.value()) + " catches up on " + p.tp.first + "-" +
             std::to_string(key.second) + " at partition epoch " +
             std::to_string(p.partition_epoch);
    });
    to.log = from.log;
    acknowledge(key);
    images_.on_caught_up(key.first, partition_id{key.second}, r.id,
                         partition_epoch{p.partition_epoch});
    caught_up_.insert({key.first, key.second, r.id.value(), p.partition_epoch});
    return true;
  }

  // A leader shrinks its ISR by a follower, or takes in one that caught up.
  bool alter_isr() {
    auto* b = broker_with_states();
    if (b == nullptr) return false;
    const auto* p =
        pick_partition(*b, [&](const partition_state_msg& s) { return s.leader == b->id; });
    if (p == nullptr) return false;
    std::vector<node_id> isr = p->isr;
    const auto ready = ready_for_isr(*p);
    if (!ready.empty() && (isr.size() == 1 || pick(2) == 0)) {
      isr.push_back(ready[pick(ready.size())]);
    } else if (isr.size() > 1) {
      std::vector<node_id> followers;
      for (node_id r : isr)
        if (r != b->id) followers.push_back(r);
      std::erase(isr, followers[pick(followers.size())]);
    } else {
      return false;
    }
    ask_for_isr(*b, *p, std::move(isr));
    return true;
  }

  // The replicas of partition state `p` outside its ISR that caught up at its partition epoch.
  std::vector<node_id> ready_for_isr(const partition_state_msg& p) const {
    std::vector<node_id> ready;
    for (node_id r : p.replicas)
      if (std::find(p.isr.begin(), p.isr.end(), r) == p.isr.end() &&
          caught_up_.count({p.id, p.tp.second, r.value(), p.partition_epoch}))
        ready.push_back(r);
    return ready;
  }

  // AlterPartition of the partition of state `p` to `isr`, with the epochs of that state.
  void ask_for_isr(sim_broker& b, const partition_state_msg& p, std::vector<node_id> isr) {
    note(21, [&] {
      return "node " + std::to_string(b.id.value()) + " asks voter " + std::to_string(b.target) +
             " for ISR " + to_string(isr) + " of " + p.tp.first + "-" +
             std::to_string(p.tp.second) + " at epochs " + std::to_string(p.epoch.value()) + "/" +
             std::to_string(p.partition_epoch);
    });
    alter_partition_msg m;
    m.broker = b.id;
    m.partitions.push_back(
        alter_partition_item{p.tp, p.id, p.epoch, p.partition_epoch, std::move(isr)});
    send(b.id.value(), b.target, request{++request_ids_, std::move(m)});
  }

  // Mostly to the active controller, as a client that followed NOT_CONTROLLER would.
  void client() {
    sim_voter* active = active_voter();
    const int to = active != nullptr && pick(4) != 0 ? active->id.value()
                                                     : 1 + static_cast<int>(pick(opts_.voters));
    controller_request body;
    std::string what;
    switch (pick(6)) {
    case 0:
      body = elect_leaders_msg{};
      what = "elect preferred leaders";
      break;
    case 1:
      body = allocate_producer_ids_msg{};
      what = "allocate producer ids";
      break;
    default: {
      topic_spec spec;
      spec.name = "t" + std::to_string(pick(6));
      spec.partitions = 1 + static_cast<int32_t>(pick(3));
      spec.replication_factor =
          static_cast<int16_t>(1 + pick(std::min<uint64_t>(3, opts_.brokers)));
      // Recovery then needs one replica fewer than all (leader_recovery.hpp).
      if (spec.replication_factor > 1 && pick(2) == 0) spec.configs[min_insync_replicas_key] = "2";
      what = "create topic " + spec.name;
      body = std::move(spec);
    }
    }
    note(22, [&] { return "client asks voter " + std::to_string(to) + " to " + what; });
    send(0, to, request{++request_ids_, std::move(body)});
  }

  // --- steps ---------------------------------------------------------------------------------

  action choose() {
    return static_cast<action>(
        raft::test::next_step_kind(weights_, static_cast<size_t>(action::client) + 1, calm_switch_,
                                   calm_, [this](uint64_t n) { return pick(n); }));
  }

  std::string describe(const envelope& e) {
    std::string s = std::to_string(e.from) + "->" + std::to_string(e.to) + " ";
    if (auto f = std::get_if<raft_frame>(&e.body)) {
      auto m = raft::decode(f->frame);
      return m ? raft::test::describe(m->msg) : s + "bad raft frame";
    }
    if (auto r = std::get_if<request>(&e.body)) {
      if (auto h = std::get_if<broker_heartbeat_msg>(&r->body))
        return s + "heartbeat epoch " + std::to_string(h->broker_epoch);
      if (std::holds_alternative<broker_registration_request>(r->body)) return s + "registration";
      return s + "request " + std::to_string(r->body.index());
    }
    if (auto c = std::get_if<control>(&e.body)) {
      static constexpr std::array<const char*, 3> kinds{"UpdateMetadata", "LeaderAndIsr",
                                                        "StopReplica"};
      return s + kinds[static_cast<size_t>(c->message.what)] + " " + std::to_string(c->id) +
             " of generation " + std::to_string(c->generation);
    }
    if (auto c = std::get_if<control_answer>(&e.body))
      return s + "control answer " + std::to_string(c->id) + (c->applied ? " applied" : " refused");
    const auto& a = std::get<answer>(e.body).body;
    if (auto h = std::get_if<broker_heartbeat_response_msg>(&a))
      return s + "heartbeat answer " + std::string(to_string(h->error)) +
             (h->is_fenced ? " fenced" : " unfenced");
    if (auto r = std::get_if<broker_registration_response_msg>(&a))
      return s + "registration answer " + std::string(to_string(r->error)) + " epoch " +
             std::to_string(r->broker_epoch);
    if (auto ap = std::get_if<alter_partition_response_msg>(&a)) {
      s += "AlterPartition answer " + std::string(to_string(ap->error));
      for (const auto& item : ap->partitions) s += " " + std::string(to_string(item.error));
      return s;
    }
    return s + "answer " + std::to_string(a.index());
  }

  // Delivers in-flight message `k`; returns the voter that took it, if one did.
  std::optional<node_id> deliver(size_t k) {
    envelope e = std::move(network_[k]);
    network_.erase(network_.begin() + static_cast<ptrdiff_t>(k));
    const bool to_voter = std::holds_alternative<raft_frame>(e.body) ||
                          std::holds_alternative<control_answer>(e.body) ||
                          (is_voter(e.to) && std::holds_alternative<request>(e.body));
    const bool lost = cut(e.from, e.to) || (to_voter && !voter(e.to).member) ||
                      (std::holds_alternative<control>(e.body) && !broker(e.to).up);
    note(1, [&] { return "deliver " + describe(e) + (lost ? " (lost)" : ""); });
    if (lost) return std::nullopt;
    if (auto f = std::get_if<raft_frame>(&e.body)) {
      ++stats_.frames_delivered;
      auto& v = voter(e.to);
      // Refused frames (for an incarnation before a lost disk) change nothing.
      if (v.member->receive(f->frame)) run_voter(v);
      return v.id;
    }
    if (auto r = std::get_if<request>(&e.body)) {
      auto& v = voter(e.to);
      take_request(v, e.from, std::move(*r));
      return v.id;
    }
    if (auto c = std::get_if<control>(&e.body)) {
      const bool applied = take_control(broker(e.to), c->message);
      send(e.to, e.from, control_answer{c->id, c->generation, applied});
      return std::nullopt;
    }
    if (auto c = std::get_if<control_answer>(&e.body)) {
      auto& v = voter(e.to);
      take_control_answer(v, e.from, *c);
      return v.id;
    }
    if (e.to != 0) broker_hears(broker(e.to), std::get<answer>(e.body));
    return std::nullopt;
  }

  sim_voter* leader_up() {
    sim_voter* leader = nullptr;
    for (auto* v : up_voters())
      if (v->member->core().role() == raft::role::leader &&
          (leader == nullptr || v->member->core().term() > leader->member->core().term()))
        leader = v;
    return leader;
  }

  // Whether `v` is whole: up and not catching up, or down with a disk that says so and was not
  // lost or damaged since (raft_storage finds that out only when it opens it again).
  static bool whole(sim_voter& v) {
    if (v.member) {
      if (v.member->status_now().catching_up) return false;
      v.lost = false;
      return true;
    }
    auto it = v.disk.files.find(sf::hard_state_file);
    if (v.lost || it == v.disk.files.end()) return false;
    auto hs = raft::decode_hard_state(it->second);
    return hs && !hs->catching_up;
  }

  // A voter whose disk may be lost or damaged while a majority stays whole (Raft promises
  // nothing once fewer are), or null.
  sim_voter* losable() {
    std::vector<sim_voter*> whole_ones;
    for (auto& v : voters_)
      if (whole(*v)) whole_ones.push_back(v.get());
    if (whole_ones.size() <= opts_.voters / 2 + 1) return nullptr;
    return whole_ones[pick(whole_ones.size())];
  }

  // Damages one file of a down voter's disk as a disk can: a flipped byte anywhere but in the
  // log's last append (which raft_storage takes for a torn write: see raft_log_scan.hpp), or a
  // file gone.
  void damage(sim_voter& v) {
    auto& files = v.disk.files;
    auto log = files.find(sf::log_file);
    uint64_t last_append = log == files.end() ? 0 : log->second.size();
    if (log != files.end()) {
      uint64_t pos = 0;
      log_index last_first;
      std::vector<std::pair<uint64_t, log_index>> frames;
      while (pos < log->second.size()) {
        auto f = raft::read_frame(bytes_view(log->second).subspan(pos));
        if (!f) break;
        frames.emplace_back(pos, f->append_first);
        pos += f->size;
      }
      if (!frames.empty()) {
        last_first = frames.back().second;
        for (const auto& [at, first] : frames)
          if (first == last_first) {
            last_append = at;
            break;
          }
      }
    }
    std::vector<std::string> names;
    for (const auto& [name, content] : files)
      if (!content.empty() && (name != sf::log_file || last_append > 0)) names.push_back(name);
    if (names.empty() || pick(4) == 0) {
      if (!files.empty()) {
        auto it = files.begin();
        std::advance(it, static_cast<ptrdiff_t>(pick(files.size())));
        files.erase(it);
      }
      return;
    }
    const auto& name = names[pick(names.size())];
    auto& content = files[name];
    const uint64_t limit = name == sf::log_file ? last_append : content.size();
    content[pick(limit)] ^= static_cast<uint8_t>(1 + pick(255));
  }

  void fault_step() {
    std::optional<node_id> changed;
    const action a = choose();
    switch (a) {
    case action::deliver:
      if (network_.empty()) return tick_step();
      changed = deliver(pick(network_.size()));
      break;
    case action::tick:
      return tick_step();
    case action::broker: {
      std::vector<sim_broker*> up;
      for (auto& b : brokers_)
        if (b.up) up.push_back(&b);
      if (up.empty()) return tick_step();
      auto* b = up[pick(up.size())];
      note(23, [&] {
        return "node " + std::to_string(b->id.value()) + " appends, registers or heartbeats";
      });
      produce(*b);
      broker_acts(*b);
      break;
    }
    case action::fetch:
      if (!fetch()) return tick_step();
      break;
    case action::alter_isr:
      if (!alter_isr()) return tick_step();
      break;
    case action::client:
      client();
      break;
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
      sim_voter* leader = leader_up();
      std::fill(group_.begin(), group_.end(), 0);
      if (leader != nullptr && pick(2) == 0) {
        group_[static_cast<size_t>(leader->id.value())] = 1;
      } else {
        for (size_t k = 1; k < group_.size(); ++k) group_[k] = static_cast<int>(pick(2));
      }
      note(6, [&] {
        std::string groups;
        for (size_t k = 1; k < group_.size(); ++k) groups += std::to_string(group_[k]);
        return "partition " + groups;
      });
      break;
    }
    case action::heal:
      std::fill(group_.begin(), group_.end(), 0);
      note(7, [&] { return "heal"; });
      break;
    case action::crash_voter: {
      sim_voter* v = pick(2) == 0 ? leader_up() : nullptr;
      auto up = up_voters();
      if (v == nullptr && !up.empty()) v = up[pick(up.size())];
      if (v == nullptr) return tick_step();
      note(8, [&] { return "crash voter " + std::to_string(v->id.value()); });
      crash_voter(*v);
      ++stats_.voter_crashes;
      break;
    }
    case action::torn_write: {
      auto up = up_voters();
      if (up.empty()) return tick_step();
      auto* v = up[pick(up.size())];
      const uint64_t calls = pick(4);
      note(9, [&] {
        return "voter " + std::to_string(v->id.value()) + " crashes during its disk write after " +
               std::to_string(calls) + " more";
      });
      v->disk.arm_crash(calls, rng_());
      break;
    }
    case action::restart_voter: {
      std::vector<sim_voter*> down;
      for (auto& v : voters_)
        if (!v->member) down.push_back(v.get());
      if (down.empty()) return tick_step();
      auto* v = down[pick(down.size())];
      note(10, [&] { return "restart voter " + std::to_string(v->id.value()); });
      restart_voter(*v);
      run_voter(*v);
      changed = v->id;
      break;
    }
    case action::lose_disk:
    case action::damage_disk: {
      const bool lose = a == action::lose_disk;
      auto* v = losable();
      if (v == nullptr) return tick_step();
      note(lose ? 11 : 12, [&] {
        return std::string(lose ? "lose the disk of voter " : "damage the disk of voter ") +
               std::to_string(v->id.value());
      });
      if (v->member) crash_voter(*v);
      if (lose)
        v->disk.files.clear();
      else
        damage(*v);
      v->lost = true;
      raft_.on_lost(v->id);
      ++stats_.disks_lost;
      break;
    }
    case action::crash_broker: {
      std::vector<sim_broker*> up;
      for (auto& b : brokers_)
        if (b.up) up.push_back(&b);
      if (up.empty()) return tick_step();
      auto* b = up[pick(up.size())];
      note(13, [&] { return "crash node " + std::to_string(b->id.value()) + "'s broker"; });
      b->up = false;
      break;
    }
    case action::restart_broker: {
      std::vector<sim_broker*> down;
      for (auto& b : brokers_)
        if (!b.up) down.push_back(&b);
      if (down.empty()) return tick_step();
      auto* b = down[pick(down.size())];
      const bool new_data_dir = pick(8) == 0;
      note(14, [&] {
        return "restart node " + std::to_string(b->id.value()) + "'s broker" +
               (new_data_dir ? " on a new data dir" : "");
      });
      restart_broker(*b, new_data_dir);
      break;
    }
    case action::transfer: {
      sim_voter* v = leader_up();
      if (v == nullptr) return tick_step();
      note(15,
           [&] { return "voter " + std::to_string(v->id.value()) + " hands its leadership over"; });
      v->member->transfer_leadership();
      run_voter(*v);
      changed = v->id;
      break;
    }
    case action::count_:
      break;
    }
    check(changed);
  }

  void tick_step() {
    auto up = up_voters();
    if (up.empty()) {
      note(16, [&] { return "idle (every voter is down)"; });
      now_ += tick_ms;
      check(std::nullopt);
      return;
    }
    auto* v = up[pick(up.size())];
    tick(*v);
    check(v->id);
  }

  void tick(sim_voter& v) {
    now_ += tick_ms;
    note(17, [&] { return "tick voter " + std::to_string(v.id.value()); });
    v.member->tick();
    run_voter(v);
    if (!v.member) return;
    poll(v);
    run_voter(v);
  }

  void check(std::optional<node_id> changed) {
    views_.clear();
    for (auto* v : up_voters()) {
      const auto& c = v->member->core();
      views_.push_back(raft::test::node_view{c.id(), c.role(), c.term(), c.commit_index(),
                                             c.log().latest_snapshot().meta, c.log().entries(),
                                             c.directory()});
    }
    std::span<const node_id> ch;
    if (changed) ch = std::span<const node_id>(&*changed, 1);
    expect(raft_.check(views_, ch));
  }

  // The voter whose controller is active (the one of the highest term if several think so), or
  // null.
  sim_voter* active_voter() {
    sim_voter* active = nullptr;
    for (auto& v : voters_)
      if (v->member && v->driver->active() &&
          (active == nullptr || v->driver->core().epoch() > active->driver->core().epoch()))
        active = v.get();
    return active;
  }

  // Rounds without faults until `done()` or `max_steps`: in each, everything in flight arrives
  // (and what it causes: control messages included), then every voter ticks, every broker acts,
  // every follower catches up with its leader and every leader asks to take the caught-up
  // replicas into its ISR. A network this fast next to the clock lets a commit take less time than
  // a broker waits for its answer.
  template <class Done>
  bool rounds(size_t max_steps, Done done) {
    const size_t start = step_;
    while (step_ - start < max_steps) {
      if (done()) return true;
      while (!network_.empty() && step_ - start < max_steps) check(deliver(0));
      for (auto& v : voters_) {
        if (!v->member) continue;
        tick(*v);
        check(v->id);
      }
      for (auto& b : brokers_) {
        if (!b.up) continue;
        note(23,
             [&] { return "node " + std::to_string(b.id.value()) + " registers or heartbeats"; });
        broker_acts(b);
      }
      for (auto& b : brokers_) follow_leaders(b);
      for (auto& b : brokers_) expand_isrs(b);
    }
    return done();
  }

  // Each follower of `b` that is behind catches up with its leader.
  void follow_leaders(sim_broker& b) {
    if (!b.up) return;
    std::vector<partition_key> behind;
    for (const auto& [key, p] : b.states) {
      if (p.leader == b.id || p.leader == no_leader) continue;
      const auto& mine = b.replicas[key].log;
      const auto& leaders = broker(p.leader.value()).replicas[key].log;
      if (caught_up_.count({key.first, key.second, b.id.value(), p.partition_epoch}) &&
          mine.end() == leaders.end() && mine.holds(leaders))
        continue;
      behind.push_back(key);
    }
    for (const auto& key : behind) catch_up(b, key);
  }

  void expand_isrs(sim_broker& b) {
    if (!b.up) return;
    for (const auto& [key, p] : b.states) {
      auto ready = ready_for_isr(p);
      if (p.leader != b.id || ready.empty()) continue;
      auto isr = p.isr;
      isr.insert(isr.end(), ready.begin(), ready.end());
      ask_for_isr(b, p, std::move(isr));
    }
  }

  // Whether a partition without a leader waits for an operator by design: its ISR is empty and
  // too few of its replicas are not wiped to count for last-replica-standing recovery
  // (leader_recovery.hpp), so only unclean leader election would bring it back.
  static bool waits_for_operator(const topic_image& t, const partition_state& p) {
    const auto not_wiped = static_cast<int32_t>(p.replicas.size() - p.wiped.size());
    return p.leader == no_leader && p.isr.empty() &&
           not_wiped < replicas_needed_for_recovery(t, p.replicas.size(),
                                                    decision_options{}.min_insync_replicas);
  }

  // The first partition of `image` without a leader or a full ISR, as text; empty when there is
  // none (but those that wait for an operator).
  static std::string unsettled_partition(const metadata_image& image) {
    for (const auto& [id, t] : image.topics())
      for (size_t i = 0; i < t.partitions.size(); ++i) {
        const auto& p = t.partitions[i];
        if (waits_for_operator(t, p) ||
            (p.leader != no_leader && p.isr.size() == p.replicas.size()))
          continue;
        return t.name + "-" + std::to_string(i) + " (leader " + std::to_string(p.leader.value()) +
               ", ISR " + to_string(p.isr) + ", replicas " + to_string(p.replicas) + ", wiped " +
               to_string(p.wiped) + ")";
      }
    return {};
  }

  // The first broker whose control messages have not brought it to `image` yet, and where it
  // differs, as text; empty when every broker took it all: the state of each partition it hosts
  // and, in its metadata cache, every topic and partition.
  std::string unconverged_broker(const metadata_image& image) {
    for (auto& b : brokers_) {
      const std::string who = "node " + std::to_string(b.id.value());
      if (!b.cache) return who + " has no metadata cache";
      const auto& topics = b.cache->cluster().topics;
      if (topics.size() != image.topics().size())
        return who + "'s cache holds " + std::to_string(topics.size()) + " topics, not " +
               std::to_string(image.topics().size());
      for (const auto& [id, t] : image.topics()) {
        auto ct = topics.find(t.name);
        if (ct == topics.end() || ct->second.id != id ||
            ct->second.partitions.size() != t.partitions.size())
          return who + "'s cache lacks topic " + t.name + " as it is";
        for (size_t i = 0; i < t.partitions.size(); ++i) {
          const auto& p = t.partitions[i];
          const auto& c = ct->second.partitions[i];
          std::vector<int32_t> isr;
          for (node_id n : p.isr) isr.push_back(n.value());
          if (c.leader != p.leader.value() || c.leader_epoch != p.leader_epoch.value() ||
              c.isr != isr)
            return who + "'s cache has " + t.name + "-" + std::to_string(i) + " at leader " +
                   std::to_string(c.leader) + " epoch " + std::to_string(c.leader_epoch);
          if (!p.has_replica(b.id)) continue;
          auto st = b.states.find({id, static_cast<int32_t>(i)});
          if (st == b.states.end() || st->second.leader != p.leader ||
              st->second.epoch != p.leader_epoch ||
              st->second.partition_epoch != p.partition_epoch.value() || st->second.isr != p.isr)
            return who + " does not hold the state of " + t.name + "-" + std::to_string(i) +
                   " (leader " + std::to_string(p.leader.value()) + ", partition epoch " +
                   std::to_string(p.partition_epoch.value()) + ")";
        }
      }
    }
    return {};
  }

  // Whether an active controller has every broker registered and unfenced, and `topic` reached
  // every voter's image; asks the active controller to create it now and then until it has.
  bool settled_with(const std::string& topic, size_t& asked) {
    sim_voter* active = active_voter();
    if (active == nullptr) return false;
    const auto& image = active->member->image();
    for (auto& b : brokers_)
      if (!image.is_unfenced(b.id)) return false;
    if (image.topic_by_name(topic) == nullptr && (asked == 0 || step_ - asked > 200)) {
      asked = step_;
      topic_spec spec;
      spec.name = topic;
      spec.partitions = 2;
      spec.replication_factor = static_cast<int16_t>(std::min<size_t>(3, opts_.brokers));
      note(22, [&] { return "client creates topic " + topic; });
      send(0, active->id.value(), request{++request_ids_, std::move(spec)});
    }
    return std::all_of(voters_.begin(), voters_.end(), [&](const auto& v) {
      return v->member && v->member->image().topic_by_name(topic) != nullptr;
    });
  }

  void warm_up() {
    size_t asked = 0;
    if (!rounds(opts_.liveness_steps, [&] { return settled_with("warm", asked); }))
      fail("warm-up: the new cluster did not settle within " +
           std::to_string(opts_.liveness_steps) + " steps;" + summary());
  }

  // Faults stop: the network heals and delivers without loss, every process restarts. Then an
  // active controller must have every broker registered and unfenced, and a topic created
  // through it must reach every voter's image.
  void liveness() {
    std::fill(group_.begin(), group_.end(), 0);
    note(18, [&] { return "heal; faults stop"; });
    for (auto& v : voters_) {
      v->disk.reopen();
      if (!v->member) {
        restart_voter(*v);
        run_voter(*v);
      }
    }
    for (auto& b : brokers_)
      if (!b.up) restart_broker(b, false);
    const size_t start = step_;
    size_t asked = 0;
    const auto live = [&] {
      return settled_with("live", asked) &&
             unsettled_partition(active_voter()->member->image()).empty() &&
             unconverged_broker(active_voter()->member->image()).empty();
    };
    if (rounds(opts_.liveness_steps, live)) {
      stats_.liveness_steps = step_ - start;
      for (const auto& [id, t] : active_voter()->member->image().topics())
        for (const auto& p : t.partitions) stats_.waiting_for_operator += waits_for_operator(t, p);
      return;
    }
    fail("liveness: no active controller with every broker unfenced, every partition led by a "
         "full ISR (but those that wait for an operator) and every broker holding its metadata "
         "took a new topic to every voter within " +
         std::to_string(opts_.liveness_steps) + " steps after the faults stopped;" + summary());
  }

  // Where every voter and broker stands, for a liveness failure's report.
  std::string summary() {
    std::string out;
    for (auto& v : voters_) {
      if (!v->member) {
        out += "\n  voter " + std::to_string(v->id.value()) + ": down";
        continue;
      }
      const auto st = v->member->status_now();
      out += "\n  voter " + std::to_string(v->id.value()) + ": " +
             std::string(raft::to_string(st.role)) + " term " + std::to_string(st.term.value()) +
             " commit " + std::to_string(st.commit_index.value()) + " applied " +
             std::to_string(st.applied_index.value()) + " last " +
             std::to_string(st.last_index.value()) + (st.catching_up ? " catching up" : "") +
             (v->driver->active() ? " active" : "") + (v->driver->busy() ? " busy" : "") +
             " queue " + std::to_string(v->driver->queued());
    }
    for (auto& b : brokers_)
      out += "\n  broker " + std::to_string(b.id.value()) + ": epoch " + std::to_string(b.epoch) +
             " target " + std::to_string(b.target) + (b.request ? " waiting" : "") +
             " controller epoch " + std::to_string(b.controller_epoch) + " stream " +
             std::to_string(b.stream.epoch()) + "/" + std::to_string(b.stream.last()) + " states " +
             std::to_string(b.states.size());
    if (sim_voter* active = active_voter()) {
      const auto unsettled = unsettled_partition(active->member->image());
      if (!unsettled.empty()) out += "\n  partition " + unsettled;
      const auto unconverged = unconverged_broker(active->member->image());
      if (!unconverged.empty()) out += "\n  " + unconverged;
    }
    return out;
  }

  controller_sim_options opts_;
  std::mt19937_64 rng_;
  std::array<uint32_t, static_cast<size_t>(action::count_)> weights_{};
  uint64_t snapshot_entries_ = 8;
  uint64_t calm_switch_ = 100;
  bool calm_ = false;
  std::vector<std::unique_ptr<sim_voter>> voters_;
  std::vector<node_id> voter_ids_;
  std::vector<sim_broker> brokers_;
  std::vector<int> group_; // by node id; 0 is the client's
  std::vector<envelope> network_;
  std::set<std::tuple<topic_id, int32_t, int32_t, int32_t>> caught_up_;
  std::vector<bytes> applied_data_;
  // The image after the last index applied anywhere: what is committed.
  metadata_image committed_{cluster};
  // The acknowledged prefix of each partition's log.
  std::map<partition_key, simulated_log> acked_;
  raft::test::raft_invariant_checker raft_;
  controller_invariant_checker images_;
  std::vector<raft::test::node_view> views_;
  controller_sim_stats stats_;
  int64_t now_ = 0;
  uint64_t request_ids_ = 0;
  uint64_t control_ids_ = 0;
  // The logs behind each heartbeat's leaderless reports, by request id.
  std::map<uint64_t, std::map<partition_key, simulated_log>> report_logs_;
  size_t step_ = 0;
  uint64_t fingerprint_ = 0xcbf29ce484222325ULL;
};

} // namespace

controller_sim_result run_controller_simulation(const controller_sim_options& options) {
  return simulation(options).run();
}

} // namespace capstan::controller::test
