// The broker lifecycle actor: see broker_lifecycle_actor.hpp. One request is out at a time; the
// next is scheduled from its answer (or its failure), so the timer never piles up requests.

#include "actors/controller/broker_lifecycle_actor.hpp"

#include <chrono>
#include <optional>
#include <random>
#include <set>
#include <utility>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/controller/controller_codec.hpp"
#include "actors/log/io_worker_actor.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/cluster/incarnation_file.hpp"
#include "runtime/cluster/link_faults.hpp"

namespace capstan {

namespace {

// A controlled shutdown is answered within this, every lookup and request included (the node
// waits 5 s for it).
constexpr auto shutdown_window = std::chrono::milliseconds(4000);

struct pending_shutdown {
  caf::typed_response_promise<bool> rp;
  capnp_frame frame;
  std::chrono::steady_clock::time_point deadline;
  // A retry is scheduled: only then does a tick ask again (one scheduled for a heartbeat before
  // the stop began must not start a second chain of requests).
  bool retry_due = false;
  // Asked where a NOT_CONTROLLER pointed without waiting; the next time waits the back-off, so
  // two voters pointing at each other during an election are not asked in a tight loop.
  bool followed_hint = false;
  // Voters whose address refused the connection meanwhile: their processes are gone.
  std::set<node_id> gone{};
};

struct lifecycle_state {
  static inline const char* name = "capstan.broker_lifecycle";
  broker_lifecycle_options opts;
  std::unique_ptr<broker_lifecycle> core;
  // A controlled shutdown began: no more registrations or heartbeats.
  bool stopping = false;
  // Its answer, until it is given.
  std::optional<pending_shutdown> shutdown;
  // This incarnation is (being) written to the data dir.
  bool kept = false;
};

using lifecycle_ptr = broker_lifecycle_actor::stateful_pointer<lifecycle_state>;

void schedule(lifecycle_ptr self, std::chrono::milliseconds wait) {
  if (wait.count() <= 0)
    self->send(self, lctick_atom_v);
  else
    self->delayed_send(self, wait, lctick_atom_v);
}

void no_answer(lifecycle_ptr self, const std::string& why) {
  auto& st = self->state;
  spdlog::debug("node {}: no answer from controller {}: {}", st.opts.node.value(),
                st.core->target().value(), why);
  schedule(self, st.core->failed());
}

// Writes this incarnation to the data dir for the next process, once, off the scheduler (an
// fsync). A failure costs the next process its quick registration, and marks its replicas wiped
// (a data dir naming an incarnation other than the registered one may be a restored backup).
void keep_incarnation(lifecycle_ptr self) {
  auto& st = self->state;
  if (st.kept || st.opts.data_dir.empty()) return;
  st.kept = true;
  auto worker = spawn_io_worker(self->system());
  // Linked: a stop before the write ends the worker too (a live detached actor would hold up the
  // actor system's end).
  self->link_to(worker);
  io_task write{[dir = st.opts.data_dir, id = st.opts.incarnation, node = st.opts.node.value()] {
    if (auto s = write_incarnation_file(dir, id); !s)
      spdlog::warn("node {}: cannot keep its incarnation id for the next process: {}", node,
                   s.err().to_string());
  }};
  self->request(worker, caf::infinite, run_atom_v, std::move(write))
      .then(
          [self, worker](bool) {
            self->unlink_from(worker);
            self->send(worker, close_atom_v);
          },
          [](caf::error&) {});
}

void refused_for_good(lifecycle_ptr self, const error& why) {
  auto& st = self->state;
  st.stopping = true;
  spdlog::error("node {}: the cluster refuses this node: {}", st.opts.node.value(),
                why.to_string());
  if (st.opts.on_refused) st.opts.on_refused(why);
}

void answered(lifecycle_ptr self, bool registering, const capnp_frame& f) {
  auto& st = self->state;
  const auto node = st.opts.node.value();
  if (registering) {
    auto r = decode_broker_registration_response(f);
    if (!r) return no_answer(self, r.err().to_string());
    if (r->error == errc::none) {
      spdlog::info("node {}: registered with controller {} at broker epoch {}", node,
                   st.core->target().value(), r->broker_epoch);
      keep_incarnation(self);
    } else if (r->error != errc::not_controller) {
      spdlog::warn("node {}: registration refused: {}: {}", node, to_string(r->error), r->message);
    }
    const auto wait = st.core->registered(*r, std::chrono::steady_clock::now());
    if (st.core->refusal()) return refused_for_good(self, *st.core->refusal());
    schedule(self, wait);
    return;
  }
  auto r = decode_broker_heartbeat_response(f);
  if (!r) return no_answer(self, r.err().to_string());
  if (r->error == errc::stale_broker_epoch)
    spdlog::warn("node {}: registration lost ({}), registering again", node, r->message);
  const bool was_fenced = st.core->fenced();
  schedule(self, st.core->heartbeated(*r));
  if (was_fenced && !st.core->fenced()) spdlog::info("node {}: unfenced", node);
}

// How long the next registration or heartbeat (and the lookup of its voter) may wait for an
// answer. A heartbeat waits one heartbeat interval at most, as KRaft's since KAFKA-19294: while
// it waits on a controller that is gone or cut off, a new active controller counts down the
// node's session, and request_timeout may be longer than that session.
std::chrono::milliseconds wait_for_answer(const lifecycle_state& st) {
  if (st.core->registering()) return st.opts.request_timeout;
  return std::min(st.opts.request_timeout, st.opts.timing.heartbeat_interval);
}

void step(lifecycle_ptr self, const node_endpoint_actor& ep) {
  auto& st = self->state;
  // The lookup answered after the controlled shutdown began: a plain heartbeat now would ask the
  // controller to unfence the node it is fencing.
  if (st.stopping) return;
  const bool registering = st.core->registering();
  capnp_frame frame;
  if (registering) {
    controller::broker_registration_request r;
    r.node = st.opts.node;
    r.incarnation = st.opts.incarnation;
    r.cluster_id = st.opts.cluster_id;
    r.client_host = st.opts.client_host;
    r.client_port = st.opts.client_port;
    r.cluster_host = st.opts.cluster_host;
    r.cluster_port = st.opts.cluster_port;
    r.rack = st.opts.rack;
    r.kafka_host = st.opts.kafka_host;
    r.kafka_port = st.opts.kafka_port;
    r.previous_incarnation = st.opts.previous_incarnation;
    r.previous_clean_shutdown = st.opts.previous_clean_shutdown;
    frame = encode(r);
  } else {
    broker_heartbeat_msg hb;
    hb.node = st.opts.node;
    hb.broker_epoch = st.core->epoch();
    if (st.opts.offline) hb.offline = *st.opts.offline->current();
    if (st.opts.leaderless) hb.leaderless = *st.opts.leaderless->current();
    frame = encode(hb);
  }
  auto ok = [self, registering](const capnp_frame& f) { answered(self, registering, f); };
  auto failed = [self](caf::error& err) { no_answer(self, caf::to_string(err)); };
  if (registering)
    self->request(ep, wait_for_answer(st), brokerreg_atom_v, frame).then(ok, failed);
  else
    self->request(ep, wait_for_answer(st), brokerhb_atom_v, frame).then(ok, failed);
}

// Hands the endpoint of the voter the next request goes to to `then`, or why there is none to
// `failed`; the lookup waits at most `timeout`.
void with_target(lifecycle_ptr self, std::chrono::milliseconds timeout,
                 std::function<void(const node_endpoint_actor&)> then,
                 std::function<void(const caf::error&)> failed) {
  auto& st = self->state;
  const auto target = st.core->target();
  if (target == st.opts.node && st.opts.self_endpoint) return then(st.opts.self_endpoint);
  if (link_faults::instance().dropped(st.opts.node, target))
    return failed(to_caf_error(
        make_error(errc::request_timed_out, "the fault switch cuts the link to node " +
                                                std::to_string(target.value()))));
  self->request(st.opts.peers, timeout, endpoint_atom_v, target)
      .then([then](node_endpoint_actor& ep) { then(ep); },
            [failed](caf::error& err) { failed(err); });
}

void finish_shutdown(lifecycle_ptr self, bool done, const std::string& why) {
  auto& st = self->state;
  if (!st.shutdown) return;
  if (done)
    spdlog::info("node {}: controlled shutdown done: its leaderships moved", st.opts.node.value());
  else
    spdlog::warn("node {}: controlled shutdown not confirmed: {}", st.opts.node.value(), why);
  st.shutdown->rp.deliver(done);
  st.shutdown.reset();
}

// The controller moved or is moving (a stopping controller hands the quorum over): ask where the
// answer points, or the next voter, after the core's wait, while the window lasts.
void shutdown_refused(lifecycle_ptr self, std::chrono::milliseconds wait, const std::string& why) {
  auto& st = self->state;
  if (!st.shutdown) return;
  if (std::chrono::steady_clock::now() + wait >= st.shutdown->deadline)
    return finish_shutdown(self, false, why);
  spdlog::debug("node {}: controlled shutdown: {}; asking controller {}", st.opts.node.value(), why,
                st.core->target().value());
  st.shutdown->retry_due = true;
  schedule(self, wait);
}

// What is left of the shutdown's window for one lookup or request, at most request_timeout.
std::chrono::milliseconds shutdown_time_left(const lifecycle_state& st) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      st.shutdown->deadline - std::chrono::steady_clock::now());
  return std::min(st.opts.request_timeout, left);
}

void shutdown_answered(lifecycle_ptr self, const capnp_frame& f) {
  auto& st = self->state;
  // It answered: back, if it was gone.
  if (st.shutdown) st.shutdown->gone.erase(st.core->target());
  auto r = decode_broker_heartbeat_response(f);
  if (!r) return finish_shutdown(self, false, r.err().to_string());
  const std::string why = std::string(to_string(r->error)) + ": " + r->message;
  if (r->error == errc::not_controller) {
    auto wait = st.core->heartbeated(*r);
    // Pointed at the active controller: ask it now, the node is waiting.
    if (st.shutdown && !st.shutdown->followed_hint && r->leader_hint >= 0 &&
        st.core->target() == node_id{r->leader_hint}) {
      st.shutdown->followed_hint = true;
      wait = std::chrono::milliseconds{0};
    }
    return shutdown_refused(self, wait, why);
  }
  if (r->error != errc::none) return finish_shutdown(self, false, why);
  if (!r->should_shut_down) return finish_shutdown(self, false, "the controller did not fence it");
  finish_shutdown(self, true, {});
}

// No answer from the voter asked. Once most voters refused connections no controller is left to
// confirm anything (the whole cluster is stopping): the node stops at once instead of asking
// until the window closes.
void shutdown_unreachable(lifecycle_ptr self, const caf::error& err) {
  auto& st = self->state;
  if (!st.shutdown) return;
  if (from_caf_error(err).code == errc::broker_not_available) {
    st.shutdown->gone.insert(st.core->target());
    if (st.core->majority_gone(st.shutdown->gone))
      return finish_shutdown(self, false, "most controller voters are gone: " + caf::to_string(err));
  }
  shutdown_refused(self, st.core->failed(), caf::to_string(err));
}

void ask_to_shut_down(lifecycle_ptr self) {
  auto& st = self->state;
  if (!st.shutdown) return;
  if (shutdown_time_left(st).count() <= 0)
    return finish_shutdown(self, false, "no controller confirmed it in time");
  with_target(
      self, shutdown_time_left(st),
      [self](const node_endpoint_actor& ep) {
        auto& st = self->state;
        if (!st.shutdown) return;
        const auto left = shutdown_time_left(st);
        if (left.count() <= 0)
          return finish_shutdown(self, false, "no controller confirmed it in time");
        self->request(ep, left, brokerhb_atom_v, st.shutdown->frame)
            .then([self](const capnp_frame& f) { shutdown_answered(self, f); },
                  [self](caf::error& err) { shutdown_unreachable(self, err); });
      },
      [self](const caf::error& err) { shutdown_unreachable(self, err); });
}

// KRaft's controlled shutdown: a heartbeat asking to shut down, to the voter that answered last
// and, while it says NOT_CONTROLLER or does not answer, to where it points or the next voter;
// true iff the controller says it is done (the node leads nothing and is fenced).
caf::result<bool> shut_down(lifecycle_ptr self) {
  auto& st = self->state;
  st.stopping = true;
  if (st.core->registering() || st.shutdown) return false;
  broker_heartbeat_msg hb;
  hb.node = st.opts.node;
  hb.broker_epoch = st.core->epoch();
  hb.want_shut_down = true;
  if (st.opts.offline) hb.offline = *st.opts.offline->current();
  auto rp = self->make_response_promise<bool>();
  st.shutdown =
      pending_shutdown{rp, encode(hb), std::chrono::steady_clock::now() + shutdown_window};
  ask_to_shut_down(self);
  return rp;
}

broker_lifecycle_actor::behavior_type lifecycle_behavior(lifecycle_ptr self,
                                                         broker_lifecycle_options opts) {
  auto& st = self->state;
  st.opts = std::move(opts);
  std::vector<node_id> voters;
  for (const auto& v : st.opts.voters) voters.push_back(v.node);
  st.core = std::make_unique<broker_lifecycle>(voters, st.opts.timing);
  std::vector<peer_address> others;
  for (const auto& v : st.opts.voters)
    if (v.node != st.opts.node) others.push_back(v);
  if (!others.empty()) self->send(st.opts.peers, peers_atom_v, std::move(others));
  self->send(self, lctick_atom_v);
  return {
      [self](status_atom) {
        auto& c = *self->state.core;
        return broker_lifecycle_status{c.epoch(), c.fenced(), c.target()};
      },
      [self](lctick_atom) {
        auto& st = self->state;
        if (st.stopping) {
          if (st.shutdown && std::exchange(st.shutdown->retry_due, false)) ask_to_shut_down(self);
          return;
        }
        with_target(
            self, wait_for_answer(st), [self](const node_endpoint_actor& ep) { step(self, ep); },
            [self](const caf::error& err) { no_answer(self, caf::to_string(err)); });
      },
      [self](stop_atom) { return shut_down(self); },
  };
}

} // namespace

broker_lifecycle_actor spawn_broker_lifecycle(caf::actor_system& sys,
                                              broker_lifecycle_options options) {
  const bool none = std::all_of(options.incarnation.begin(), options.incarnation.end(),
                                [](uint8_t b) { return b == 0; });
  if (none) {
    std::random_device rd;
    for (auto& b : options.incarnation) b = static_cast<uint8_t>(rd());
  }
  return sys.spawn(lifecycle_behavior, std::move(options));
}

} // namespace capstan
