// The controller quorum actor: see quorum_actor.hpp.
//
// Spawned detached (its own thread), one per node: every ready is persisted with fsync before
// its messages go out (Raft's "persist before you respond"), and that blocking wait must not
// hold one of CAF's few shared scheduler threads, which the node's partitions run on.
//
// No timer holds the detached actor: CAF stops its clock before it waits for detached threads,
// and a detached actor that a pending timer still references never lets its thread end, so
// ~actor_system would hang. A linked ticker on the shared scheduler keeps the time instead, the
// peer lookup waits without a timeout (the peer directory bounds its own connects), and delayed
// sends (link_faults) go out anonymously.
//
// Peers are reached through their node endpoints, found by the peer directory. Messages for a
// peer whose endpoint is not known yet wait (the last few, a heartbeat interval at most) while
// the directory connects; beyond that Raft resends (heartbeats, probes, votes at the next
// election), so a lost message only costs time.

#include "actors/controller/quorum_actor.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <random>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/controller/voter_validation.hpp"
#include "actors/node/listen_address.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/cluster/link_faults.hpp"

namespace capstan {

namespace {

struct ticker_state {
  static inline const char* name = "capstan.controller_quorum_ticker";
  quorum_actor target;
};

caf::behavior ticker(caf::stateful_actor<ticker_state>* self, quorum_actor target,
                     std::chrono::milliseconds interval) {
  self->state.target = std::move(target);
  self->delayed_send(self, interval, qtick_atom_v);
  return {
      [self, interval](qtick_atom) {
        self->send(self->state.target, qtick_atom_v);
        self->delayed_send(self, interval, qtick_atom_v);
      },
  };
}

// Frames kept for a peer while its endpoint is looked up; older ones go first beyond this.
constexpr size_t max_waiting_frames = 16;

struct waiting_frame {
  capnp_frame frame;
  std::chrono::steady_clock::time_point queued;
};

struct peer_link {
  node_endpoint_actor endpoint;
  // Sent once the lookup answers, if younger than a heartbeat interval and the link is not cut
  // meanwhile: after a peer restarted, the first frames for it are often an election's votes,
  // and losing them costs an election timeout. Dropped when the lookup fails.
  std::deque<waiting_frame> waiting;
  bool asking = false;
  // After a failed lookup, not before this: a peer that is down is not dialled (and logged) at
  // every message for it.
  std::chrono::steady_clock::time_point retry_after;
};

struct quorum_state {
  static inline const char* name = "capstan.controller_quorum";
  quorum_options opts;
  std::unique_ptr<controller::quorum_member> member;
  std::map<node_id, peer_link> peers;
  uint64_t next_token = 0;
  std::map<uint64_t, caf::typed_response_promise<propose_reply>> waiting;
  std::vector<caf::typed_response_promise<int32_t>> resigning;
  std::string last_refusal;
  std::chrono::steady_clock::time_point last_refusal_logged;
  // The endpoints of voters this member gave its peer directory, by node.
  std::map<node_id, std::string> told_endpoints;
};

using quorum_ptr = quorum_actor::stateful_pointer<quorum_state>;

// A hand-over is settled once the transferee was told and its TimeoutNow went to the peer's
// endpoint (not while it waits for the endpoint's lookup), or once there is none (the member
// stopped leading, or gave up).
void answer_resigning(quorum_ptr self) {
  auto& st = self->state;
  const auto& core = st.member->core();
  if (st.resigning.empty()) return;
  const auto to = core.transferee();
  if (to && (!core.transferee_told() || !st.peers[*to].waiting.empty())) return;
  const int32_t told = to ? to->value() : -1;
  for (auto& rp : st.resigning) rp.deliver(told);
  st.resigning.clear();
}

void ask_endpoint(quorum_ptr self, node_id to) {
  auto& link = self->state.peers[to];
  if (link.asking || !self->state.opts.peers || std::chrono::steady_clock::now() < link.retry_after)
    return;
  link.asking = true;
  self->request(self->state.opts.peers, caf::infinite, endpoint_atom_v, to)
      .then(
          [self, to](node_endpoint_actor& ep) {
            auto& l = self->state.peers[to];
            l.asking = false;
            l.endpoint = ep;
            self->monitor(ep);
            const auto oldest =
                std::chrono::steady_clock::now() - self->state.opts.heartbeat_interval;
            const bool cut = link_faults::instance().dropped(self->state.opts.node, to);
            for (auto& w : l.waiting)
              if (w.queued >= oldest && !cut) self->send(ep, raft_atom_v, std::move(w.frame));
            l.waiting.clear();
            answer_resigning(self);
          },
          [self, to](caf::error& err) {
            auto& l = self->state.peers[to];
            l.asking = false;
            l.waiting.clear();
            l.retry_after = std::chrono::steady_clock::now() + self->state.opts.heartbeat_interval;
            spdlog::debug("controller {}: no endpoint for node {} yet: {}",
                          self->state.opts.node.value(), to.value(), caf::to_string(err));
          });
}

void send_frame(quorum_ptr self, node_id to, capnp_frame frame) {
  const auto fault = link_faults::instance().check(self->state.opts.node, to);
  if (fault.what == link_fault::kind::drop) return;
  auto& link = self->state.peers[to];
  if (!link.endpoint) {
    link.waiting.push_back(waiting_frame{std::move(frame), std::chrono::steady_clock::now()});
    if (link.waiting.size() > max_waiting_frames) link.waiting.pop_front();
    ask_endpoint(self, to);
    return;
  }
  if (fault.what == link_fault::kind::delay)
    caf::delayed_anon_send(link.endpoint, fault.delay, raft_atom_v, std::move(frame));
  else
    self->send(link.endpoint, raft_atom_v, std::move(frame));
}

// Gives the peer directory where the voters in effect listen, as far as their voter set says:
// the bootstrap voters' addresses come from --controller-quorum, but a voter `cluster
// add-voter` added is known to the others only by the endpoint its entry holds, and after a
// restart only the log remembers it. An endpoint that is no HOST:PORT (a damaged entry) is
// skipped with a warning; the directory can still locate that node through its other peers.
void tell_directory(quorum_ptr self, const raft::voter_set& voters) {
  auto& st = self->state;
  if (!st.opts.peers) return;
  std::vector<peer_address> changed;
  for (const auto& v : voters) {
    if (v.endpoint.empty() || v.id == st.opts.node) continue;
    auto& told = st.told_endpoints[v.id];
    if (told == v.endpoint) continue;
    told = v.endpoint;
    auto at = parse_listen_address(v.endpoint, "voter " + std::to_string(v.id.value()));
    if (!at || at->port == 0) {
      spdlog::warn("controller {}: voter {} has no usable endpoint '{}'", st.opts.node.value(),
                   v.id.value(), v.endpoint);
      continue;
    }
    changed.push_back(peer_address{v.id, at->host, at->port});
  }
  if (!changed.empty()) self->send(st.opts.peers, peers_atom_v, std::move(changed));
}

// Hands the member's readies to storage, peers and the image; answers settled proposals. A
// storage failure stops the actor: it may not send what it could not make durable.
void drain(quorum_ptr self) {
  auto& st = self->state;
  auto outcomes =
      st.member->drain([self](node_id to, capnp_frame f) { send_frame(self, to, std::move(f)); });
  if (!outcomes) {
    spdlog::critical("controller {}: stopping: {}", st.opts.node.value(),
                     outcomes.err().to_string());
    if (st.opts.on_storage_failure) st.opts.on_storage_failure(outcomes.err());
    self->quit(to_caf_error(outcomes.err()));
    return;
  }
  const auto leader = st.member->core().leader();
  for (auto& o : *outcomes) {
    auto it = st.waiting.find(o.token);
    if (it == st.waiting.end()) continue;
    it->second.deliver(propose_reply{o.code, o.index.value(), leader ? leader->value() : -1,
                                     std::move(o.message)});
    st.waiting.erase(it);
  }
  tell_directory(self, st.member->core().voters());
  answer_resigning(self);
}

// A frame this member refuses is logged; a peer of another quorum sends one every heartbeat, so
// the same refusal is logged again only after a while.
void refused(quorum_ptr self, const error& why) {
  auto& st = self->state;
  const auto now = std::chrono::steady_clock::now();
  const auto text = why.to_string();
  if (text == st.last_refusal && now - st.last_refusal_logged < std::chrono::seconds(60)) return;
  st.last_refusal = text;
  st.last_refusal_logged = now;
  if (why.code == errc::corrupt_message)
    spdlog::warn("controller {}: dropped a raft message: {}", st.opts.node.value(), text);
  else
    spdlog::error("controller {}: refused a raft message: {}", st.opts.node.value(), text);
}

// Starts a voter change through `start(token)`; answered like a proposal, once it ends.
template <class Start>
caf::result<propose_reply> change_voters(quorum_ptr self, Start&& start) {
  auto& st = self->state;
  const auto token = ++st.next_token;
  auto p = start(token);
  if (!p.ok())
    return propose_reply{p.code, 0, p.leader ? p.leader->value() : -1,
                         std::string("the voter change cannot start: ") +
                             std::string(to_string(p.code))};
  auto rp = self->make_response_promise<propose_reply>();
  st.waiting.emplace(token, rp);
  drain(self);
  return rp;
}

uint32_t ticks(std::chrono::milliseconds d, std::chrono::milliseconds tick) {
  return static_cast<uint32_t>(std::max<int64_t>(1, (d.count() + tick.count() - 1) / tick.count()));
}

quorum_actor::behavior_type quorum_behavior(quorum_ptr self, quorum_options opts,
                                            std::shared_ptr<controller::quorum_member> member) {
  auto& st = self->state;
  st.opts = std::move(opts);
  st.member = std::make_unique<controller::quorum_member>(std::move(*member));
  self->set_down_handler([self](const caf::down_msg& msg) {
    for (auto& [node, link] : self->state.peers)
      if (link.endpoint && link.endpoint.address() == msg.source) link.endpoint = nullptr;
  });
  self->spawn<caf::linked>(ticker, caf::actor_cast<quorum_actor>(self), st.opts.tick_interval);
  tell_directory(self, st.member->core().voters());
  return {
      [self](raft_atom, const capnp_frame& frame) {
        if (auto s = self->state.member->receive(frame); !s) {
          refused(self, s.err());
          return;
        }
        drain(self);
      },
      [self](propose_atom, const std::vector<controller::metadata_record>& records)
          -> caf::result<propose_reply> {
        auto& st = self->state;
        const auto token = ++st.next_token;
        auto p = st.member->propose(token, records);
        if (!p.ok())
          return propose_reply{p.code, 0, p.leader ? p.leader->value() : -1,
                               p.code == errc::not_controller
                                   ? "this controller does not lead the quorum"
                                   : "a proposal needs records"};
        auto rp = self->make_response_promise<propose_reply>();
        st.waiting.emplace(token, rp);
        drain(self);
        return rp;
      },
      [self](status_atom) { return self->state.member->status_now(); },
      [self](image_atom) { return self->state.member->image(); },
      [self](qtick_atom) {
        self->state.member->tick();
        drain(self);
      },
      [self](add_voter_atom, int32_t id, const std::string& endpoint) -> caf::result<propose_reply> {
        if (auto valid = validate_voter_endpoint(endpoint); !valid)
          return propose_reply{errc::invalid_request, 0, -1, valid.err().message};
        raft::voter v;
        v.id = node_id{id};
        v.endpoint = endpoint;
        return change_voters(self, [&](uint64_t token) {
          auto started = self->state.member->add_voter(token, v);
          // The leader replicates to the learner before any entry names it; the directory
          // hears of it before the first frame for it is looked up.
          if (started.ok()) tell_directory(self, raft::voter_set{v});
          return started;
        });
      },
      [self](remove_voter_atom, int32_t id) {
        return change_voters(self, [&](uint64_t token) {
          return self->state.member->remove_voter(token, node_id{id});
        });
      },
      [self](resign_atom) -> caf::result<int32_t> {
        auto& st = self->state;
        st.member->transfer_leadership();
        auto rp = self->make_response_promise<int32_t>();
        st.resigning.push_back(rp);
        drain(self);
        return rp;
      },
  };
}

} // namespace

result<quorum_actor> spawn_quorum_actor(caf::actor_system& sys, quorum_options options) {
  auto v = options.voters;
  std::sort(v.begin(), v.end());
  if (v.empty() || std::adjacent_find(v.begin(), v.end()) != v.end())
    return make_error(errc::invalid_request, "the quorum needs voters, none twice");
  if (options.tick_interval.count() <= 0 || options.election_timeout < options.tick_interval ||
      options.heartbeat_interval >= options.election_timeout)
    return make_error(errc::invalid_request,
                      "the quorum needs tick interval > 0, election timeout >= tick interval and "
                      "heartbeat interval < election timeout");
  controller::quorum_member_config mc;
  mc.raft.id = options.node;
  mc.raft.voters = v;
  mc.raft.election_timeout_ticks = ticks(options.election_timeout, options.tick_interval);
  mc.raft.heartbeat_ticks = ticks(options.heartbeat_interval, options.tick_interval);
  mc.raft.seed = options.seed ? *options.seed
                              : (uint64_t{std::random_device{}()} << 32 | std::random_device{}());
  mc.raft.snapshot_entries = options.snapshot_entries;
  mc.dir = options.dir;
  mc.cluster_id = options.cluster_id;
  std::random_device rd;
  for (auto& b : mc.new_directory) b = static_cast<uint8_t>(rd());
  auto member = controller::quorum_member::open(std::move(mc));
  if (!member) return member.err();
  auto shared = std::make_shared<controller::quorum_member>(std::move(*member));
  return sys.spawn<caf::detached>(quorum_behavior, std::move(options), std::move(shared));
}

} // namespace capstan
