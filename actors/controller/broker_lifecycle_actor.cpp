// The broker lifecycle actor: see broker_lifecycle_actor.hpp. One request is out at a time; the
// next is scheduled from its answer (or its failure), so the timer never piles up requests.

#include "actors/controller/broker_lifecycle_actor.hpp"

#include <random>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/controller/controller_codec.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/cluster/link_faults.hpp"

namespace capstan {

namespace {

struct lifecycle_state {
  static inline const char* name = "capstan.broker_lifecycle";
  broker_lifecycle_options opts;
  std::unique_ptr<broker_lifecycle> core;
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

void answered(lifecycle_ptr self, bool registering, const capnp_frame& f) {
  auto& st = self->state;
  const auto node = st.opts.node.value();
  if (registering) {
    auto r = decode_broker_registration_response(f);
    if (!r) return no_answer(self, r.err().to_string());
    if (r->error == errc::none)
      spdlog::info("node {}: registered with controller {} at broker epoch {}", node,
                   st.core->target().value(), r->broker_epoch);
    else if (r->error != errc::not_controller)
      spdlog::warn("node {}: registration refused: {}: {}", node, to_string(r->error), r->message);
    schedule(self, st.core->registered(*r));
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

void step(lifecycle_ptr self, const node_endpoint_actor& ep) {
  auto& st = self->state;
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
    frame = encode(r);
  } else {
    frame = encode(
        broker_heartbeat_msg{st.opts.node, st.core->epoch(), false,
                             st.opts.offline ? *st.opts.offline->current() : offline_replicas{}});
  }
  auto ok = [self, registering](const capnp_frame& f) { answered(self, registering, f); };
  auto failed = [self](caf::error& err) { no_answer(self, caf::to_string(err)); };
  if (registering)
    self->request(ep, st.opts.request_timeout, brokerreg_atom_v, frame).then(ok, failed);
  else
    self->request(ep, st.opts.request_timeout, brokerhb_atom_v, frame).then(ok, failed);
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
        const auto target = st.core->target();
        if (target == st.opts.node && st.opts.self_endpoint) {
          step(self, st.opts.self_endpoint);
          return;
        }
        if (link_faults::instance().dropped(st.opts.node, target))
          return no_answer(self, "the fault switch cuts the link");
        self->request(st.opts.peers, st.opts.request_timeout, endpoint_atom_v, target)
            .then([self](node_endpoint_actor& ep) { step(self, ep); },
                  [self](caf::error& err) { no_answer(self, caf::to_string(err)); });
      },
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
