#pragma once

// The Capstan::Server behind one client connection (schema/client.capnp, docs/protocol.md): it
// translates each call's params into a request handler's neutral struct (handlers/) and the
// handler's answer into the call's results; the behaviour is the handler's. Calls no other front
// door has (cluster administration, fault injection) are answered here (capstan_service_admin.cpp).
//
// Threads: everything here runs on the RPC server's kj thread, except the CAF side of a call,
// which runs in the bridge actor (rpc_bridge.hpp) and completes the call through a cross-thread
// fulfiller. Nothing here blocks.

#include <memory>

#include "actors/gateway/connection_stream.hpp"
#include "actors/gateway/service_context.hpp"
#include "schema/client.capnp.h"

namespace capstan {

class capstan_service final : public rpc::Capstan::Server {
public:
  // `pins` and `load`: the connection's, shared with its connection_stream and its read gate.
  capstan_service(std::shared_ptr<service_context> ctx, std::shared_ptr<fetch_pins> pins,
                  std::shared_ptr<connection_load> load);

  kj::Promise<void> metadata(MetadataContext call) override;
  kj::Promise<void> createTopic(CreateTopicContext call) override;
  kj::Promise<void> deleteTopic(DeleteTopicContext call) override;
  kj::Promise<void> listTopics(ListTopicsContext call) override;
  kj::Promise<void> describeConfigs(DescribeConfigsContext call) override;
  kj::Promise<void> alterConfigs(AlterConfigsContext call) override;
  kj::Promise<void> produce(ProduceContext call) override;
  kj::Promise<void> fetch(FetchContext call) override;
  kj::Promise<void> listOffsets(ListOffsetsContext call) override;
  kj::Promise<void> commitOffsets(CommitOffsetsContext call) override;
  kj::Promise<void> fetchOffsets(FetchOffsetsContext call) override;
  kj::Promise<void> describeCluster(DescribeClusterContext call) override;
  kj::Promise<void> initProducerId(InitProducerIdContext call) override;
  kj::Promise<void> createPartitions(CreatePartitionsContext call) override;
  kj::Promise<void> electLeaders(ElectLeadersContext call) override;
  kj::Promise<void> reassignPartitions(ReassignPartitionsContext call) override;
  kj::Promise<void> unregisterNode(UnregisterNodeContext call) override;
  kj::Promise<void> addVoter(AddVoterContext call) override;
  kj::Promise<void> removeVoter(RemoveVoterContext call) override;
  kj::Promise<void> findCoordinator(FindCoordinatorContext call) override;
  kj::Promise<void> listGroups(ListGroupsContext call) override;
  kj::Promise<void> joinGroup(JoinGroupContext call) override;
  kj::Promise<void> syncGroup(SyncGroupContext call) override;
  kj::Promise<void> heartbeat(HeartbeatContext call) override;
  kj::Promise<void> leaveGroup(LeaveGroupContext call) override;
  kj::Promise<void> describeGroup(DescribeGroupContext call) override;
  kj::Promise<void> deleteGroup(DeleteGroupContext call) override;
  kj::Promise<void> injectFault(InjectFaultContext call) override;

private:
  client_session session_;
  std::shared_ptr<fetch_pins> pins_;
};

} // namespace capstan
