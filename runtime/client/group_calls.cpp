// The consumer group calls, each at the group's coordinator (at_coordinator.hpp): offsets,
// membership (join, sync, heartbeat, leave), describe and delete; list_groups asks every node.

#include "runtime/client/rpc_cluster_client.hpp"

#include <algorithm>

#include "runtime/client/at_coordinator.hpp"

namespace capstan::client {

result<std::vector<committed_offset>>
rpc_cluster_client::commit_offsets(const std::string& group,
                                   const std::vector<committed_offset>& offsets,
                                   const group_member_ref& member) {
  using answer = std::vector<committed_offset>;
  return run_sync<answer>([this, group, offsets, member] {
    return at_coordinator<answer>(
        group,
        [group, offsets, member](capnp_cap cap) {
          auto req = cap.commitOffsetsRequest();
          req.setGroup(group);
          req.setMemberId(member.member_id);
          req.setGroupInstanceId(member.group_instance_id);
          req.setGeneration(member.generation);
          auto list = req.initOffsets(static_cast<unsigned>(offsets.size()));
          for (unsigned i = 0; i < offsets.size(); ++i) {
            list[i].setTopic(offsets[i].topic);
            list[i].setPartition(offsets[i].partition);
            list[i].setOffset(offsets[i].offset);
            list[i].setMetadata(offsets[i].metadata);
            list[i].setLeaderEpoch(offsets[i].leader_epoch);
          }
          return req.send().then([](auto response) -> result<answer> {
            if (response.getErrorCode() != 0)
              return from_code(response.getErrorCode(), response.getErrorMessage());
            return to_offsets(response.getResults());
          });
        },
        steady::now() + std::chrono::milliseconds(config_.request_timeout_ms));
  });
}

result<std::vector<committed_offset>>
rpc_cluster_client::fetch_offsets(const std::string& group,
                                  const std::vector<std::pair<std::string, int32_t>>& partitions) {
  using answer = std::vector<committed_offset>;
  return run_sync<answer>([this, group, partitions] {
    return at_coordinator<answer>(
        group,
        [group, partitions](capnp_cap cap) {
          auto req = cap.fetchOffsetsRequest();
          req.setGroup(group);
          auto list = req.initPartitions(static_cast<unsigned>(partitions.size()));
          for (unsigned i = 0; i < partitions.size(); ++i) {
            list[i].setTopic(partitions[i].first);
            list[i].setPartition(partitions[i].second);
          }
          return req.send().then([](auto response) -> result<answer> {
            if (response.getErrorCode() != 0)
              return from_code(response.getErrorCode(), response.getErrorMessage());
            return to_offsets(response.getOffsets());
          });
        },
        steady::now() + std::chrono::milliseconds(config_.request_timeout_ms));
  });
}

result<join_group_response> rpc_cluster_client::join_group(const std::string& group,
                                                           const join_group_request& join) {
  const int64_t wait_ms = config_.request_timeout_ms + std::max(join.rebalance_timeout_ms, 0);
  return run_sync<join_group_response>([this, group, join, wait_ms] {
    return at_coordinator<join_group_response>(
        group,
        [group, join](capnp_cap cap) {
          auto req = cap.joinGroupRequest();
          req.setGroup(group);
          req.setMemberId(join.member_id);
          req.setGroupInstanceId(join.group_instance_id);
          req.setClientId(join.client_id);
          req.setSessionTimeoutMs(join.session_timeout_ms);
          req.setRebalanceTimeoutMs(join.rebalance_timeout_ms);
          req.setProtocolType(join.protocol_type);
          auto protocols = req.initProtocols(static_cast<unsigned>(join.protocols.size()));
          for (unsigned i = 0; i < protocols.size(); ++i) {
            protocols[i].setName(join.protocols[i].name);
            protocols[i].setMetadata(capnp::Data::Reader(join.protocols[i].metadata.data(),
                                                         join.protocols[i].metadata.size()));
          }
          return req.send().then([](auto response) -> result<join_group_response> {
            join_group_response r;
            r.error = errc_from_code(response.getErrorCode());
            r.message = response.getErrorMessage();
            if (coordinator_retriable(r.error)) return make_error(r.error, r.message);
            r.member_id = response.getMemberId();
            r.generation = response.getGeneration();
            r.protocol_name = response.getProtocolName();
            r.leader = response.getLeader();
            for (auto m : response.getMembers()) {
              auto metadata = m.getMetadata();
              r.members.push_back(group_member_metadata{m.getMemberId(), m.getGroupInstanceId(),
                                                        bytes(metadata.begin(), metadata.end())});
            }
            return r;
          });
        },
        steady::now() + std::chrono::milliseconds(wait_ms), wait_ms);
  });
}

result<sync_group_response> rpc_cluster_client::sync_group(const std::string& group,
                                                           const sync_group_request& sync) {
  // A follower's answer waits for the leader's sync.
  const int64_t wait_ms = 2 * config_.request_timeout_ms;
  return run_sync<sync_group_response>([this, group, sync, wait_ms] {
    return at_coordinator<sync_group_response>(
        group,
        [group, sync](capnp_cap cap) {
          auto req = cap.syncGroupRequest();
          req.setGroup(group);
          req.setMemberId(sync.member_id);
          req.setGroupInstanceId(sync.group_instance_id);
          req.setGeneration(sync.generation);
          auto list = req.initAssignments(static_cast<unsigned>(sync.assignments.size()));
          for (unsigned i = 0; i < list.size(); ++i) {
            list[i].setMemberId(sync.assignments[i].member_id);
            list[i].setAssignment(capnp::Data::Reader(sync.assignments[i].assignment.data(),
                                                      sync.assignments[i].assignment.size()));
          }
          return req.send().then([](auto response) -> result<sync_group_response> {
            sync_group_response r;
            r.error = errc_from_code(response.getErrorCode());
            r.message = response.getErrorMessage();
            if (coordinator_retriable(r.error)) return make_error(r.error, r.message);
            auto data = response.getAssignment();
            r.assignment.assign(data.begin(), data.end());
            return r;
          });
        },
        steady::now() + std::chrono::milliseconds(wait_ms), wait_ms);
  });
}

status rpc_cluster_client::heartbeat(const std::string& group, const group_member_ref& member) {
  return member_call(group, member, false);
}

status rpc_cluster_client::leave_group(const std::string& group, const group_member_ref& member) {
  return member_call(group, member, true);
}

status rpc_cluster_client::delete_group(const std::string& group) {
  auto r = run_sync<bool>([this, group] {
    return at_coordinator<bool>(
        group,
        [group](capnp_cap cap) -> kj::Promise<result<bool>> {
          auto req = cap.deleteGroupRequest();
          req.setGroup(group);
          return req.send().then([](auto response) -> result<bool> {
            if (response.getErrorCode() != 0)
              return from_code(response.getErrorCode(), response.getErrorMessage());
            return true;
          });
        },
        steady::now() + std::chrono::milliseconds(config_.request_timeout_ms));
  });
  if (!r) return r.err();
  return {};
}

result<group_summary> rpc_cluster_client::describe_group(const std::string& group) {
  return run_sync<group_summary>([this, group] {
    return at_coordinator<group_summary>(
        group,
        [group](capnp_cap cap) {
          auto req = cap.describeGroupRequest();
          req.setGroup(group);
          return req.send().then([](auto response) -> result<group_summary> {
            if (response.getErrorCode() != 0)
              return from_code(response.getErrorCode(), response.getErrorMessage());
            group_summary g;
            g.state = response.getState();
            g.protocol_type = response.getProtocolType();
            g.protocol_name = response.getProtocolName();
            g.generation = response.getGeneration();
            g.leader = response.getLeader();
            for (auto m : response.getMembers()) {
              auto assignment = m.getAssignment();
              g.members.push_back(
                  group_member_summary{m.getMemberId(), m.getGroupInstanceId(), m.getClientId(),
                                       bytes(assignment.begin(), assignment.end())});
            }
            return g;
          });
        },
        steady::now() + std::chrono::milliseconds(config_.request_timeout_ms));
  });
}

result<std::vector<std::string>> rpc_cluster_client::list_groups() {
  using answer = std::vector<std::string>;
  return run_sync<answer>([this] {
    const auto deadline = steady::now() + std::chrono::milliseconds(config_.request_timeout_ms);
    return refresh_metadata({}).then(
        [this, deadline](result<cluster_metadata>&& md) -> kj::Promise<result<answer>> {
          if (!md) return result<answer>(md.err());
          std::vector<std::string> nodes;
          for (const auto& b : md->brokers) nodes.push_back(b.host + ":" + std::to_string(b.port));
          return list_groups_at(std::move(nodes), 0, {}, deadline);
        });
  });
}

// A heartbeat (`leave` false) or a LeaveGroup at the coordinator.
status rpc_cluster_client::member_call(const std::string& group, const group_member_ref& member,
                                       bool leave) {
  auto r = run_sync<bool>([this, group, member, leave] {
    return at_coordinator<bool>(
        group,
        [group, member, leave](capnp_cap cap) -> kj::Promise<result<bool>> {
          auto answer = [](auto response) -> result<bool> {
            if (response.getErrorCode() != 0)
              return from_code(response.getErrorCode(), response.getErrorMessage());
            return true;
          };
          if (leave) {
            auto req = cap.leaveGroupRequest();
            req.setGroup(group);
            req.setMemberId(member.member_id);
            req.setGroupInstanceId(member.group_instance_id);
            return req.send().then(answer);
          }
          auto req = cap.heartbeatRequest();
          req.setGroup(group);
          req.setMemberId(member.member_id);
          req.setGroupInstanceId(member.group_instance_id);
          req.setGeneration(member.generation);
          return req.send().then(answer);
        },
        steady::now() + std::chrono::milliseconds(config_.request_timeout_ms));
  });
  if (!r) return r.err();
  return {};
}

// Asks nodes[i..] for the groups they coordinate and merges the answers into `found`; a node
// still loading its groups (or not answering yet) is asked again, retry.backoff.ms apart, until
// `deadline`.
kj::Promise<result<std::vector<std::string>>>
rpc_cluster_client::list_groups_at(std::vector<std::string> nodes, size_t i,
                                   std::vector<std::string> found, steady::time_point deadline) {
  if (i >= nodes.size()) {
    std::sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end()), found.end());
    return result<std::vector<std::string>>(std::move(found));
  }
  const auto address = nodes[i];
  auto& conn = connections_->connection(address);
  auto attempt =
      with_timeout(conn.cap.listGroupsRequest().send().then(
                       [](auto response) -> result<std::vector<std::string>> {
                         if (response.getErrorCode() != 0)
                           return from_code(response.getErrorCode(), response.getErrorMessage());
                         std::vector<std::string> out;
                         for (auto g : response.getGroups()) out.emplace_back(g.cStr());
                         return out;
                       }))
          .catch_([](kj::Exception&& e) {
            return result<std::vector<std::string>>(from_exception(e));
          });
  return attempt.then([this, nodes = std::move(nodes), i, found = std::move(found), deadline,
                       address, id = conn.id](result<std::vector<std::string>>&& r) mutable
                      -> kj::Promise<result<std::vector<std::string>>> {
    if (r) {
      found.insert(found.end(), r->begin(), r->end());
      return list_groups_at(std::move(nodes), i + 1, std::move(found), deadline);
    }
    if (!coordinator_retriable(r.code())) return kj::mv(r);
    if (r.code() == errc::network_exception || r.code() == errc::request_timed_out)
      connections_->forget(address, id);
    const auto backoff = std::chrono::milliseconds(config_.retry_backoff_ms);
    if (steady::now() + backoff >= deadline) return kj::mv(r);
    return io_->provider->getTimer()
        .afterDelay(config_.retry_backoff_ms * kj::MILLISECONDS)
        .then([this, nodes = std::move(nodes), i, found = std::move(found), deadline]() mutable {
          return list_groups_at(std::move(nodes), i, std::move(found), deadline);
        });
  });
}

std::vector<committed_offset>
rpc_cluster_client::to_offsets(capnp::List<rpc::GroupOffset>::Reader list) {
  std::vector<committed_offset> out;
  for (auto o : list) {
    committed_offset c;
    c.topic = o.getTopic();
    c.partition = o.getPartition();
    c.offset = o.getOffset();
    c.metadata = o.getMetadata();
    c.error = errc_from_code(o.getErrorCode());
    c.leader_epoch = o.getLeaderEpoch();
    out.push_back(std::move(c));
  }
  return out;
}

} // namespace capstan::client
