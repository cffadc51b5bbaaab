#include "tests/support/test_controller.hpp"

#include <algorithm>
#include <functional>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/countdown.hpp"
#include "runtime/actor/caf_error.hpp"

namespace capstan::test {

namespace {

constexpr auto request_timeout = std::chrono::seconds(30);
// A node that dies while its UpdateMetadata is on the way never answers (CAF drops what reaches
// a dead proxy); this bounds how long an election waits for it.
constexpr auto metadata_timeout = std::chrono::seconds(5);

struct controller_state {
  static inline const char* name = "test_controller";
  int32_t epoch = 1;
  struct node_entry {
    node_endpoint_actor endpoint;
    uint16_t cluster_port = 0;
    uint16_t client_port = 0;
  };
  std::map<int32_t, node_entry> nodes;
  std::map<topic_partition, partition_state_msg> partitions;
  std::vector<topic_config_msg> topics;
};

using self_ptr = test_controller_actor::stateful_pointer<controller_state>;

std::vector<node_id> ids(const std::vector<int32_t>& v) {
  std::vector<node_id> out;
  for (auto n : v) out.push_back(node_id{n});
  return out;
}

node_endpoint_msg endpoint_of(const controller_state& st, int32_t node) {
  auto it = st.nodes.find(node);
  if (it == st.nodes.end()) return node_endpoint_msg{node_id{node}, "127.0.0.1", 0, 0, ""};
  return node_endpoint_msg{node_id{node}, "127.0.0.1", it->second.client_port, it->second.cluster_port, ""};
}

update_metadata_msg metadata_of(const controller_state& st) {
  update_metadata_msg m;
  m.controller_id = 0;
  m.controller_epoch = st.epoch;
  m.cluster_id = "test-cluster";
  for (const auto& [n, e] : st.nodes) m.nodes.push_back(endpoint_of(st, n));
  m.topics = st.topics;
  for (const auto& [tp, p] : st.partitions) m.partitions.push_back(p);
  return m;
}

// UpdateMetadata of the whole state to every node; `done` once each answered or failed.
void broadcast_metadata(self_ptr self, std::function<void()> done) {
  auto& st = self->state;
  auto frame = encode(metadata_of(st));
  auto pending = std::make_shared<countdown>(countdown{st.nodes.size() + 1, std::move(done)});
  for (const auto& [n, e] : st.nodes)
    self->request(e.endpoint, metadata_timeout, metadata_atom_v, frame)
      .then([pending](const capnp_frame&) { pending->arrive(); },
            [pending](caf::error&) { pending->arrive(); });
  pending->arrive();
}

caf::result<std::vector<partition_error_msg>> elect(self_ptr self, const election& e) {
  auto& st = self->state;
  partition_state_msg p;
  p.tp = e.tp;
  p.leader = node_id{e.leader};
  p.epoch = leader_epoch{e.epoch};
  p.isr = ids(e.isr);
  p.replicas = ids(e.replicas);
  auto old = st.partitions.find(e.tp);
  // Bumped by every change, as a controller does; the same state sent again keeps it.
  if (old == st.partitions.end()) p.partition_epoch = 0;
  else if (old->second.leader == p.leader && old->second.epoch == p.epoch && old->second.isr == p.isr &&
           old->second.replicas == p.replicas)
    p.partition_epoch = old->second.partition_epoch;
  else p.partition_epoch = old->second.partition_epoch + 1;
  st.partitions[e.tp] = p;
  leader_and_isr_msg msg;
  msg.controller_id = 0;
  msg.controller_epoch = st.epoch;
  msg.partitions.push_back(p);
  if (e.leader >= 0) msg.leaders.push_back(endpoint_of(st, e.leader));
  auto frame = encode(msg);
  auto targets = e.send_to.empty() ? e.replicas : e.send_to;
  auto rp = self->make_response_promise<std::vector<partition_error_msg>>();
  auto errors = std::make_shared<std::vector<partition_error_msg>>();
  auto pending = std::make_shared<countdown>(countdown{targets.size() + 1, nullptr});
  pending->done = [self, rp, errors]() mutable {
    broadcast_metadata(self, [rp, errors]() mutable { rp.deliver(*errors); });
  };
  for (auto n : targets) {
    auto it = st.nodes.find(n);
    if (it == st.nodes.end()) {
      pending->arrive();
      continue;
    }
    self->request(it->second.endpoint, request_timeout, leaderisr_atom_v, frame)
      .then(
        [errors, pending](const capnp_frame& reply) {
          auto r = decode_control_response(reply, false);
          if (!r) errors->push_back(partition_error_msg{{}, r.code(), r.err().message});
          else if (r->error != errc::none) errors->push_back(partition_error_msg{{}, r->error, r->message});
          else errors->insert(errors->end(), r->partitions.begin(), r->partitions.end());
          pending->arrive();
        },
        [errors, pending, n](caf::error& err) {
          errors->push_back(partition_error_msg{{}, from_caf_error(err).code,
                                                "node " + std::to_string(n) + ": " + caf::to_string(err)});
          pending->arrive();
        });
  }
  pending->arrive();
  return rp;
}

capnp_frame alter(self_ptr self, const capnp_frame& frame) {
  auto& st = self->state;
  alter_partition_response_msg out;
  bool committed = false;
  auto req = decode_alter_partition(frame);
  if (!req) {
    out.error = req.code();
    out.message = req.err().message;
    return encode(out);
  }
  for (const auto& item : req->partitions) {
    alter_partition_result_item r;
    r.tp = item.tp;
    auto it = st.partitions.find(item.tp);
    if (it == st.partitions.end()) {
      r.error = errc::unknown_topic_or_partition;
    } else {
      auto& p = it->second;
      if (p.leader != req->broker || item.epoch != p.epoch) {
        r.error = errc::fenced_leader_epoch;
        r.message = "not the leader at epoch " + std::to_string(p.epoch.value());
      } else if (item.partition_epoch != p.partition_epoch) {
        r.error = errc::invalid_request;
        r.message = "partition epoch " + std::to_string(item.partition_epoch) + " is not " +
                    std::to_string(p.partition_epoch);
      } else if (std::find(item.new_isr.begin(), item.new_isr.end(), p.leader) == item.new_isr.end()) {
        r.error = errc::invalid_request;
        r.message = "an ISR without its leader";
      } else {
        p.isr = item.new_isr;
        ++p.partition_epoch;
        committed = true;
      }
      r.leader = p.leader;
      r.epoch = p.epoch;
      r.isr = p.isr;
      r.partition_epoch = p.partition_epoch;
    }
    out.partitions.push_back(std::move(r));
  }
  // The nodes learn the new ISR; the leader does not wait for them.
  if (committed) broadcast_metadata(self, [] {});
  return encode(out);
}

test_controller_actor::behavior_type controller_behavior(self_ptr self, int32_t epoch) {
  self->state.epoch = epoch;
  // A node whose endpoint went away (its process died) is no longer live: later UpdateMetadata
  // leave it out and nothing more is sent to it, until it is connected again.
  self->set_down_handler([self](const caf::down_msg& down) {
    auto& nodes = self->state.nodes;
    for (auto it = nodes.begin(); it != nodes.end(); ++it) {
      if (caf::actor_cast<caf::actor_addr>(it->second.endpoint) == down.source) {
        nodes.erase(it);
        return;
      }
    }
  });
  return {
    [self](connect_node_atom, int32_t node, const caf::actor& endpoint, uint16_t cluster_port,
           uint16_t client_port) {
      auto handle = caf::actor_cast<node_endpoint_actor>(endpoint);
      self->monitor(handle);
      self->state.nodes[node] = {handle, cluster_port, client_port};
      return true;
    },
    [self](topics_atom, std::vector<topic_config_msg>& topics) -> caf::result<bool> {
      self->state.topics = std::move(topics);
      auto rp = self->make_response_promise<bool>();
      broadcast_metadata(self, [rp]() mutable { rp.deliver(true); });
      return rp;
    },
    [self](elect_atom, const election& e) { return elect(self, e); },
    [self](stopat_atom, const topic_partition& tp, int32_t node) -> caf::result<bool> {
      auto& st = self->state;
      auto it = st.nodes.find(node);
      if (it == st.nodes.end()) return true;
      stop_replica_msg msg;
      msg.controller_id = 0;
      msg.controller_epoch = st.epoch;
      msg.partitions.push_back(stop_partition_msg{tp, {}, leader_epoch{-2}});
      auto rp = self->make_response_promise<bool>();
      self->request(it->second.endpoint, request_timeout, stopreplica_atom_v, encode(msg))
        .then([rp](const capnp_frame&) mutable { rp.deliver(true); },
              [rp](caf::error& e) mutable { rp.deliver(std::move(e)); });
      return rp;
    },
    [self](state_atom, const topic_partition& tp) -> caf::result<partition_state_msg> {
      auto it = self->state.partitions.find(tp);
      if (it == self->state.partitions.end())
        return to_caf_error(make_error(errc::unknown_topic_or_partition, "no such partition"));
      return it->second;
    },
    [self](alterisr_atom, const capnp_frame& frame) { return alter(self, frame); },
  };
}

} // namespace

test_controller_actor spawn_test_controller(caf::actor_system& sys, int32_t controller_epoch) {
  return sys.spawn(controller_behavior, controller_epoch);
}

} // namespace capstan::test
