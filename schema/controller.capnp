@0x93638b1c83c488e5;
# Requests from nodes to the active controller and their answers (docs/messages.md, "Node to
# controller"). A node sends them to a controller quorum voter's node endpoint, which hands them
# to its controller actor; every answer names the controller the voter knows to be active
# (leaderHint, -1: none known) so the node can go there. Error codes are capstan errc values
# (runtime/errc.hpp).

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("capstan::schema");

# KRaft's BrokerRegistration: a node (process) announces itself; it stays fenced until a heartbeat
# says it is ready.
struct BrokerRegistration {
  nodeId @0 :Int32;
  incarnationId @1 :Data;   # 16 random bytes, new at every process start
  clusterId @2 :Text;
  clientHost @3 :Text;
  clientPort @4 :UInt16;
  clusterHost @5 :Text;
  clusterPort @6 :UInt16;
  rack @7 :Text;            # empty: none
  # The incarnation the last process on this node's data dir registered with (empty: none known).
  # The controller replaces that registration at once, even while its session lasts: the data
  # dir's lock makes the old process gone. Added after the first version; older frames lack it.
  previousIncarnationId @8 :Data;
  # That process stopped cleanly (KIP-966's clean shutdown): its logs were flushed and closed, so
  # they hold every record it acknowledged. After a crash they may lack what the page cache held.
  previousCleanShutdown @9 :Bool;
  # The node's Kafka listener as clients reach it (advertised.listeners); port 0: none. Added
  # after the first version; older frames lack it.
  kafkaHost @10 :Text;
  kafkaPort @11 :UInt16;
}

struct BrokerRegistrationResponse {
  errorCode @0 :UInt8;
  errorMessage @1 :Text;
  brokerEpoch @2 :Int64;    # the registration's epoch; heartbeats name it
  leaderHint @3 :Int32;
}

# KRaft's BrokerHeartbeat. wantFence: the node is not ready to lead or be in an ISR yet (the
# controller unfences it on the first heartbeat without it). offlineReplicas: the replicas the
# node cannot serve (damaged or unreadable at start, or whose disk failed), every one in every
# heartbeat; the controller takes the node out of their ISRs and leadership (KRaft's offline log
# directories, per replica). wantShutDown: the node is stopping (KRaft's controlled shutdown): the
# controller moves its leaderships and ISR memberships to other nodes and fences it at once.
struct BrokerHeartbeat {
  nodeId @0 :Int32;
  brokerEpoch @1 :Int64;
  wantFence @2 :Bool;
  offlineReplicas @3 :List(Replica);
  wantShutDown @4 :Bool;
  # The logs of the node's replicas whose partition has no leader (docs/controller.md, "Last
  # replica standing"): what KIP-966's GetReplicaLogInfo asks for.
  leaderlessReplicas @5 :List(ReplicaLog);

  struct Replica {
    topicId @0 :Data;       # 16 bytes
    partition @1 :Int32;
  }

  struct ReplicaLog {
    topicId @0 :Data;       # 16 bytes
    partition @1 :Int32;
    lastWrittenEpoch @2 :Int32;   # the leader epoch of its last record; -1: none
    logEnd @3 :Int64;
    leaderEpoch @4 :Int32;        # the partition's leader epoch when it lost its leader
  }
}

struct BrokerHeartbeatResponse {
  errorCode @0 :UInt8;
  errorMessage @1 :Text;
  isFenced @2 :Bool;
  leaderHint @3 :Int32;
  shouldShutDown @4 :Bool;  # the controlled shutdown is done: the node leads nothing now
}

# One topic of Kafka's CreateTopics. partitions / replicationFactor -1: the controller's defaults.
struct CreateTopic {
  name @0 :Text;
  partitions @1 :Int32;
  replicationFactor @2 :Int16;
  configs @3 :List(Config);
  nodeId @4 :Int32 = -1;    # the sending node (-1: unnamed); the fault switch drops by it

  struct Config {
    name @0 :Text;
    value @1 :Text;
  }
}

# One topic of Kafka's DeleteTopics.
struct DeleteTopic {
  name @0 :Text;
  nodeId @1 :Int32 = -1;    # the sending node, as in CreateTopic
}

# Kafka's IncrementalAlterConfigs for one topic: the named configs take these values (SET), the
# `deleted` ones are overridden no more (DELETE), the topic's other overrides stay.
struct AlterConfigs {
  name @0 :Text;
  configs @1 :List(CreateTopic.Config);
  nodeId @2 :Int32 = -1;    # the sending node, as in CreateTopic
  deleted @3 :List(Text);
}

# Kafka's CreatePartitions for one topic: grow topic `name` to `totalCount` partitions (answered
# with a TopicResponse).
struct CreatePartitions {
  name @0 :Text;
  totalCount @1 :Int32;
  nodeId @2 :Int32 = -1;    # the sending node, as in CreateTopic
}

# Kafka's ElectLeaders with electionType PREFERRED: make each partition's preferred replica (its
# first) the leader where it is unfenced and in the ISR. No partitions: every partition.
struct ElectLeaders {
  partitions @0 :List(Partition);
  nodeId @1 :Int32 = -1;    # the sending node, as in CreateTopic

  struct Partition {
    topic @0 :Text;
    partition @1 :Int32;
  }
}

# Kafka's AlterPartitionReassignments: move each partition's replicas to `replicas` (the first
# the preferred leader), or cancel the reassignment it runs. Answered with an ElectLeadersResponse:
# one result per partition, errorCode 0 when its reassignment started (or was cancelled), else
# UNKNOWN_TOPIC_OR_PARTITION, INVALID_REQUEST, INVALID_REPLICA_ASSIGNMENT or
# NO_REASSIGNMENT_IN_PROGRESS.
struct AlterPartitionReassignments {
  partitions @0 :List(Target);
  nodeId @1 :Int32 = -1;    # the sending node, as in CreateTopic

  struct Target {
    topic @0 :Text;
    partition @1 :Int32;
    cancel @2 :Bool;        # true: `replicas` is ignored
    replicas @3 :List(Int32);
  }
}

# errorCode: the request as a whole (NOT_CONTROLLER, ...); results: one per partition considered,
# errorCode 0 when its preferred replica was elected, else ELECTION_NOT_NEEDED,
# PREFERRED_LEADER_NOT_AVAILABLE or UNKNOWN_TOPIC_OR_PARTITION.
struct ElectLeadersResponse {
  errorCode @0 :UInt8;
  errorMessage @1 :Text;
  leaderHint @2 :Int32;
  results @3 :List(Result);

  struct Result {
    topic @0 :Text;
    partition @1 :Int32;
    errorCode @2 :UInt8;
    errorMessage @3 :Text;
  }
}

# Kafka's UnregisterBroker: a fenced node gone for good leaves the cluster's metadata (docs/operations.md,
# "Replacing a node"). Answered by a TopicResponse with an empty topic id.
struct UnregisterBroker {
  brokerId @0 :Int32;       # the node to unregister
  nodeId @1 :Int32 = -1;    # the sending node, as in CreateTopic
}

# KIP-853's AddRaftVoter: node `voterId`, which already runs a quorum member whose controller
# listens at `endpoint` (HOST:PORT, its cluster listener), becomes a voter (docs/controller.md,
# "Voter changes"). The active controller hands it to its quorum member. Answered by a
# TopicResponse with an empty topic id once the new voter set committed: DUPLICATE_VOTER,
# INVALID_REQUEST, REQUEST_TIMED_OUT (another change under way, the node did not catch up).
struct AddVoter {
  voterId @0 :Int32;
  endpoint @1 :Text;
  nodeId @2 :Int32 = -1;    # the sending node, as in CreateTopic
}

# KIP-853's RemoveRaftVoter: node `voterId` stops being a voter. Answered like AddVoter:
# VOTER_NOT_FOUND, INVALID_REQUEST (the last voter), REQUEST_TIMED_OUT (another change under way,
# no live majority in the new set).
struct RemoveVoter {
  voterId @0 :Int32;
  nodeId @1 :Int32 = -1;    # the sending node
}

# The answer to CreateTopic, DeleteTopic, AlterConfigs, CreatePartitions, UnregisterBroker,
# AddVoter and RemoveVoter.
struct TopicResponse {
  errorCode @0 :UInt8;
  errorMessage @1 :Text;
  topicId @2 :Data;         # the created (or deleted) topic's id; empty on error
  leaderHint @3 :Int32;
}

# KRaft's AllocateProducerIds: a node asks for the next block of producer ids to hand out in
# initProducerId (docs/controller.md, "Producer ids").
struct AllocateProducerIds {
  nodeId @0 :Int32;
}

# Producer ids [firstId, firstId + size) are the node's; empty on error.
struct AllocateProducerIdsResponse {
  errorCode @0 :UInt8;
  errorMessage @1 :Text;
  firstId @2 :Int64;
  size @3 :Int64;
  leaderHint @4 :Int32;
}

# A voter's answer to a node's DescribeQuorum (an empty request, for `capstan cluster describe`):
# its quorum member's Raft state and, while its controller is active, every registered node.
struct VoterState {
  nodeId @0 :Int32;
  role @1 :Text;            # follower, pre-candidate, candidate, leader
  term @2 :Int64;
  commitIndex @3 :Int64;
  leaderId @4 :Int32;       # the leader the member knows of; -1: none
  active @5 :Bool;          # this voter's controller is the active controller
  nodes @6 :List(RegisteredNode);   # empty unless active
  voters @7 :List(Int32);   # the voters in effect in the member's log, ascending

  struct RegisteredNode {
    nodeId @0 :Int32;
    fenced @1 :Bool;
    brokerEpoch @2 :Int64;
    incarnationId @3 :Data; # 16 bytes
  }
}
