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
#include "actors/controller/quorum_member.hpp"
#include "actors/controller/raft/raft_codec.hpp"
#include "actors/controller/raft/raft_storage_format.hpp"
#include "actors/controller/raft/raft_storage_records.hpp"
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

enum class action : uint8_t {
  deliver,
  tick,
  broker,
  refresh,
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
    8,  // refresh: a broker reads a voter's image
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

// Node 0 is the client: it is never cut off and nobody reads its answers.
struct envelope {
  int from = 0;
  int to = 0;
  std::variant<raft_frame, request, answer> body;
};

struct queued {
  controller_request req;
  int reply_to = -1; // -1: nobody asked (a session expiry)
  uint64_t id = 0;
};

struct in_flight {
  queued q;
  prepared_request prepared;
  uint64_t token = 0;
};

// A voter: a quorum member with the active controller's logic beside it, driven as
// controller_actor drives it (one request at a time, decided against the committed image).
struct sim_voter {
  node_id id;
  memory_disk disk;
  std::unique_ptr<quorum_member> member; // null: down
  std::unique_ptr<active_controller> ctl;
  std::deque<queued> queue;
  std::optional<in_flight> busy;
  uint64_t next_token = 0;
  // The member's image before the entry it applies next.
  metadata_image image{cluster};
  // Its disk was lost or damaged since it was last seen whole.
  bool lost = false;
};

using partition_key = std::pair<topic_id, int32_t>;

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
  std::optional<metadata_image> view;
  // The applied index `view` is the image at (the images at one index are equal).
  log_index view_index;
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
    v.ctl = std::make_unique<active_controller>(co);
    v.queue.clear();
    v.busy.reset();
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
    if (first) {
      check_recovered_leaders(v.image, after);
      committed_ = after;
    }
    v.image = after;
  }

  // Acknowledged records: a leader elected from outside the ISR (last replica standing) holds
  // every record acknowledged before. Its log is the one it reported: a replica without a leader
  // neither leads nor follows at that leader epoch or an older one.
  void check_recovered_leaders(const metadata_image& before, const metadata_image& after) {
    for (const auto& [id, t] : after.topics()) {
      const auto* old = before.topic(id);
      if (old == nullptr) continue;
      for (size_t i = 0; i < std::min(t.partitions.size(), old->partitions.size()); ++i) {
        const auto& is = t.partitions[i];
        const auto& was = old->partitions[i];
        if (is.leader == no_leader || is.leader == was.leader || was.in_isr(is.leader)) continue;
        const partition_key key{id, static_cast<int32_t>(i)};
        const auto& log = broker(is.leader.value()).replicas[key].log;
        const auto& acked = acked_[key];
        if (!log.holds(acked))
          fail("acknowledged records: " + t.name + "-" + std::to_string(i) + " recovered on node " +
               std::to_string(is.leader.value()) + " (last epoch " +
               std::to_string(log.last_epoch()) + ", log end " + std::to_string(log.end()) +
               "), which lacks records acknowledged up to offset " + std::to_string(acked.end()) +
               " (last epoch " + std::to_string(acked.last_epoch()) + ")");
      }
    }
  }

  void on_snapshot(sim_voter& v, const raft::snapshot_meta& meta) {
    ++stats_.snapshots_loaded;
    v.image = v.member->image();
    expect(raft_.on_snapshot_loaded(v.id, applied_prefix(meta.index)));
    expect(images_.on_loaded(v.id, meta.index, v.image));
  }

  void crash_voter(sim_voter& v) {
    v.member.reset();
    v.ctl.reset();
    v.queue.clear();
    v.busy.reset();
  }

  // Drains the member, settles the proposal that committed and proposes the next request, until
  // nothing is left to do. A failed persist (the armed crash) takes the voter down.
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
      for (auto& o : *out)
        if (v.busy && o.token == v.busy->token) settle_outcome(v, o);
      pump(v);
      if (!v.member || !v.member->core().has_ready()) return;
    }
  }

  void reply(sim_voter& v, const queued& q, controller_answer a) {
    if (q.reply_to >= 0) send(v.id.value(), q.reply_to, answer{q.id, std::move(a)});
  }

  int32_t leader_hint(const sim_voter& v) const {
    const auto l = v.member->core().leader();
    return l ? l->value() : -1;
  }

  void refuse(sim_voter& v, const queued& q, errc code) {
    reply(v, q, active_controller::refuse(q.req, make_error(code, "not active"), leader_hint(v)));
  }

  void deactivate(sim_voter& v) {
    if (!v.ctl->active()) return;
    v.ctl->deactivate();
    if (v.busy) refuse(v, v.busy->q, errc::not_controller);
    v.busy.reset();
    for (auto& q : v.queue) refuse(v, q, errc::not_controller);
    v.queue.clear();
  }

  // The controller actor's poll: active while the member leads and has applied its whole log.
  void poll(sim_voter& v) {
    const auto st = v.member->status_now();
    const bool leads = st.role == raft::role::leader && !st.handing_over;
    const auto term = static_cast<int32_t>(st.term.value());
    if (v.ctl->active() && (!leads || term != v.ctl->epoch())) deactivate(v);
    if (leads && !v.ctl->active() && st.applied_index == st.last_index) {
      v.ctl->activate(v.member->image(), term, now());
      ++stats_.activations;
    }
    if (v.ctl->active() && !v.busy)
      for (auto& e : v.ctl->expired_sessions(now())) v.queue.push_back(queued{e, -1, 0});
    if (v.ctl->active() && v.ctl->recovery_due() &&
        std::none_of(v.queue.begin(), v.queue.end(), [](const queued& q) {
          return std::holds_alternative<leader_recovery>(q.req);
        }))
      v.queue.push_back(queued{leader_recovery{}, -1, 0});
  }

  void settle(sim_voter& v, const queued& q, const prepared_request& p,
              std::optional<metadata_image> image, const error& applied) {
    auto settled = v.ctl->commit(p, std::move(image), applied, now());
    if (applied.code == errc::none && p.refused.code == errc::none) {
      if (std::holds_alternative<broker_registration_request>(q.req)) ++stats_.registrations;
      if (std::holds_alternative<session_expiry>(q.req) && !p.changes.records.empty())
        ++stats_.fencings;
      if (std::holds_alternative<topic_spec>(q.req)) ++stats_.topics;
      if (std::holds_alternative<leader_recovery>(q.req))
        stats_.recoveries += p.changes.records.size();
      for (const auto& o : p.outcomes) stats_.isr_changes += o.code == errc::none ? 1 : 0;
    }
    reply(v, q, std::move(settled.answer));
  }

  void settle_outcome(sim_voter& v, const proposal_outcome& o) {
    auto busy = std::move(*v.busy);
    v.busy.reset();
    if (o.code == errc::not_controller || o.code == errc::request_timed_out) {
      refuse(v, busy.q, o.code);
      deactivate(v);
      return;
    }
    const error applied = o.code == errc::none ? error{} : make_error(o.code, o.message);
    settle(v, busy.q, busy.prepared, v.member->image(), applied);
  }

  void note_recoveries(const std::vector<metadata_record>& records) {
    for (const auto& r : records)
      if (const auto* c = std::get_if<partition_change_record>(&r); c != nullptr && c->leader)
        images_.on_recovery_decided(c->topic, c->partition, c->leader_epoch, *c->leader);
  }

  // Decides queued requests one at a time; proposes the first that has records.
  void pump(sim_voter& v) {
    while (!v.busy && !v.queue.empty() && v.ctl->active()) {
      queued q = std::move(v.queue.front());
      v.queue.pop_front();
      auto p = v.ctl->prepare(q.req, now());
      if (p.refused.code != errc::none || p.changes.records.empty()) {
        settle(v, q, p, std::nullopt, error{});
        continue;
      }
      if (std::holds_alternative<leader_recovery>(q.req)) note_recoveries(p.changes.records);
      const uint64_t token = ++v.next_token;
      auto proposed = v.member->propose(token, p.changes.records);
      if (!proposed.ok()) {
        refuse(v, q, errc::not_controller);
        deactivate(v);
        return;
      }
      v.busy = in_flight{std::move(q), std::move(p), token};
    }
  }

  void take_request(sim_voter& v, int from, request r) {
    queued q{std::move(r.body), from, r.id};
    if (!v.ctl->active()) {
      refuse(v, q, errc::not_controller);
      return;
    }
    if (auto hb = std::get_if<broker_heartbeat_msg>(&q.req)) v.ctl->heartbeat_arrived(*hb, now());
    v.queue.push_back(std::move(q));
    pump(v);
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
    b.view.reset();
  }

  void redirect(sim_broker& b, int32_t hint) {
    b.target = is_voter(hint) ? hint : b.target % static_cast<int>(opts_.voters) + 1;
  }

  // The view `b` acts on as a replica: one that holds its current registration, as a node's replica
  // manager takes its states from a controller that knows that registration (an older view would
  // let a new process on an empty data dir lead where its predecessor did). Null when it has none.
  const metadata_image* acting_view(const sim_broker& b) const {
    if (!b.up || b.epoch < 0 || !b.view) return nullptr;
    const auto* r = b.view->broker(b.id);
    return r != nullptr && r->epoch.value() == b.epoch ? &*b.view : nullptr;
  }

  // `r` takes the partition's state `p`, unless it acted on a later leader epoch already.
  static bool takes(sim_replica& r, const partition_state& p) {
    if (p.leader_epoch.value() < r.epoch) return false;
    r.epoch = p.leader_epoch.value();
    return true;
  }

  // A producer's record for each partition `b`'s view names it the leader of.
  void produce(sim_broker& b) {
    const auto* view = acting_view(b);
    if (view == nullptr) return;
    for (const auto& [id, t] : view->topics())
      for (size_t i = 0; i < t.partitions.size(); ++i) {
        const auto& p = t.partitions[i];
        if (p.leader != b.id) continue;
        auto& r = b.replicas[{id, static_cast<int32_t>(i)}];
        if (takes(r, p)) {
          r.log.append(p.leader_epoch.value());
          acknowledge({id, static_cast<int32_t>(i)});
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

  // The logs of `b`'s replicas whose partition its view names no leader for, as a node's
  // heartbeat carries them (replica_manager_state's `leaderless`).
  replica_log_infos leaderless_logs(sim_broker& b) {
    replica_log_infos out;
    const auto* view = acting_view(b);
    if (view == nullptr) return out;
    for (const auto& [id, t] : view->topics())
      for (size_t i = 0; i < t.partitions.size(); ++i) {
        const auto& p = t.partitions[i];
        if (p.leader != no_leader || !p.has_replica(b.id)) continue;
        auto& r = b.replicas[{id, static_cast<int32_t>(i)}];
        if (takes(r, p))
          out.push_back(replica_log_info{id, static_cast<int32_t>(i), r.log.last_epoch(),
                                         r.log.end(), p.leader_epoch.value()});
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
      body = broker_heartbeat_msg{b.id, b.epoch, false, {}, false, leaderless_logs(b)};
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

  // A partition of `b`'s view, picked by `wanted`; nullopt when none is.
  template <class Wanted>
  std::optional<std::pair<const topic_image*, size_t>> pick_partition(const sim_broker& b,
                                                                      Wanted wanted) {
    std::vector<std::pair<const topic_image*, size_t>> all;
    for (const auto& [id, t] : b.view->topics())
      for (size_t i = 0; i < t.partitions.size(); ++i)
        if (wanted(t.partitions[i])) all.emplace_back(&t, i);
    if (all.empty()) return std::nullopt;
    return all[pick(all.size())];
  }

  sim_broker* registered_broker() {
    std::vector<sim_broker*> ready;
    for (auto& b : brokers_)
      if (b.up && b.epoch >= 0 && b.view) ready.push_back(&b);
    return ready.empty() ? nullptr : ready[pick(ready.size())];
  }

  // A follower fetches up to the log end of the leader both it and the leader take for the
  // partition's leader at the same partition epoch.
  bool fetch() {
    auto* r = registered_broker();
    if (r == nullptr) return false;
    auto part = pick_partition(*r, [&](const partition_state& p) {
      return p.has_replica(r->id) && p.leader != r->id && p.leader != no_leader;
    });
    return part && catch_up(*r, *part->first, part->second);
  }

  // `r` copies the log of partition `i` of `t` (of its view) from the leader, when both act on
  // views that name that leader at the same partition epoch: it is then caught up at that epoch.
  // Copying the whole log is what truncating to the divergence point and fetching to the
  // leader's log end leave.
  bool catch_up(sim_broker& r, const topic_image& t, size_t i) {
    const auto& p = t.partitions[i];
    auto& l = broker(p.leader.value());
    const auto* leader_view = acting_view(l);
    if (acting_view(r) == nullptr || leader_view == nullptr || cut(r.id.value(), l.id.value()))
      return false;
    const partition_id pid{static_cast<int32_t>(i)};
    const auto* lp = leader_view->partition(t.id, pid);
    if (lp == nullptr || lp->leader != p.leader || lp->leader_epoch != p.leader_epoch ||
        lp->partition_epoch != p.partition_epoch)
      return false;
    auto& from = l.replicas[{t.id, pid.value()}];
    auto& to = r.replicas[{t.id, pid.value()}];
    if (!takes(from, p) || !takes(to, p)) return false;
    note(20, [&] {
      return "node " + std::to_string(r.id.value()) + " catches up on " + t.name + "-" +
             std::to_string(i) + " at partition epoch " + std::to_string(p.partition_epoch.value());
    });
    to.log = from.log;
    acknowledge({t.id, pid.value()});
    images_.on_caught_up(t.id, pid, r.id, p.partition_epoch);
    caught_up_.insert({t.id, pid.value(), r.id.value(), p.partition_epoch.value()});
    return true;
  }

  // A leader (in its view) shrinks its ISR by a follower, or takes in one that caught up.
  bool alter_isr() {
    auto* b = registered_broker();
    if (b == nullptr) return false;
    auto part = pick_partition(*b, [&](const partition_state& p) { return p.leader == b->id; });
    if (!part) return false;
    const auto* t = part->first; // not a structured binding: lambdas below capture it
    const size_t i = part->second;
    const auto& p = t->partitions[i];
    std::vector<node_id> isr = p.isr;
    const auto ready = ready_for_isr(*t, i);
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
    ask_for_isr(*b, *t, i, std::move(isr));
    return true;
  }

  // The replicas of partition `i` of `t` (of `b`'s view) outside its ISR that caught up at its
  // partition epoch.
  std::vector<node_id> ready_for_isr(const topic_image& t, size_t i) const {
    const auto& p = t.partitions[i];
    std::vector<node_id> ready;
    for (node_id r : p.replicas)
      if (!p.in_isr(r) &&
          caught_up_.count({t.id, static_cast<int32_t>(i), r.value(), p.partition_epoch.value()}))
        ready.push_back(r);
    return ready;
  }

  // AlterPartition of partition `i` of `t` to `isr`, with the epochs of `b`'s view.
  void ask_for_isr(sim_broker& b, const topic_image& t, size_t i, std::vector<node_id> isr) {
    const auto& p = t.partitions[i];
    note(21, [&] {
      return "node " + std::to_string(b.id.value()) + " asks voter " + std::to_string(b.target) +
             " for ISR " + to_string(isr) + " of " + t.name + "-" + std::to_string(i) +
             " at epochs " + std::to_string(p.leader_epoch.value()) + "/" +
             std::to_string(p.partition_epoch.value());
    });
    alter_partition_msg m;
    m.broker = b.id;
    m.partitions.push_back(alter_partition_item{{t.name, static_cast<int32_t>(i)},
                                                t.id,
                                                p.leader_epoch,
                                                p.partition_epoch.value(),
                                                std::move(isr)});
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
    const auto& a = std::get<answer>(e.body).body;
    if (auto h = std::get_if<broker_heartbeat_response_msg>(&a))
      return s + "heartbeat answer " + std::string(to_string(h->error)) +
             (h->is_fenced ? " fenced" : " unfenced");
    if (auto r = std::get_if<broker_registration_response_msg>(&a))
      return s + "registration answer " + std::string(to_string(r->error)) + " epoch " +
             std::to_string(r->broker_epoch);
    return s + "answer " + std::to_string(a.index());
  }

  // Delivers in-flight message `k`; returns the voter that took it, if one did.
  std::optional<node_id> deliver(size_t k) {
    envelope e = std::move(network_[k]);
    network_.erase(network_.begin() + static_cast<ptrdiff_t>(k));
    const bool lost =
        cut(e.from, e.to) ||
        (is_voter(e.to) && std::holds_alternative<request>(e.body) && !voter(e.to).member) ||
        (std::holds_alternative<raft_frame>(e.body) && !voter(e.to).member);
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
    case action::refresh: {
      auto up = up_voters();
      std::vector<sim_broker*> brokers;
      for (auto& b : brokers_)
        if (b.up) brokers.push_back(&b);
      if (up.empty() || brokers.empty()) return tick_step();
      auto* b = brokers[pick(brokers.size())];
      auto* v = up[pick(up.size())];
      if (cut(b->id.value(), v->id.value())) return tick_step();
      note(24, [&] {
        return "node " + std::to_string(b->id.value()) + " reads voter " +
               std::to_string(v->id.value()) + "'s image";
      });
      b->view = v->member->image();
      b->view_index = v->member->core().applied_index();
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
    pump(v);
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
      if (v->member && v->ctl->active() &&
          (active == nullptr || v->ctl->epoch() > active->ctl->epoch()))
        active = v.get();
    return active;
  }

  // Rounds without faults until `done()` or `max_steps`: in each, everything in flight arrives
  // (and what it causes), then every voter ticks, every broker takes the active controller's
  // image for its view (as a node takes the states the controller sends it) and acts, every
  // follower catches up with its leader and every leader asks to take the caught-up replicas into
  // its ISR. A network this fast next to the clock lets a commit take less time than a broker
  // waits for its answer.
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
      sim_voter* active = active_voter();
      for (auto& b : brokers_) {
        if (!b.up) continue;
        if (active != nullptr &&
            (!b.view || b.view_index != active->member->core().applied_index())) {
          b.view = active->member->image();
          b.view_index = active->member->core().applied_index();
        }
        note(23,
             [&] { return "node " + std::to_string(b.id.value()) + " registers or heartbeats"; });
        broker_acts(b);
      }
      for (auto& b : brokers_) follow_leaders(b);
      for (auto& b : brokers_) expand_isrs(b);
    }
    return done();
  }

  // Each follower of `b`'s view that is behind catches up with its leader.
  void follow_leaders(sim_broker& b) {
    if (acting_view(b) == nullptr) return;
    for (const auto& [id, t] : b.view->topics())
      for (size_t i = 0; i < t.partitions.size(); ++i) {
        const auto& p = t.partitions[i];
        if (!p.has_replica(b.id) || p.leader == b.id || p.leader == no_leader) continue;
        const partition_key key{id, static_cast<int32_t>(i)};
        const auto& mine = b.replicas[key].log;
        const auto& leaders = broker(p.leader.value()).replicas[key].log;
        if (caught_up_.count({id, key.second, b.id.value(), p.partition_epoch.value()}) &&
            mine.end() == leaders.end() && mine.holds(leaders))
          continue;
        catch_up(b, t, i);
      }
  }

  void expand_isrs(sim_broker& b) {
    if (acting_view(b) == nullptr) return;
    for (const auto& [id, t] : b.view->topics())
      for (size_t i = 0; i < t.partitions.size(); ++i) {
        const auto& p = t.partitions[i];
        auto ready = ready_for_isr(t, i);
        if (p.leader != b.id || ready.empty()) continue;
        auto isr = p.isr;
        isr.insert(isr.end(), ready.begin(), ready.end());
        ask_for_isr(b, t, i, std::move(isr));
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
             unsettled_partition(active_voter()->member->image()).empty();
    };
    if (rounds(opts_.liveness_steps, live)) {
      stats_.liveness_steps = step_ - start;
      for (const auto& [id, t] : active_voter()->member->image().topics())
        for (const auto& p : t.partitions) stats_.waiting_for_operator += waits_for_operator(t, p);
      return;
    }
    fail("liveness: no active controller with every broker unfenced, every partition led by a "
         "full ISR (but those that wait for an operator) took a new topic to every voter within " +
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
             (v->ctl->active() ? " active" : "") + (v->busy ? " busy" : "") + " queue " +
             std::to_string(v->queue.size());
    }
    for (auto& b : brokers_)
      out += "\n  broker " + std::to_string(b.id.value()) + ": epoch " + std::to_string(b.epoch) +
             " target " + std::to_string(b.target) + (b.request ? " waiting" : "");
    if (sim_voter* active = active_voter()) {
      const auto unsettled = unsettled_partition(active->member->image());
      if (!unsettled.empty()) out += "\n  partition " + unsettled;
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
  size_t step_ = 0;
  uint64_t fingerprint_ = 0xcbf29ce484222325ULL;
};

} // namespace

controller_sim_result run_controller_simulation(const controller_sim_options& options) {
  return simulation(options).run();
}

} // namespace capstan::controller::test
