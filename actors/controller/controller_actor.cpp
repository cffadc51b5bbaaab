// The controller actor: see controller_actor.hpp.
//
// A shell over controller_driver, which holds the logic: the actor hands it what arrives
// (requests, the quorum member's status, proposals' outcomes, control messages' answers) and
// carries out what it asks with messages. It runs on the shared scheduler and never blocks (the
// quorum actor, which fsyncs, is detached). Every wait is bounded: requests to the quorum member
// by request_timeout / propose_timeout, each control message by request_timeout.

#include "actors/controller/controller_actor.hpp"

#include <map>
#include <random>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/controller/active_controller.hpp"
#include "actors/controller/controller_driver.hpp"
#include "actors/replica/control_codec.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/cluster/link_faults.hpp"

namespace capstan {

namespace {

using controller::active_controller;
using controller::controller_answer;
using controller::controller_request;
using controller::outgoing_message;
using sendable = controller::control_streams::sendable;

struct controller_state;
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

// The driver's requests, as messages.
class actor_io final : public controller::controller_io {
public:
  explicit actor_io(controller_ptr self) : self_(self) {}

  void reply(uint64_t reply, const controller_answer& answer) override;
  void propose(uint64_t token, const std::vector<controller::metadata_record>& records) override;
  void read_image() override;
  void learn_nodes(const controller::metadata_image& image) override;
  void send(node_id to, uint64_t generation, sendable m) override;

private:
  void send_one(node_id to, const node_endpoint_actor& ep, uint64_t generation, sendable m);
  // Monitors `ep` as `to`'s endpoint unless it is already.
  void watch(node_id to, const node_endpoint_actor& ep);

  controller_ptr self_;
};

struct controller_state {
  static inline const char* name = "capstan.controller";
  controller_options opts;
  std::unique_ptr<actor_io> io;
  std::unique_ptr<controller::controller_driver> driver;
  node_endpoint_actor own_endpoint;
  // The endpoint last used for each other node, monitored: its DOWN is that node's connection
  // closing (a killed process), which ends the node's session at once. A DOWN of an endpoint
  // replaced since (the node came back on a new connection) is not.
  std::map<node_id, caf::actor_addr> endpoints;
  bool polling = false;
  uint64_t next_reply = 0;
  std::map<uint64_t, caf::typed_response_promise<capnp_frame>> replies;
};

void actor_io::reply(uint64_t reply, const controller_answer& answer) {
  auto& replies = self_->state.replies;
  auto it = replies.find(reply);
  if (it == replies.end()) return;
  it->second.deliver(encode_answer(answer));
  replies.erase(it);
}

void actor_io::propose(uint64_t token, const std::vector<controller::metadata_record>& records) {
  auto self = self_;
  auto failed = [self, token](errc code, const std::string& why) {
    self->state.driver->proposal_failed(token, code, why, std::nullopt);
  };
  self->request(self->state.opts.quorum, self->state.opts.propose_timeout, propose_atom_v, records)
      .then(
          [self, token, failed](const propose_reply& r) {
            if (r.code == errc::not_controller || r.code == errc::request_timed_out) {
              self->state.driver->proposal_failed(token, r.code, r.message, r.leader);
              return;
            }
            const error applied = r.code == errc::none ? error{} : make_error(r.code, r.message);
            self->request(self->state.opts.quorum, self->state.opts.request_timeout, image_atom_v)
                .then(
                    [self, token, applied](controller::metadata_image& image) {
                      self->state.driver->proposal_committed(token, std::move(image), applied,
                                                             now_ms());
                    },
                    [failed](caf::error& err) {
                      failed(errc::request_timed_out, caf::to_string(err));
                    });
          },
          [failed](caf::error& err) { failed(errc::request_timed_out, caf::to_string(err)); });
}

void actor_io::read_image() {
  auto self = self_;
  self->request(self->state.opts.quorum, self->state.opts.request_timeout, image_atom_v)
      .then(
          [self](controller::metadata_image& image) {
            self->state.driver->activate(std::move(image), now_ms());
          },
          [self](caf::error& err) {
            self->state.driver->activation_failed();
            spdlog::warn("controller {}: cannot read the image: {}", self->state.opts.node.value(),
                         caf::to_string(err));
          });
}

void actor_io::learn_nodes(const controller::metadata_image& image) {
  const auto& opts = self_->state.opts;
  std::vector<peer_address> where;
  for (const auto& [id, b] : image.brokers())
    if (id != opts.node) where.push_back(peer_address{id, b.cluster_host, b.cluster_port});
  if (!where.empty()) self_->send(opts.peers, peers_atom_v, std::move(where));
}

// The fault switch's delayed control message (link_faults.hpp): handed over from a timer,
// unanswered, as the quorum's delayed Raft sends.
void send_late(const node_endpoint_actor& ep, sendable m, std::chrono::milliseconds delay) {
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

void actor_io::send_one(node_id to, const node_endpoint_actor& ep, uint64_t generation,
                        sendable m) {
  auto self = self_;
  auto& st = self->state;
  auto timeout = m.timeout(st.opts.request_timeout);
  auto failed = [self, to, generation](caf::error& err) {
    spdlog::warn("controller {}: a control message to node {} failed: {}; the node gets its full "
                 "state once it heartbeats",
                 self->state.opts.node.value(), to.value(), caf::to_string(err));
    self->state.driver->answered(to, generation, false);
  };
  const auto fault = link_faults::instance().check_control(st.opts.node, to);
  if (fault.what == link_fault::kind::drop) {
    spdlog::debug("controller {}: a control message to node {} is lost: the fault switch drops it",
                  st.opts.node.value(), to.value());
    st.driver->answered(to, generation, false);
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
      self->state.driver->answered(to, generation, applied);
    };
  };
  if (fault.what == link_fault::kind::delay) {
    // Late, not lost: the stream goes on, and the node refuses what overtakes it as a gap (then
    // gets its full state) and ignores it when it comes after that.
    send_late(ep, std::move(m), fault.delay);
    st.driver->answered(to, generation, true);
    return;
  }
  switch (m.what) {
  case outgoing_message::kind::update_metadata:
    self->request(ep, timeout, metadata_atom_v, std::move(m.frame))
        .then([self, to, generation](
                  const capnp_frame&) { self->state.driver->answered(to, generation, true); },
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

void actor_io::watch(node_id to, const node_endpoint_actor& ep) {
  auto& known = self_->state.endpoints[to];
  if (known == ep.address()) return;
  known = ep.address();
  self_->monitor(ep);
}

void actor_io::send(node_id to, uint64_t generation, sendable m) {
  auto self = self_;
  auto& st = self->state;
  if (to == st.opts.node && st.own_endpoint) {
    send_one(to, st.own_endpoint, generation, std::move(m));
    return;
  }
  auto shared = std::make_shared<sendable>(std::move(m));
  self->request(st.opts.peers, st.opts.request_timeout, endpoint_atom_v, to)
      .then([this, to, generation,
             shared](node_endpoint_actor& ep) {
              watch(to, ep);
              send_one(to, ep, generation, std::move(*shared));
            },
            [self, to, generation](caf::error& err) {
              spdlog::warn("controller {}: cannot reach node {}: {}", self->state.opts.node.value(),
                           to.value(), caf::to_string(err));
              // Its address refused the connection: its process is gone, as when a connection
              // closes. This is how a newly active controller learns of a node that died with
              // the previous one, whose connections it never had.
              if (from_caf_error(err).code == errc::broker_not_available)
                self->state.driver->connection_lost(to, now_ms());
              self->state.driver->answered(to, generation, false);
            });
}

// The quorum member's answer to a voter change, as the TopicResponse the node's controller client
// reads: NOT_CONTROLLER keeps the leader as its hint, so the client asks that voter next.
topic_response_msg voter_change_answer(const propose_reply& r, int32_t voter, bool adding) {
  topic_response_msg out;
  out.error = r.code;
  out.leader_hint = r.leader;
  const std::string node = "node " + std::to_string(voter);
  switch (r.code) {
  case errc::none:
    break;
  case errc::not_controller:
    out.message = "this controller does not lead the quorum";
    break;
  case errc::duplicate_voter:
    out.message = node + " is a voter already";
    break;
  case errc::voter_not_found:
    out.message = node + " is no voter";
    break;
  case errc::invalid_request:
    // The gateway and the codec checked the id and endpoint: what is left is the set's size.
    out.message = adding ? node + " cannot be added: the quorum has the most voters it can hold"
                         : node + " is the last voter";
    break;
  case errc::request_timed_out:
    out.message = (adding ? "adding " + node +
                                " did not complete (another voter change is under way, or the "
                                "node did not catch up with the quorum's log: does it run a "
                                "quorum member?): "
                          : "removing " + node +
                                " did not complete (another voter change is under way, or the "
                                "voters left have no live majority): ") +
                  r.message;
    break;
  default:
    out.message = r.message;
  }
  return out;
}

template <class Atom, class... Ts>
caf::result<capnp_frame> change_voters(controller_ptr self, int32_t voter, bool adding, Atom atom,
                                       Ts&&... args) {
  auto& st = self->state;
  auto rp = self->make_response_promise<capnp_frame>();
  spdlog::info("controller {}: {} voter {}", st.opts.node.value(),
               adding ? "adding" : "removing", voter);
  self->request(st.opts.quorum, st.opts.voter_change_timeout, atom, std::forward<Ts>(args)...)
      .then(
          [self, rp, voter, adding](const propose_reply& r) mutable {
            if (r.code == errc::none)
              spdlog::info("controller {}: {} voter {} committed at index {}",
                           self->state.opts.node.value(), adding ? "adding" : "removing", voter,
                           r.index);
            rp.deliver(encode(voter_change_answer(r, voter, adding)));
          },
          [rp](caf::error& err) mutable {
            topic_response_msg out;
            out.error = errc::request_timed_out;
            out.message = "the quorum member did not answer the voter change: " +
                          caf::to_string(err);
            rp.deliver(encode(out));
          });
  return rp;
}

// A frame that does not decode is answered with its error, as the driver answers other requests.
template <class T>
capnp_frame refused(const result<T>& r) {
  topic_response_msg out;
  out.error = r.err().code;
  out.message = r.err().message;
  return encode(out);
}

caf::result<capnp_frame> enqueue(controller_ptr self, result<controller_request> request,
                                 const controller_request& shape) {
  auto& st = self->state;
  auto rp = self->make_response_promise<capnp_frame>();
  const uint64_t reply = ++st.next_reply;
  st.replies.emplace(reply, rp);
  st.driver->request(std::move(request), shape, reply, now_ms());
  return rp;
}

template <class T>
result<controller_request> widen(result<T> r) {
  if (!r) return r.err();
  return controller_request{std::move(*r)};
}

void poll(controller_ptr self) {
  auto& st = self->state;
  if (st.polling) return;
  st.polling = true;
  self->request(st.opts.quorum, st.opts.request_timeout, status_atom_v)
      .then(
          [self](const controller::quorum_status& s) {
            self->state.polling = false;
            self->state.driver->status(s, now_ms());
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
  st.io = std::make_unique<actor_io>(self);
  st.driver = std::make_unique<controller::controller_driver>(co, *st.io);
  self->set_down_handler([self](const caf::down_msg& msg) {
    auto& endpoints = self->state.endpoints;
    for (auto it = endpoints.begin(); it != endpoints.end(); ++it)
      if (it->second == msg.source) {
        const auto node = it->first;
        endpoints.erase(it);
        self->state.driver->connection_lost(node, now_ms());
        return;
      }
  });
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
      [self](add_voter_atom a, const capnp_frame& f) -> caf::result<capnp_frame> {
        auto m = decode_add_voter(f);
        if (!m) return refused(m);
        return change_voters(self, m->voter.value(), true, a, m->voter.value(),
                             std::move(m->endpoint));
      },
      [self](remove_voter_atom a, const capnp_frame& f) -> caf::result<capnp_frame> {
        auto m = decode_remove_voter(f);
        if (!m) return refused(m);
        return change_voters(self, m->voter.value(), false, a, m->voter.value());
      },
      [self](import_atom, controller::import_topics_msg& m) {
        return enqueue(self, controller_request{std::move(m)}, controller::import_topics_msg{});
      },
      [self](descquorum_atom) -> caf::result<capnp_frame> {
        auto rp = self->make_response_promise<capnp_frame>();
        self->request(self->state.opts.quorum, self->state.opts.request_timeout, status_atom_v)
            .then(
                [self, rp](const controller::quorum_status& s) mutable {
                  rp.deliver(encode(controller::describe_voter(s, self->state.driver->core())));
                },
                [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
        return rp;
      },
      [self](gauges_atom) {
        const auto& c = self->state.driver->core();
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
        self->state.driver->rebalance(now_ms());
        self->delayed_send(self, *self->state.opts.rebalance_interval, rebalance_atom_v);
      },
  };
}

} // namespace

controller_actor spawn_controller_actor(caf::actor_system& sys, controller_options options) {
  return sys.spawn(controller_behavior, std::move(options));
}

} // namespace capstan
