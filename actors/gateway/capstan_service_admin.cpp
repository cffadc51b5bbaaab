// The Cap'n Proto service's cluster administration and fault injection: calls only the native
// API has, answered here rather than through a shared handler.

#include "actors/gateway/capstan_service.hpp"

#include <string>
#include <vector>

#include "actors/controller/voter_validation.hpp"
#include "actors/gateway/capnp_answers.hpp"
#include "actors/gateway/handlers/handler_support.hpp"
#include "actors/gateway/request_validation.hpp"

namespace capstan {

namespace {

void fill_description(rpc::Capstan::DescribeClusterResults::Builder results,
                      const cluster_description& d) {
  results.setActiveControllerId(d.active_controller);
  auto members = results.initMembers(static_cast<unsigned>(d.members.size()));
  for (size_t i = 0; i < d.members.size(); ++i) {
    const auto& m = d.members[i];
    auto b = members[static_cast<unsigned>(i)];
    b.setNodeId(m.node);
    b.setReachable(m.reachable);
    b.setFailure(m.failure);
    b.setRole(m.role);
    b.setTerm(m.term);
    b.setCommitIndex(m.commit_index);
    b.setLeaderId(m.leader);
  }
  results.setNodesKnown(d.nodes_known);
  auto nodes = results.initNodes(static_cast<unsigned>(d.nodes.size()));
  for (size_t i = 0; i < d.nodes.size(); ++i) {
    const auto& n = d.nodes[i];
    auto b = nodes[static_cast<unsigned>(i)];
    b.setNodeId(n.node);
    b.setFenced(n.fenced);
    b.setBrokerEpoch(n.broker_epoch);
    b.setIncarnationId(capnp::Data::Reader(n.incarnation.data(), n.incarnation.size()));
  }
  auto voters = results.initVoters(static_cast<unsigned>(d.voters.size()));
  for (unsigned i = 0; i < voters.size(); ++i) voters.set(i, d.voters[i]);
}

// Per-partition outcomes (of electLeaders or reassignPartitions) into the call's results.
template <class Context>
void answer_outcomes(Context& call, const answer<election_outcomes>& a) {
  auto results = call.getResults(results_size_hint);
  if (!a.ok()) return set_error(results, a.err);
  auto out = results.initResults(static_cast<unsigned>(a.value.size()));
  for (unsigned i = 0; i < out.size(); ++i) {
    const auto& x = a.value[i];
    out[i].setTopic(x.topic);
    out[i].setPartition(x.partition);
    out[i].setErrorCode(static_cast<uint8_t>(x.error));
    if (!x.message.empty()) out[i].setErrorMessage(x.message);
  }
}

} // namespace

kj::Promise<void> capstan_service::describeCluster(DescribeClusterContext call) {
  static constexpr const char* method = "describeCluster";
  const auto& ctx = *session_.ctx;
  ctx.metrics.count_request(method);
  return session_.answered_later(
      ask<cluster_description_ptr>(ctx, ctx.targets.controller, ctx.admin_timeout,
                                   descquorum_atom_v)
          .then([call, c = session_.ctx](answer<cluster_description_ptr>&& a) mutable {
            a = counted(*c, method, std::move(a));
            auto results = call.getResults(results_size_hint);
            if (!a.ok()) return set_error(results, a.err);
            if (a.value) fill_description(results, *a.value);
          }));
}

kj::Promise<void> capstan_service::electLeaders(ElectLeadersContext call) {
  static constexpr const char* method = "electLeaders";
  const auto& ctx = *session_.ctx;
  ctx.metrics.count_request(method);
  auto params = call.getParams();
  if (auto s = validate_list_length(params.getPartitions().size(), "partitions"); !s) {
    ctx.metrics.count_error(method, s.code());
    set_error(call.getResults(results_size_hint), s.err());
    return kj::READY_NOW;
  }
  election_targets wanted;
  for (auto tp : params.getPartitions())
    wanted.push_back(election_target{tp.getTopic(), tp.getPartition()});
  call.releaseParams();
  return session_.answered_later(
      ask<election_outcomes>(ctx, ctx.targets.controller, ctx.admin_timeout, elect_atom_v,
                             std::move(wanted))
          .then([call, c = session_.ctx](answer<election_outcomes>&& a) mutable {
            answer_outcomes(call, counted(*c, method, std::move(a)));
          }));
}

kj::Promise<void> capstan_service::reassignPartitions(ReassignPartitionsContext call) {
  static constexpr const char* method = "reassignPartitions";
  const auto& ctx = *session_.ctx;
  ctx.metrics.count_request(method);
  auto refuse = [&](const error& why) {
    ctx.metrics.count_error(method, why.code);
    set_error(call.getResults(results_size_hint), why);
    return kj::READY_NOW;
  };
  auto params = call.getParams();
  if (auto s = validate_list_length(params.getPartitions().size(), "partitions"); !s)
    return refuse(s.err());
  reassignment_items items;
  for (auto t : params.getPartitions()) {
    if (auto s = validate_list_length(t.getReplicas().size(), "replicas"); !s)
      return refuse(s.err());
    reassignment_item item{t.getTopic(), t.getPartition(), t.getCancel(), {}};
    for (auto n : t.getReplicas()) item.replicas.push_back(n);
    items.push_back(std::move(item));
  }
  call.releaseParams();
  return session_.answered_later(
      ask<election_outcomes>(ctx, ctx.targets.controller, ctx.admin_timeout, reassign_atom_v,
                             std::move(items))
          .then([call, c = session_.ctx](answer<election_outcomes>&& a) mutable {
            answer_outcomes(call, counted(*c, method, std::move(a)));
          }));
}

kj::Promise<void> capstan_service::unregisterNode(UnregisterNodeContext call) {
  static constexpr const char* method = "unregisterNode";
  const auto& ctx = *session_.ctx;
  ctx.metrics.count_request(method);
  const int32_t node = call.getParams().getNodeId();
  call.releaseParams();
  return session_.answered_later(
      ask<bool>(ctx, ctx.targets.controller, ctx.admin_timeout, unregister_atom_v, node)
          .then([call, c = session_.ctx](answer<bool>&& a) mutable {
            a = counted(*c, method, std::move(a));
            if (!a.ok()) set_error(call.getResults(results_size_hint), a.err);
          }));
}

kj::Promise<void> capstan_service::addVoter(AddVoterContext call) {
  static constexpr const char* method = "addVoter";
  const auto& ctx = *session_.ctx;
  ctx.metrics.count_request(method);
  const int32_t node = call.getParams().getNodeId();
  std::string endpoint = call.getParams().getEndpoint();
  call.releaseParams();
  status valid = validate_voter_id(node);
  if (valid) valid = validate_voter_endpoint(endpoint);
  if (!valid) {
    ctx.metrics.count_error(method, valid.code());
    set_error(call.getResults(results_size_hint), valid.err());
    return kj::READY_NOW;
  }
  return session_.answered_later(
      ask<bool>(ctx, ctx.targets.controller, ctx.admin_timeout, add_voter_atom_v, node,
                std::move(endpoint))
          .then([call, c = session_.ctx](answer<bool>&& a) mutable {
            a = counted(*c, method, std::move(a));
            if (!a.ok()) set_error(call.getResults(results_size_hint), a.err);
          }));
}

kj::Promise<void> capstan_service::removeVoter(RemoveVoterContext call) {
  static constexpr const char* method = "removeVoter";
  const auto& ctx = *session_.ctx;
  ctx.metrics.count_request(method);
  const int32_t node = call.getParams().getNodeId();
  call.releaseParams();
  if (auto valid = validate_voter_id(node); !valid) {
    ctx.metrics.count_error(method, valid.code());
    set_error(call.getResults(results_size_hint), valid.err());
    return kj::READY_NOW;
  }
  return session_.answered_later(
      ask<bool>(ctx, ctx.targets.controller, ctx.admin_timeout, remove_voter_atom_v, node)
          .then([call, c = session_.ctx](answer<bool>&& a) mutable {
            a = counted(*c, method, std::move(a));
            if (!a.ok()) set_error(call.getResults(results_size_hint), a.err);
          }));
}

kj::Promise<void> capstan_service::injectFault(InjectFaultContext call) {
  static constexpr const char* method = "injectFault";
  const auto& ctx = *session_.ctx;
  ctx.metrics.count_request(method);
  auto params = call.getParams();
  auto results = call.getResults(results_size_hint);
  auto refuse = [&](const error& why) {
    ctx.metrics.count_error(method, why.code);
    set_error(results, why);
  };
  auto& faults = ctx.targets.faults;
  if (!faults) {
    refuse(make_error(errc::policy_violation,
                      "fault injection is off on this node (fault.injection.enable = false)"));
    return kj::READY_NOW;
  }
  std::vector<int32_t> peers;
  for (auto p : params.getPeers()) peers.push_back(p);
  status done;
  switch (params.getFault()) {
  case rpc::FaultKind::CLEAR:
    faults->clear();
    break;
  case rpc::FaultKind::ISOLATE:
    done = faults->isolate(peers);
    break;
  case rpc::FaultKind::DROP_OUTGOING:
    done = faults->drop_outgoing(peers);
    break;
  case rpc::FaultKind::DROP_INCOMING:
    done = faults->drop_incoming(peers);
    break;
  case rpc::FaultKind::DROP_PRODUCE_RESPONSES:
    done = faults->drop_produce_responses(params.getCount());
    break;
  case rpc::FaultKind::DROP_CONTROL:
    done = faults->drop_control(params.getCount(), params.getProbability());
    break;
  case rpc::FaultKind::DELAY_CONTROL:
    done = faults->delay_control(params.getDelayMs());
    break;
  case rpc::FaultKind::DISK_FULL:
  case rpc::FaultKind::DISK_READ_ONLY:
  case rpc::FaultKind::DISK_IO_ERROR:
    // Fields of another kind: the caller meant another fault.
    if (!peers.empty() || params.getCount() != 0 || params.getProbability() != 0 ||
        params.getDelayMs() != 0)
      done = make_error(errc::invalid_request,
                        "a disk fault takes no peers, count, probability or delay");
    else
      done = faults->fail_disk(params.getFault() == rpc::FaultKind::DISK_FULL ? disk_failure::full
                               : params.getFault() == rpc::FaultKind::DISK_READ_ONLY
                                 ? disk_failure::read_only
                                 : disk_failure::io_error);
    break;
  default:
    done = make_error(errc::invalid_request,
                      "unknown fault kind " + std::to_string(static_cast<int>(params.getFault())));
  }
  if (!done) refuse(done.err());
  return kj::READY_NOW;
}

} // namespace capstan
