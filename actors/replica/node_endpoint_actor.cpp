// The node endpoint and the peer directory: see node_endpoint_actor.hpp.
//
// Connecting goes through the middleman actor's connect request, which answers asynchronously
// (it runs the blocking connect on its own thread), so neither actor ever blocks a scheduler
// thread. A peer that goes away (DOWN) is forgotten and reconnected on the next request.

#include "actors/replica/node_endpoint_actor.hpp"

#include <map>
#include <optional>
#include <type_traits>

#include <caf/all.hpp>
#include <caf/io/middleman.hpp>
#include <caf/io/middleman_actor.hpp>
#include <spdlog/spdlog.h>

#include "actors/replica/fetch_session_actor.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/cluster/link_faults.hpp"
#include "schema/controller.capnp.h"
#include "schema/raft.capnp.h"
#include "schema/replication.capnp.h"

namespace capstan {

namespace {

caf::error refusal(errc code, std::string text) {
  return to_caf_error(make_error(code, std::move(text)));
}

// ---- node endpoint ----

struct endpoint_state {
  static inline const char* name = "capstan.node_endpoint";
  node_endpoint_options opts;
};

using endpoint_ptr = node_endpoint_actor::stateful_pointer<endpoint_state>;

// The node a frame of `Schema` names as its sender (its first field); -1 when unreadable.
template <class Schema>
node_id sender_of(const capnp_frame& frame) {
  auto id = frame.try_read<Schema>([](typename Schema::Reader m) {
    if constexpr (std::is_same_v<Schema, schema::RaftMessage>)
      return m.getFrom();
    else if constexpr (std::is_same_v<Schema, schema::LeaderAndIsr> ||
                       std::is_same_v<Schema, schema::UpdateMetadata> ||
                       std::is_same_v<Schema, schema::StopReplica>)
      return m.getControllerId();
    else
      return m.getNodeId();
  });
  return node_id{id ? *id : -1};
}

// True iff the fault switch drops what `from` sends this node (link_faults.hpp). Such a request
// is left unanswered, as a lost message would be: the sender's own timeout ends it.
bool cut_off(endpoint_ptr self, node_id from) {
  return link_faults::instance().dropped(from, self->state.opts.node);
}

template <class Atom>
caf::result<capnp_frame> to_control(endpoint_ptr self, Atom atom, const capnp_frame& frame) {
  auto& st = self->state;
  if (!st.opts.control)
    return refusal(errc::not_leader_or_follower, "node " + std::to_string(st.opts.node.value()) +
                                                     " takes no controller requests");
  using schema_type =
      std::conditional_t<std::is_same_v<Atom, leaderisr_atom>, schema::LeaderAndIsr,
                         std::conditional_t<std::is_same_v<Atom, metadata_atom>,
                                            schema::UpdateMetadata, schema::StopReplica>>;
  if (cut_off(self, sender_of<schema_type>(frame)))
    return self->make_response_promise<capnp_frame>();
  return self->delegate(st.opts.control, atom, frame);
}

template <class Atom>
caf::result<capnp_frame> to_controller(endpoint_ptr self, Atom atom, const capnp_frame& frame) {
  auto& st = self->state;
  if (!st.opts.controller)
    return refusal(errc::not_controller,
                   "node " + std::to_string(st.opts.node.value()) + " runs no controller");
  node_id from{-1};
  if constexpr (std::is_same_v<Atom, brokerreg_atom>)
    from = sender_of<schema::BrokerRegistration>(frame);
  else if constexpr (std::is_same_v<Atom, brokerhb_atom>)
    from = sender_of<schema::BrokerHeartbeat>(frame);
  else if constexpr (std::is_same_v<Atom, allocpid_atom>)
    from = sender_of<schema::AllocateProducerIds>(frame);
  else if constexpr (std::is_same_v<Atom, mktopic_atom>)
    from = sender_of<schema::CreateTopic>(frame);
  else if constexpr (std::is_same_v<Atom, rmtopic_atom>)
    from = sender_of<schema::DeleteTopic>(frame);
  else if constexpr (std::is_same_v<Atom, altercfg_atom>)
    from = sender_of<schema::AlterConfigs>(frame);
  else if constexpr (std::is_same_v<Atom, mkparts_atom>)
    from = sender_of<schema::CreatePartitions>(frame);
  else if constexpr (std::is_same_v<Atom, reassign_atom>)
    from = sender_of<schema::AlterPartitionReassignments>(frame);
  else if constexpr (std::is_same_v<Atom, unregister_atom>)
    from = sender_of<schema::UnregisterBroker>(frame);
  else if constexpr (std::is_same_v<Atom, add_voter_atom>)
    from = sender_of<schema::AddVoter>(frame);
  else if constexpr (std::is_same_v<Atom, remove_voter_atom>)
    from = sender_of<schema::RemoveVoter>(frame);
  else
    from = sender_of<schema::ElectLeaders>(frame);
  if (cut_off(self, from)) return self->make_response_promise<capnp_frame>();
  return self->delegate(st.opts.controller, atom, frame);
}

node_endpoint_actor::behavior_type endpoint_behavior(endpoint_ptr self,
                                                     node_endpoint_options opts) {
  self->state.opts = std::move(opts);
  // A session that ends (its fetcher went away, or it failed) does not take the endpoint along.
  self->set_exit_handler([](const caf::exit_msg&) {});
  return {
      [self](open_atom, int32_t follower, const caf::actor& fetcher) -> caf::result<caf::actor> {
        auto& st = self->state;
        if (follower < 0 || !fetcher)
          return refusal(errc::invalid_request,
                         "a fetch session needs a follower id and its fetcher");
        if (cut_off(self, node_id{follower})) return self->make_response_promise<caf::actor>();
        fetch_session_options so;
        so.node = st.opts.node;
        so.follower = node_id{follower};
        so.fetcher = fetcher;
        so.routes = st.opts.routes;
        so.max_wait_cap_ms = st.opts.max_fetch_wait_ms;
        auto session = spawn_fetch_session(self->system(), std::move(so));
        // Linked: a stopping node takes its sessions down with its endpoint.
        self->link_to(session);
        spdlog::info("node {}: opened a fetch session for a fetcher of node {}",
                     st.opts.node.value(), follower);
        return caf::actor_cast<caf::actor>(session);
      },
      [self](leaderisr_atom a, const capnp_frame& f) { return to_control(self, a, f); },
      [self](metadata_atom a, const capnp_frame& f) { return to_control(self, a, f); },
      [self](stopreplica_atom a, const capnp_frame& f) { return to_control(self, a, f); },
      [self](raft_atom a, const capnp_frame& f) {
        if (cut_off(self, sender_of<schema::RaftMessage>(f))) return;
        if (self->state.opts.raft) self->send(self->state.opts.raft, a, f);
      },
      [self](brokerreg_atom a, const capnp_frame& f) { return to_controller(self, a, f); },
      [self](brokerhb_atom a, const capnp_frame& f) { return to_controller(self, a, f); },
      [self](mktopic_atom a, const capnp_frame& f) { return to_controller(self, a, f); },
      [self](rmtopic_atom a, const capnp_frame& f) { return to_controller(self, a, f); },
      [self](altercfg_atom a, const capnp_frame& f) { return to_controller(self, a, f); },
      [self](allocpid_atom a, const capnp_frame& f) { return to_controller(self, a, f); },
      [self](mkparts_atom a, const capnp_frame& f) { return to_controller(self, a, f); },
      [self](elect_atom a, const capnp_frame& f) { return to_controller(self, a, f); },
      [self](reassign_atom a, const capnp_frame& f) { return to_controller(self, a, f); },
      [self](unregister_atom a, const capnp_frame& f) { return to_controller(self, a, f); },
      [self](add_voter_atom a, const capnp_frame& f) { return to_controller(self, a, f); },
      [self](remove_voter_atom a, const capnp_frame& f) { return to_controller(self, a, f); },
      [self](descquorum_atom a, int32_t from) -> caf::result<capnp_frame> {
        auto& st = self->state;
        if (cut_off(self, node_id{from})) return self->make_response_promise<capnp_frame>();
        if (!st.opts.controller)
          return refusal(errc::not_controller,
                         "node " + std::to_string(st.opts.node.value()) + " runs no controller");
        return self->delegate(st.opts.controller, a);
      },
      [self](locate_atom a, int32_t from, int32_t id) -> caf::result<std::string, uint16_t> {
        auto& st = self->state;
        if (cut_off(self, node_id{from}))
          return self->make_response_promise<std::string, uint16_t>();
        if (!st.opts.directory)
          return refusal(errc::network_exception,
                         "node " + std::to_string(st.opts.node.value()) + " locates no nodes");
        return self->delegate(st.opts.directory, a, node_id{id});
      },
  };
}

// ---- peer directory ----

using endpoint_callback = std::function<void(caf::expected<node_endpoint_actor>)>;

struct peer_entry {
  peer_address address;
  node_endpoint_actor endpoint;
  bool connecting = false;
  std::vector<endpoint_callback> waiting;
};

// A node being located: who waits for its endpoint, and how many peers have yet to answer this
// round.
struct locate_round {
  uint64_t round = 0;
  size_t out = 0;
  std::vector<endpoint_callback> waiting;
};

struct directory_state {
  static inline const char* name = "capstan.peer_directory";
  peer_directory_options opts;
  std::map<node_id, peer_entry> peers;
  std::map<node_id, locate_round> locating;
  uint64_t next_round = 0;
};

using directory_ptr = peer_directory_actor::stateful_pointer<directory_state>;

constexpr auto connect_timeout = std::chrono::seconds(10);

void finish_connect(directory_ptr self, node_id node, caf::expected<node_endpoint_actor> result) {
  auto it = self->state.peers.find(node);
  if (it == self->state.peers.end()) return;
  auto& e = it->second;
  e.connecting = false;
  if (result) {
    e.endpoint = *result;
    self->monitor(e.endpoint);
    spdlog::info("node {}: connected to node {} at {}:{}", self->state.opts.node.value(),
                 node.value(), e.address.host, e.address.port);
  } else {
    spdlog::warn("node {}: {}", self->state.opts.node.value(), caf::to_string(result.error()));
  }
  auto waiting = std::move(e.waiting);
  e.waiting.clear();
  for (auto& f : waiting) f(result);
}

void connect(directory_ptr self, node_id node) {
  auto& e = self->state.peers.at(node);
  e.connecting = true;
  auto mm = self->system().middleman().actor_handle();
  const auto addr = e.address;
  const auto where = addr.host + ":" + std::to_string(addr.port);
  self->request(mm, connect_timeout, caf::connect_atom::value, addr.host, addr.port)
      .then(
          [self, node, where](const caf::node_id&, caf::strong_actor_ptr& ptr,
                              const std::set<std::string>&) {
            if (!ptr) {
              finish_connect(
                  self, node,
                  refusal(errc::network_exception, where + " publishes no node endpoint"));
              return;
            }
            finish_connect(self, node, caf::actor_cast<node_endpoint_actor>(ptr));
          },
          [self, node, where](caf::error& err) {
            // Refused: nothing listens there, the node's process is gone (a cut link times out
            // instead). The active controller fences such a node at once.
            const auto code = err == caf::sec::cannot_connect_to_node ? errc::broker_not_available
                                                                      : errc::network_exception;
            finish_connect(self, node,
                           refusal(code,
                                   "cannot reach node " + std::to_string(node.value()) + " at " +
                                       where + ": " + caf::to_string(err)));
          });
}

void locate(directory_ptr self, node_id node, endpoint_callback f);

// Calls `f` with the endpoint of `node` once it is known (at once if connected).
void with_endpoint(directory_ptr self, node_id node, endpoint_callback f) {
  auto& st = self->state;
  if (node == st.opts.node && st.opts.self_endpoint) {
    f(st.opts.self_endpoint);
    return;
  }
  auto it = st.peers.find(node);
  if (it == st.peers.end()) {
    locate(self, node, std::move(f));
    return;
  }
  auto& e = it->second;
  if (e.endpoint) {
    f(e.endpoint);
    return;
  }
  e.waiting.push_back(std::move(f));
  if (!e.connecting) connect(self, node);
}

// One peer's answer to a locate round: the first address named settles it; when every peer
// has answered without one, the waiting lookups fail.
void located(directory_ptr self, node_id node, uint64_t round, std::optional<peer_address> at) {
  auto& st = self->state;
  auto it = st.locating.find(node);
  if (it == st.locating.end() || it->second.round != round) return;
  if (at && at->port != 0) {
    auto waiting = std::move(it->second.waiting);
    st.locating.erase(it);
    // peers_atom may have told the directory meanwhile; what it said wins.
    if (st.peers.count(node) == 0) {
      spdlog::info("node {}: located node {} at {}:{}", st.opts.node.value(), node.value(),
                   at->host, at->port);
      st.peers[node].address = std::move(*at);
    }
    for (auto& f : waiting) with_endpoint(self, node, std::move(f));
    return;
  }
  if (--it->second.out > 0) return;
  auto waiting = std::move(it->second.waiting);
  st.locating.erase(it);
  for (auto& f : waiting)
    f(refusal(errc::network_exception, "no address known for node " +
                                           std::to_string(node.value()) +
                                           ", and no node asked knows one"));
}

// Asks every peer whose address this directory knows where `node` listens. A voter that
// `cluster add-voter` added is in no --controller-quorum: the voters know it from their voter
// set, a new node or a broker knows only the bootstrap voters, and learns it this way.
void locate(directory_ptr self, node_id node, endpoint_callback f) {
  auto& st = self->state;
  auto& l = st.locating[node];
  l.waiting.push_back(std::move(f));
  if (l.waiting.size() > 1) return;
  l.round = ++st.next_round;
  std::vector<node_id> known;
  for (const auto& [id, e] : st.peers)
    if (id != st.opts.node) known.push_back(id);
  l.out = known.size() + 1;
  const auto round = l.round;
  const auto self_id = st.opts.node.value();
  for (const auto peer : known)
    with_endpoint(self, peer, [self, node, round, self_id](caf::expected<node_endpoint_actor> ep) {
      if (!ep) return located(self, node, round, std::nullopt);
      self->request(*ep, connect_timeout, locate_atom_v, self_id, node.value())
          .then(
              [self, node, round](std::string& host, uint16_t port) {
                located(self, node, round, peer_address{node, std::move(host), port});
              },
              [self, node, round](caf::error&) { located(self, node, round, std::nullopt); });
    });
  // The round's own share: with no peer known, this alone ends it.
  located(self, node, round, std::nullopt);
}

peer_directory_actor::behavior_type directory_behavior(directory_ptr self,
                                                       peer_directory_options opts) {
  auto& st = self->state;
  st.opts = std::move(opts);
  for (auto& p : st.opts.peers) st.peers[p.node].address = p;
  self->set_down_handler([self](const caf::down_msg& msg) {
    for (auto& [node, e] : self->state.peers) {
      if (e.endpoint && e.endpoint.address() == msg.source) {
        spdlog::warn("node {}: lost node {}: {}", self->state.opts.node.value(), node.value(),
                     caf::to_string(msg.reason));
        e.endpoint = nullptr;
      }
    }
  });
  return {
      [self](session_atom, node_id leader, caf::actor fetcher) -> caf::result<fetch_session_actor> {
        auto rp = self->make_response_promise<fetch_session_actor>();
        const auto follower = self->state.opts.node.value();
        with_endpoint(self, leader,
                      [self, rp, follower, fetcher](caf::expected<node_endpoint_actor> e) mutable {
                        if (!e) {
                          rp.deliver(e.error());
                          return;
                        }
                        self->request(*e, connect_timeout, open_atom_v, follower, fetcher)
                            .then(
                                [rp](caf::actor& session) mutable {
                                  rp.deliver(caf::actor_cast<fetch_session_actor>(session));
                                },
                                [rp](caf::error& err) mutable { rp.deliver(std::move(err)); });
                      });
        return rp;
      },
      [self](endpoint_atom, node_id node) -> caf::result<node_endpoint_actor> {
        auto rp = self->make_response_promise<node_endpoint_actor>();
        with_endpoint(self, node, [rp](caf::expected<node_endpoint_actor> e) mutable {
          if (e)
            rp.deliver(*e);
          else
            rp.deliver(e.error());
        });
        return rp;
      },
      [self](peers_atom, std::vector<peer_address>& peers) {
        auto& st = self->state;
        for (auto& p : peers) {
          auto& e = st.peers[p.node];
          // A peer at a new address is a new connection.
          if (e.address.host != p.host || e.address.port != p.port) e.endpoint = nullptr;
          e.address = std::move(p);
        }
      },
      [self](locate_atom, node_id node) -> caf::result<std::string, uint16_t> {
        auto& st = self->state;
        auto it = st.peers.find(node);
        if (it == st.peers.end() || it->second.address.port == 0)
          return refusal(errc::network_exception, "node " + std::to_string(st.opts.node.value()) +
                                                      " knows no address of node " +
                                                      std::to_string(node.value()));
        return {it->second.address.host, it->second.address.port};
      },
  };
}

} // namespace

node_endpoint_actor spawn_node_endpoint(caf::actor_system& sys, node_endpoint_options options) {
  return sys.spawn(endpoint_behavior, std::move(options));
}

peer_directory_actor spawn_peer_directory(caf::actor_system& sys, peer_directory_options options) {
  return sys.spawn(directory_behavior, std::move(options));
}

} // namespace capstan
