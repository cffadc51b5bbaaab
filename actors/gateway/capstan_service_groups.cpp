// The Cap'n Proto service's consumer group calls: translation to and from handlers/.

#include "actors/gateway/capstan_service.hpp"

#include <string>
#include <vector>

#include "actors/gateway/capnp_answers.hpp"
#include "actors/gateway/handlers/commit_offsets_handler.hpp"
#include "actors/gateway/handlers/delete_group_handler.hpp"
#include "actors/gateway/handlers/describe_group_handler.hpp"
#include "actors/gateway/handlers/fetch_offsets_handler.hpp"
#include "actors/gateway/handlers/find_coordinator_handler.hpp"
#include "actors/gateway/handlers/heartbeat_handler.hpp"
#include "actors/gateway/handlers/join_group_handler.hpp"
#include "actors/gateway/handlers/leave_group_handler.hpp"
#include "actors/gateway/handlers/list_groups_handler.hpp"
#include "actors/gateway/handlers/sync_group_handler.hpp"
#include "actors/gateway/request_validation.hpp"

namespace capstan {

namespace {

void fill_group_offsets(capnp::List<rpc::GroupOffset>::Builder out, const group_offsets& in) {
  for (size_t i = 0; i < in.size(); ++i) {
    auto b = out[static_cast<unsigned>(i)];
    b.setTopic(in[i].topic);
    b.setPartition(in[i].partition);
    b.setOffset(in[i].offset);
    b.setMetadata(in[i].metadata);
    b.setErrorCode(static_cast<uint8_t>(in[i].error));
    b.setLeaderEpoch(in[i].leader_epoch);
  }
}

} // namespace

kj::Promise<void> capstan_service::findCoordinator(FindCoordinatorContext call) {
  std::string group = call.getParams().getGroup();
  call.releaseParams();
  call.getResults().setNodeId(-1);
  return handle_find_coordinator(session_, group)
      .then([call](answer<coordinator_address>&& a) mutable {
        auto results = call.getResults();
        if (!a.ok()) return set_error(results, a.err);
        results.setNodeId(a.value.node);
        results.setHost(a.value.host);
        results.setPort(a.value.port);
      });
}

kj::Promise<void> capstan_service::commitOffsets(CommitOffsetsContext call) {
  static constexpr const char* method = "commitOffsets";
  auto params = call.getParams();
  if (auto s = validate_list_length(params.getOffsets().size(), "offsets"); !s) {
    count_unread(*session_.ctx, method, s.err());
    set_error(call.getResults(), s.err());
    return kj::READY_NOW;
  }
  std::string group = params.getGroup();
  group_offsets entries;
  for (auto o : params.getOffsets())
    entries.push_back(group_offset{o.getTopic(), o.getPartition(), o.getOffset(), o.getMetadata(),
                                   errc::none, o.getLeaderEpoch()});
  group_member_ref member{params.getMemberId(), params.getGroupInstanceId(), params.getGeneration()};
  call.releaseParams();
  return handle_commit_offsets(session_, std::move(group), std::move(member), std::move(entries))
      .then([call](answer<group_offsets>&& a) mutable {
        auto results = call.getResults(results_size_hint);
        if (!a.ok()) return set_error(results, a.err);
        fill_group_offsets(results.initResults(static_cast<unsigned>(a.value.size())), a.value);
      });
}

kj::Promise<void> capstan_service::fetchOffsets(FetchOffsetsContext call) {
  static constexpr const char* method = "fetchOffsets";
  auto params = call.getParams();
  if (auto s = validate_list_length(params.getPartitions().size(), "partitions"); !s) {
    count_unread(*session_.ctx, method, s.err());
    set_error(call.getResults(), s.err());
    return kj::READY_NOW;
  }
  std::string group = params.getGroup();
  group_offsets entries;
  for (auto tp : params.getPartitions())
    entries.push_back(group_offset{tp.getTopic(), tp.getPartition(), -1, {}, errc::none});
  call.releaseParams();
  return handle_fetch_offsets(session_, std::move(group), std::move(entries))
      .then([call](answer<group_offsets>&& a) mutable {
        auto results = call.getResults(results_size_hint);
        if (!a.ok()) return set_error(results, a.err);
        fill_group_offsets(results.initOffsets(static_cast<unsigned>(a.value.size())), a.value);
      });
}

kj::Promise<void> capstan_service::joinGroup(JoinGroupContext call) {
  static constexpr const char* method = "joinGroup";
  auto params = call.getParams();
  std::string group = params.getGroup();
  join_group_request req;
  req.member_id = params.getMemberId();
  req.group_instance_id = params.getGroupInstanceId();
  req.client_id = params.getClientId();
  req.session_timeout_ms = params.getSessionTimeoutMs();
  req.rebalance_timeout_ms = params.getRebalanceTimeoutMs();
  req.protocol_type = params.getProtocolType();
  if (auto s = validate_list_length(params.getProtocols().size(), "protocols"); !s) {
    count_unread(*session_.ctx, method, s.err());
    auto results = call.getResults(results_size_hint);
    results.setMemberId(req.member_id);
    set_error(results, s.err());
    return kj::READY_NOW;
  }
  for (auto p : params.getProtocols()) {
    auto metadata = p.getMetadata();
    req.protocols.push_back(group_protocol{p.getName(), bytes(metadata.begin(), metadata.end())});
  }
  call.releaseParams();
  return handle_join_group(session_, std::move(group), std::move(req))
      .then([call](answer<join_group_response>&& a) mutable {
        auto results = call.getResults(results_size_hint);
        const auto& r = a.value;
        results.setMemberId(r.member_id);
        if (!a.ok()) return set_error(results, a.err);
        results.setGeneration(r.generation);
        results.setProtocolName(r.protocol_name);
        results.setLeader(r.leader);
        auto members = results.initMembers(static_cast<unsigned>(r.members.size()));
        for (unsigned i = 0; i < members.size(); ++i) {
          const auto& m = r.members[i];
          members[i].setMemberId(m.member_id);
          members[i].setGroupInstanceId(m.group_instance_id);
          members[i].setMetadata(capnp::Data::Reader(m.metadata.data(), m.metadata.size()));
        }
      });
}

kj::Promise<void> capstan_service::syncGroup(SyncGroupContext call) {
  static constexpr const char* method = "syncGroup";
  auto params = call.getParams();
  std::string group = params.getGroup();
  sync_group_request req;
  req.member_id = params.getMemberId();
  req.group_instance_id = params.getGroupInstanceId();
  req.generation = params.getGeneration();
  if (auto s = validate_list_length(params.getAssignments().size(), "assignments"); !s) {
    count_unread(*session_.ctx, method, s.err());
    set_error(call.getResults(results_size_hint), s.err());
    return kj::READY_NOW;
  }
  for (auto a : params.getAssignments()) {
    auto data = a.getAssignment();
    req.assignments.push_back(member_assignment{a.getMemberId(), bytes(data.begin(), data.end())});
  }
  call.releaseParams();
  return handle_sync_group(session_, std::move(group), std::move(req))
      .then([call](answer<sync_group_response>&& a) mutable {
        auto results = call.getResults(results_size_hint);
        if (!a.ok()) return set_error(results, a.err);
        results.setAssignment(
            capnp::Data::Reader(a.value.assignment.data(), a.value.assignment.size()));
      });
}

kj::Promise<void> capstan_service::heartbeat(HeartbeatContext call) {
  auto params = call.getParams();
  std::string group = params.getGroup();
  group_member_ref member{params.getMemberId(), params.getGroupInstanceId(), params.getGeneration()};
  call.releaseParams();
  return handle_heartbeat(session_, std::move(group), std::move(member))
      .then([call](answer<bool>&& a) mutable {
        if (!a.ok()) set_error(call.getResults(), a.err);
      });
}

kj::Promise<void> capstan_service::leaveGroup(LeaveGroupContext call) {
  auto params = call.getParams();
  std::string group = params.getGroup();
  group_member_ref member{params.getMemberId(), params.getGroupInstanceId(), -1};
  call.releaseParams();
  return handle_leave_group(session_, std::move(group), std::move(member))
      .then([call](answer<bool>&& a) mutable {
        if (!a.ok()) set_error(call.getResults(), a.err);
      });
}

kj::Promise<void> capstan_service::describeGroup(DescribeGroupContext call) {
  std::string group = call.getParams().getGroup();
  call.releaseParams();
  return handle_describe_group(session_, std::move(group))
      .then([call](answer<group_summary>&& a) mutable {
        auto results = call.getResults(results_size_hint);
        if (!a.ok()) return set_error(results, a.err);
        const auto& r = a.value;
        results.setState(r.state);
        results.setProtocolType(r.protocol_type);
        results.setProtocolName(r.protocol_name);
        results.setGeneration(r.generation);
        results.setLeader(r.leader);
        auto members = results.initMembers(static_cast<unsigned>(r.members.size()));
        for (unsigned i = 0; i < members.size(); ++i) {
          const auto& m = r.members[i];
          members[i].setMemberId(m.member_id);
          members[i].setGroupInstanceId(m.group_instance_id);
          members[i].setClientId(m.client_id);
          members[i].setAssignment(capnp::Data::Reader(m.assignment.data(), m.assignment.size()));
        }
      });
}

kj::Promise<void> capstan_service::listGroups(ListGroupsContext call) {
  return handle_list_groups(session_).then([call](answer<std::vector<std::string>>&& a) mutable {
    auto results = call.getResults();
    if (!a.ok()) return set_error(results, a.err);
    auto list = results.initGroups(static_cast<unsigned>(a.value.size()));
    for (unsigned i = 0; i < a.value.size(); ++i) list.set(i, a.value[i]);
  });
}

kj::Promise<void> capstan_service::deleteGroup(DeleteGroupContext call) {
  std::string group = call.getParams().getGroup();
  call.releaseParams();
  return handle_delete_group(session_, std::move(group)).then([call](answer<bool>&& a) mutable {
    if (!a.ok()) set_error(call.getResults(), a.err);
  });
}

} // namespace capstan
