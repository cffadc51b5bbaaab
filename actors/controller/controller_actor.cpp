// The controller actor: see controller_actor.hpp.
//
// Runs on the shared scheduler: it never blocks (the quorum actor, which fsyncs, is detached).
// Every wait is bounded: requests to the quorum member by request_timeout / propose_timeout, each
// control message by request_timeout. A generation number, bumped whenever the actor becomes
// active or stops being so, tells late answers of an earlier activity from current ones.

#include "actors/controller/controller_actor.hpp"

#include <deque>
#include <map>
#include <random>
#include <set>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/controller/active_controller.hpp"
#include "actors/controller/control_streams.hpp"
#include "actors/replica/control_codec.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/cluster/link_faults.hpp"

namespace capstan {

namespace {

using controller::active_controller;
using controller::controller_answer;
using controller::controller_request;
using controller::outgoing_message;

struct queued_request {
  controller_request request;
  // Empty for the actor's own requests (session expiries).
  std::optional<caf::typed_response_promise<capnp_frame>> reply;
};

struct controller_state {
  static inline const char* name = "capstan.controller";
  controller_options opts;
  std::unique_ptr<active_controller> core;
  node_endpoint_actor own_endpoint;
  int32_t leader_hint = -1;
  uint64_t generation = 0;
  bool polling = false;
  bool activating = false;
  bool busy = false;
  std::deque<queued_request> queue;
  controller::control_streams streams;
};

using controller_ptr = controller_actor::stateful_pointer<controller_state>;

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

capnp_frame encode_answer(const controller_answer& a) {
  return std::visit(
      [](const auto& x) -> capnp_frame {
        if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::monostate>)
          return capnp_frame{};
        else
          return encode(x);
      },
      a);
}

void reply(queued_request& q, const controller_answer& a) {
  if (q.reply) q.reply->deliver(encode_answer(a));
}

void refuse_all(controller_ptr self, errc code, const std::string& why) {
  auto& st = self->state;
  auto queue = std::move(st.queue);
  st.queue.clear();
  for (auto& q : queue)
    reply(q, active_controller::refuse(q.request, make_error(code, why), st.leader_hint));
}

void deactivate(controller_ptr self, const std::string& why) {
  auto& st = self->state;
  if (!st.core->active()) return;
  spdlog::info("controller {}: no longer active: {}", st.opts.node.value(), why);
  st.core->deactivate();
  ++st.generation;
  st.busy = false;
  st.streams.reset();
  refuse_all(self, errc::not_controller,
             "controller " + std::to_string(st.opts.node.value()) + " is not active");
}

void drain(controller_ptr self, node_id to);

// The message out to `to` was applied there, or not (refused, timed out, lost); the next goes.
void answered(controller_ptr self, node_id to, uint64_t generation, bool applied) {
  auto& st = self->state;
  if (generation != st.generation) return;
  st.streams.answered(to, applied);
  drain(self, to);
}

// The fault switch's delayed control message (link_faults.hpp): handed over from a timer,
// unanswered, as the quorum's delayed Raft sends.
void send_late(const node_endpoint_actor& ep, controller::control_streams::sendable m,
               std::chrono::milliseconds delay) {
  switch (m.what) {
  case outgoing_message::kind::update_metadata:
    caf::delayed_anon_send(ep, delay, metadata_atom_v, std::move(m.frame));
    break;
  case outgoing_message::kind::leader_and_isr:
    caf::delayed_anon_send(ep, delay, leaderisr_atom_v, std::move(m.frame));
    break;
  case outgoing_message::kind::stop_replica:
    caf::delayed_anon_send(ep, delay, stopreplica_atom_v, std::move(m.frame));
    break;
  }
}

void send_one(controller_ptr self, node_id to, const node_endpoint_actor& ep, uint64_t generation,
              controller::control_streams::sendable m) {
  auto& st = self->state;
  auto timeout = st.opts.request_timeout;
  auto failed = [self, to, generation](caf::error& err) {
    spdlog::warn("controller {}: a control message to node {} failed: {}; the node gets its full "
                 "state once it heartbeats",
                 self->state.opts.node.value(), to.value(), caf::to_string(err));
    answered(self, to, generation, false);
  };
  const auto fault = link_faults::instance().check_control(st.opts.node, to);
  if (fault.what == link_fault::kind::drop) {
    spdlog::debug("controller {}: a control message to node {} is lost: the fault switch drops it",
                  st.opts.node.value(), to.value());
    answered(self, to, generation, false);
    return;
  }
  // LeaderAndIsr and StopReplica answer an error in their response; per-partition errors mean the
  // message was applied (the partitions' own state says the rest).
  auto control_answer = [self, to, generation](bool stop) {
    return [self, to, generation, stop](const capnp_frame& f) {
      auto r = decode_control_response(f, stop);
      const bool applied = r && r->error == errc::none;
      if (!applied)
        spdlog::warn("controller {}: node {} did not apply a control message: {}; it gets its "
                     "full state once it heartbeats",
                     self->state.opts.node.value(), to.value(),
                     r ? std::string(to_string(r->error)) + ": " + r->message
                       : r.err().to_string());
      answered(self, to, generation, applied);
    };
  };
  if (fault.what == link_fault::kind::delay) {
    // Late, not lost: the stream goes on, and the node refuses what overtakes it as a gap (then
    // gets its full state) and ignores it when it comes after that.
    send_late(ep, std::move(m), fault.delay);
    answered(self, to, generation, true);
    return;
  }
  switch (m.what) {
  case outgoing_message::kind::update_metadata:
    self->request(ep, timeout, metadata_atom_v, std::move(m.frame))
        .then([self, to, generation](const capnp_frame&) { answered(self, to, generation, true); },
              failed);
    break;
  case outgoing_message::kind::leader_and_isr:
    self->request(ep, timeout, leaderisr_atom_v, std::move(m.frame))
        .then(control_answer(false), failed);
    break;
  case outgoing_message::kind::stop_replica:
    self->request(ep, timeout, stopreplica_atom_v, std::move(m.frame))
        .then(control_answer(true), failed);
    break;
  }
}

// Sends `to`'s next message, if one waits and none is out: a node gets them one at a time, in the
// order decided.
void drain(controller_ptr self, node_id to) {
  auto& st = self->state;
  auto m = st.streams.next(to);
  if (!m) return;
  const auto generation = st.generation;
  if (to == st.opts.node && st.own_endpoint) {
    send_one(self, to, st.own_endpoint, generation, std::move(*m));
    return;
  }
  auto shared = std::make_shared<controller::control_streams::sendable>(std::move(*m));
  self->request(st.opts.peers, st.opts.request_timeout, endpoint_atom_v, to)
      .then(
          [self, to, generation, shared](node_endpoint_actor& ep) {
            send_one(self, to, ep, generation, std::move(*shared));
          },
          [self, to, generation](caf::error& err) {
            spdlog::warn("controller {}: cannot reach node {}: {}", self->state.opts.node.value(),
                         to.value(), caf::to_string(err));
            answered(self, to, generation, false);
          });
}

void dispatch(controller_ptr self, std::vector<outgoing_message> messages) {
  auto& st = self->state;
  if (messages.empty()) return;
  std::vector<peer_address> where;
  for (const auto& [id, b] : st.core->image().brokers())
    if (id != st.opts.node) where.push_back(peer_address{id, b.cluster_host, b.cluster_port});
  if (!where.empty()) self->send(st.opts.peers, peers_atom_v, std::move(where));
  std::set<node_id> touched;
  for (const auto& m : messages) touched.insert(m.to);
  st.streams.queue(std::move(messages));
  for (auto n : touched) drain(self, n);
}

void pump(controller_ptr self);

void settle(controller_ptr self, queued_request q, const controller::prepared_request& p,
            std::optional<controller::metadata_image> image, const error& applied) {
  auto settled = self->state.core->commit(p, std::move(image), applied, now_ms());
  reply(q, settled.answer);
  dispatch(self, std::move(settled.messages));
  self->state.busy = false;
  pump(self);
}

// Decides the next queued request; proposes its records and waits for them to commit.
void pump(controller_ptr self) {
  auto& st = self->state;
  if (st.busy || st.queue.empty() || !st.core->active()) return;
  auto q = std::move(st.queue.front());
  st.queue.pop_front();
  auto p = st.core->prepare(q.request, now_ms());
  if (p.refused.code != errc::none || p.changes.records.empty()) {
    st.busy = true;
    settle(self, std::move(q), p, std::nullopt, error{});
    return;
  }
  for (const auto& w : p.changes.warnings)
    spdlog::warn("controller {}: {}", st.opts.node.value(), w);
  for (const auto& e : p.elections)
    if (e.outcome.code == errc::none)
      spdlog::info("controller {}: electing the preferred leader of {}-{}", st.opts.node.value(),
                   e.partition.topic, e.partition.partition.value());
  st.busy = true;
  const auto generation = st.generation;
  auto shared = std::make_shared<std::pair<queued_request, controller::prepared_request>>(
      std::move(q), std::move(p));
  auto lost = [self, shared, generation](errc code, const std::string& why) {
    reply(shared->first, active_controller::refuse(shared->first.request, make_error(code, why),
                                                   self->state.leader_hint));
    if (generation == self->state.generation) deactivate(self, why);
  };
  self->request(st.opts.quorum, st.opts.propose_timeout, propose_atom_v,
                shared->second.changes.records)
      .then(
          [self, shared, generation, lost](const propose_reply& r) {
            if (r.code == errc::not_controller || r.code == errc::request_timed_out) {
              self->state.leader_hint = r.leader;
              lost(r.code, r.message);
              return;
            }
            // Committed: the answer says what the change did, also if this controller stopped
            // being active meanwhile.
            const error applied = r.code == errc::none ? error{} : make_error(r.code, r.message);
            self->request(self->state.opts.quorum, self->state.opts.request_timeout, image_atom_v)
                .then(
                    [self, shared, generation, applied](controller::metadata_image& image) {
                      if (generation != self->state.generation) {
                        reply(shared->first,
                              self->state.core->committed_answer(shared->second, image, applied));
                        return;
                      }
                      settle(self, std::move(shared->first), shared->second, std::move(image),
                             applied);
                    },
                    [lost](caf::error& err) {
                      lost(errc::request_timed_out, caf::to_string(err));
                    });
          },
          [lost](caf::error& err) { lost(errc::request_timed_out, caf::to_string(err)); });
}

caf::result<capnp_frame> enqueue(controller_ptr self, result<controller_request> request,
                                 const controller_request& shape) {
  auto& st = self->state;
  if (!request)
    return encode_answer(active_controller::refuse(shape, request.err(), st.leader_hint));
  if (!st.core->active())
    return encode_answer(active_controller::refuse(
        *request,
        make_error(errc::not_controller,
                   "controller " + std::to_string(st.opts.node.value()) + " is not active"),
        st.leader_hint));
  if (auto hb = std::get_if<broker_heartbeat_msg>(&*request)) {
    st.core->heartbeat_arrived(*hb, now_ms());
    // The node's link works: if a control message to it was lost, it gets its whole state now.
    // A fenced node gets it when its heartbeat unfences it.
    if (st.streams.wants_full_state(hb->node) && st.core->image().is_unfenced(hb->node)) {
      spdlog::info("controller {}: sends node {} its full state", st.opts.node.value(),
                   hb->node.value());
      dispatch(self, st.core->full_state(hb->node));
    }
  }
  auto rp = self->make_response_promise<capnp_frame>();
  st.queue.push_back(queued_request{std::move(*request), rp});
  pump(self);
  return rp;
}

template <class T>
result<controller_request> widen(result<T> r) {
  if (!r) return r.err();
  return controller_request{std::move(*r)};
}

void activate(controller_ptr self, int32_t term) {
  auto& st = self->state;
  st.activating = true;
  self->request(st.opts.quorum, st.opts.request_timeout, image_atom_v)
      .then(
          [self, term](controller::metadata_image& image) {
            auto& st = self->state;
            st.activating = false;
            ++st.generation;
            st.streams.reset();
            st.busy = false;
            auto messages = st.core->activate(std::move(image), term, now_ms());
            spdlog::info("controller {}: active in term {}, {} registered nodes",
                         st.opts.node.value(), term, st.core->image().brokers().size());
            dispatch(self, std::move(messages));
          },
          [self](caf::error& err) {
            self->state.activating = false;
            spdlog::warn("controller {}: cannot read the image: {}", self->state.opts.node.value(),
                         caf::to_string(err));
          });
}

// Queues the actor's own request `r` (a preferred leader election, a recovery), unless one of
// its kind is queued already or the actor is not active (a new active controller's own timer or
// poll takes over).
template <class Request>
void queue_once(controller_ptr self, Request r) {
  auto& st = self->state;
  if (!st.core->active()) return;
  for (const auto& q : st.queue)
    if (std::holds_alternative<Request>(q.request)) return;
  st.queue.push_back(queued_request{std::move(r), std::nullopt});
}

void poll(controller_ptr self) {
  auto& st = self->state;
  if (st.polling) return;
  st.polling = true;
  self->request(st.opts.quorum, st.opts.request_timeout, status_atom_v)
      .then(
          [self](const controller::quorum_status& s) {
            auto& st = self->state;
            st.polling = false;
            st.leader_hint = s.leader ? s.leader->value() : -1;
            const auto term = static_cast<int32_t>(s.term.value());
            // A member handing its leadership over refuses proposals: not active meanwhile.
            const bool leads = s.role == raft::role::leader && !s.handing_over;
            if (st.core->active() && (!leads || term != st.core->epoch()))
              deactivate(self,
                         std::string(s.handing_over ? "the quorum member hands over term "
                                                    : "the quorum member no longer leads term ") +
                             std::to_string(st.core->epoch()));
            // Active only once the member applied its whole log (its own no-op included), so the
            // image holds every entry earlier leaders committed.
            if (leads && !st.core->active() && !st.activating && s.applied_index == s.last_index)
              activate(self, term);
            if (st.core->active()) {
              // Ahead of the queued requests, also while one is being decided: under a steady
              // load of requests a dead node's leaderships would otherwise wait behind them.
              auto expired = st.core->expired_sessions(now_ms());
              for (auto e = expired.rbegin(); e != expired.rend(); ++e) {
                spdlog::info("controller {}: the session of node {} expired", st.opts.node.value(),
                             e->node.value());
                st.queue.push_front(queued_request{*e, std::nullopt});
              }
              if (st.core->recovery_due()) queue_once(self, controller::leader_recovery{});
              pump(self);
            }
          },
          [self](caf::error& err) {
            self->state.polling = false;
            spdlog::warn("controller {}: no status from the quorum: {}",
                         self->state.opts.node.value(), caf::to_string(err));
          });
}

controller_actor::behavior_type controller_behavior(controller_ptr self, controller_options opts) {
  auto& st = self->state;
  st.opts = std::move(opts);
  controller::active_controller_options co;
  co.node = st.opts.node;
  co.decisions = st.opts.decisions;
  co.session_timeout_ms = st.opts.session_timeout.count();
  co.seed = st.opts.seed ? *st.opts.seed
                         : (uint64_t{std::random_device{}()} << 32 | std::random_device{}());
  co.imbalance_percentage = st.opts.imbalance_percentage;
  st.core = std::make_unique<active_controller>(co);
  self->send(self, ctick_atom_v);
  if (st.opts.rebalance_interval)
    self->delayed_send(self, *st.opts.rebalance_interval, rebalance_atom_v);
  return {
      [self](brokerreg_atom, const capnp_frame& f) {
        return enqueue(self, widen(decode_broker_registration(f)),
                       controller::broker_registration_request{});
      },
      [self](brokerhb_atom, const capnp_frame& f) {
        return enqueue(self, widen(decode_broker_heartbeat(f)), broker_heartbeat_msg{});
      },
      [self](mktopic_atom, const capnp_frame& f) {
        return enqueue(self, widen(decode_create_topic(f)), topic_spec{});
      },
      [self](rmtopic_atom, const capnp_frame& f) {
        return enqueue(self, widen(decode_delete_topic(f)), delete_topic_msg{});
      },
      [self](altercfg_atom, const capnp_frame& f) {
        return enqueue(self, widen(decode_alter_configs(f)), alter_configs_msg{});
      },
      [self](allocpid_atom, const capnp_frame& f) {
        return enqueue(self, widen(decode_allocate_producer_ids(f)), allocate_producer_ids_msg{});
      },
      [self](mkparts_atom, const capnp_frame& f) {
        return enqueue(self, widen(decode_create_partitions(f)), create_partitions_msg{});
      },
      [self](elect_atom, const capnp_frame& f) {
        return enqueue(self, widen(decode_elect_leaders(f)), elect_leaders_msg{});
      },
      [self](reassign_atom, const capnp_frame& f) {
        return enqueue(self, widen(decode_reassign_partitions(f)), reassign_partitions_msg{});
      },
      [self](unregister_atom, const capnp_frame& f) {
        return enqueue(self, widen(decode_unregister_broker(f)), unregister_broker_msg{});
      },
      [self](import_atom, controller::import_topics_msg& m) {
        return enqueue(self, controller_request{std::move(m)}, controller::import_topics_msg{});
      },
      [self](descquorum_atom) -> caf::result<capnp_frame> {
        auto rp = self->make_response_promise<capnp_frame>();
        self->request(self->state.opts.quorum, self->state.opts.request_timeout, status_atom_v)
            .then(
                [self, rp](const controller::quorum_status& s) mutable {
                  rp.deliver(encode(controller::describe_voter(s, *self->state.core)));
                },
                [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
        return rp;
      },
      [self](gauges_atom) {
        const auto& c = *self->state.core;
        return controller_gauges{c.active(),
                                 c.active() ? controller::offline_partitions(c.image()) : 0};
      },
      [self](alterisr_atom, const capnp_frame& f) -> caf::result<capnp_frame> {
        auto msg = decode_alter_partition(f);
        // AlterPartition comes straight from the leader's replica manager, not through the node
        // endpoint, so the fault switch is asked here (link_faults.hpp): a lost request.
        if (msg && link_faults::instance().dropped(msg->broker, self->state.opts.node))
          return self->make_response_promise<capnp_frame>();
        return enqueue(self, widen(std::move(msg)), alter_partition_msg{});
      },
      [self](endpoint_atom, const node_endpoint_actor& ep) { self->state.own_endpoint = ep; },
      [self](ctick_atom) {
        poll(self);
        self->delayed_send(self, self->state.opts.poll_interval, ctick_atom_v);
      },
      [self](rebalance_atom) {
        queue_once(self, controller::leader_rebalance{});
        pump(self);
        self->delayed_send(self, *self->state.opts.rebalance_interval, rebalance_atom_v);
      },
  };
}

} // namespace

controller_actor spawn_controller_actor(caf::actor_system& sys, controller_options options) {
  return sys.spawn(controller_behavior, std::move(options));
}

} // namespace capstan
