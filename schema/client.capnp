@0xd4a2b6c9e8f01357;
# The client RPC interface (docs/protocol.md). Every response carries errorCode (an ErrorCode
# below, sent as its UInt8 ordinal: 0 = none) and errorMessage. Record bytes are padded batch
# sequences (docs/formats.md, "Alignment"); a produce carries exactly one batch.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("capstan::rpc");

# Kafka's error number for an ErrorCode (Kafka's protocol error codes; -1 is Kafka's
# UNKNOWN_SERVER_ERROR). The Kafka listener answers with it (docs/kafka.md).
annotation kafka(enumerant) :Int16;

# Every errorCode a response carries, by the ordinal sent: Kafka's error names in camelCase
# (NOT_LEADER_OR_FOLLOWER is notLeaderOrFollower), each with Kafka's number for it. New codes are
# appended; a client that gets an ordinal past the last it knows reads it as
# unknownServerError, as Kafka's clients treat a code they do not know. docs/protocol.md says
# which check answers which code.
enum ErrorCode {
  none @0 $kafka(0);
  notLeaderOrFollower @1 $kafka(6);
  unknownTopicOrPartition @2 $kafka(3);
  offsetOutOfRange @3 $kafka(1);
  corruptMessage @4 $kafka(2);
  messageTooLarge @5 $kafka(10);
  notEnoughReplicas @6 $kafka(19);
  notEnoughReplicasAfterAppend @7 $kafka(20);
  requestTimedOut @8 $kafka(7);
  fencedLeaderEpoch @9 $kafka(74);
  unknownLeaderEpoch @10 $kafka(75);
  staleControllerEpoch @11 $kafka(11);
  inconsistentTopicId @12 $kafka(103);
  kafkaStorageError @13 $kafka(56);
  invalidTopicException @14 $kafka(17);
  topicAlreadyExists @15 $kafka(36);
  invalidReplicationFactor @16 $kafka(38);
  policyViolation @17 $kafka(44);
  unsupportedCompressionType @18 $kafka(76);
  invalidRecord @19 $kafka(87);
  invalidConfig @20 $kafka(40);
  unknownServerError @21 $kafka(-1);
  networkException @22 $kafka(13);
  invalidRequest @23 $kafka(42);
  invalidRequiredAcks @24 $kafka(21);
  invalidPartitions @25 $kafka(37);
  invalidTimestamp @26 $kafka(32);
  notController @27 $kafka(41);
  invalidUpdateVersion @28 $kafka(95);
  ineligibleReplica @29 $kafka(107);
  duplicateBrokerRegistration @30 $kafka(101);
  inconsistentClusterId @31 $kafka(104);
  staleBrokerEpoch @32 $kafka(77);
  electionNotNeeded @33 $kafka(84);
  preferredLeaderNotAvailable @34 $kafka(80);
  outOfOrderSequenceNumber @35 $kafka(45);
  invalidProducerEpoch @36 $kafka(47);
  inconsistentVoterSet @37 $kafka(94);
  invalidReplicaAssignment @38 $kafka(39);
  noReassignmentInProgress @39 $kafka(85);
  brokerIdNotRegistered @40 $kafka(102);
  coordinatorLoadInProgress @41 $kafka(14);
  coordinatorNotAvailable @42 $kafka(15);
  notCoordinator @43 $kafka(16);
  illegalGeneration @44 $kafka(22);
  inconsistentGroupProtocol @45 $kafka(23);
  unknownMemberId @46 $kafka(25);
  invalidSessionTimeout @47 $kafka(26);
  rebalanceInProgress @48 $kafka(27);
  memberIdRequired @49 $kafka(79);
  groupMaxSizeReached @50 $kafka(81);
  fencedInstanceId @51 $kafka(82);
  groupNotEmpty @52 $kafka(68);
  groupIdNotFound @53 $kafka(69);
  unsupportedVersion @54 $kafka(35);
  duplicateVoter @55 $kafka(126);
  voterNotFound @56 $kafka(127);
  unknownTopicId @57 $kafka(100);
  brokerNotAvailable @58 $kafka(8);
}

struct BrokerInfo {
  nodeId @0 :Int32;
  host @1 :Text;
  port @2 :UInt16;
}

struct PartitionInfo {
  partition @0 :Int32;
  leader @1 :Int32;          # -1 when offline
  leaderEpoch @2 :Int32;
  replicas @3 :List(Int32);
  isr @4 :List(Int32);
  offline @5 :List(Int32);
  wiped @6 :List(Int32);     # back on a new data dir since last in the ISR (docs/controller.md)
}

struct TopicInfo {
  name @0 :Text;
  topicId @1 :Data;          # 16 bytes
  errorCode @2 :UInt8;
  errorMessage @3 :Text;
  internal @4 :Bool;
  partitions @5 :List(PartitionInfo);
  # The topic's own config overrides (describeConfigs gives every effective value).
  configs @6 :List(ConfigEntry);
}

struct ConfigEntry {
  name @0 :Text;
  value @1 :Text;
}

struct TopicPartition {
  topic @0 :Text;
  partition @1 :Int32;
}

struct GroupOffset {
  topic @0 :Text;
  partition @1 :Int32;
  offset @2 :Int64;          # -1: no committed offset
  metadata @3 :Text;
  errorCode @4 :UInt8;
  # The partition leader epoch of the last record read before `offset` (-1: unknown), as Kafka's
  # committedLeaderEpoch: a consumer resuming from the commit names it as its fetch's
  # lastFetchedEpoch, so a log truncated since the commit is detected (KIP-320).
  leaderEpoch @5 :Int32 = -1;
}

# One controller quorum voter in describeCluster.
struct QuorumMember {
  nodeId @0 :Int32;
  reachable @1 :Bool;       # false: it did not answer in time; failure says why
  failure @2 :Text;
  role @3 :Text;            # follower, pre-candidate, candidate, leader
  term @4 :Int64;
  commitIndex @5 :Int64;
  leaderId @6 :Int32;       # the leader it knows of; -1: none
}

# One node registered with the active controller, in describeCluster.
struct RegisteredNode {
  nodeId @0 :Int32;
  fenced @1 :Bool;
  brokerEpoch @2 :Int64;
  incarnationId @3 :Data;   # 16 bytes
}

# One partition's outcome in electLeaders (errorCode 0: its preferred replica was elected) and in
# reassignPartitions (errorCode 0: its reassignment started, or was cancelled).
struct ElectionResult {
  topic @0 :Text;
  partition @1 :Int32;
  errorCode @2 :UInt8;      # e.g. ELECTION_NOT_NEEDED, INVALID_REPLICA_ASSIGNMENT, UNKNOWN_TOPIC_OR_PARTITION
  errorMessage @3 :Text;
}

# One partition's target in reassignPartitions.
struct ReassignTarget {
  topic @0 :Text;
  partition @1 :Int32;
  cancel @2 :Bool;          # true: cancel the reassignment it runs; `replicas` is ignored
  replicas @3 :List(Int32); # the target replica set, the first the preferred leader
}

interface Capstan {
  # `topics` empty and `allTopics` true: every topic. Unknown names come back with
  # UNKNOWN_TOPIC_OR_PARTITION in their TopicInfo.
  metadata @0 (topics :List(Text), allTopics :Bool)
      -> (brokers :List(BrokerInfo), controllerId :Int32, clusterId :Text, topics :List(TopicInfo));

  createTopic @1 (name :Text, partitions :Int32, replicationFactor :Int16, configs :List(ConfigEntry))
      -> (errorCode :UInt8, errorMessage :Text, topicId :Data);
  deleteTopic @2 (name :Text) -> (errorCode :UInt8, errorMessage :Text);
  listTopics @3 () -> (topics :List(Text));
  describeConfigs @4 (topic :Text) -> (errorCode :UInt8, errorMessage :Text, configs :List(ConfigEntry));
  # Sets the given topic-level configs and removes the overrides named in `deleted`, so that the
  # node's defaults apply to them again (Kafka's IncrementalAlterConfigs SET and DELETE); the
  # topic's other overrides keep their values. A key both set and deleted, or a deleted key that
  # is no topic config: INVALID_CONFIG.
  alterConfigs @5 (topic :Text, configs :List(ConfigEntry), deleted :List(Text))
      -> (errorCode :UInt8, errorMessage :Text);

  # acks: 0, 1 or -1 (all).
  produce @6 (topic :Text, partition :Int32, acks :Int16, timeoutMs :Int32, records :Data)
      -> (errorCode :UInt8, errorMessage :Text, baseOffset :Int64, logAppendTime :Int64,
          logStartOffset :Int64);

  # Returns whole batches from the one holding `offset`, all below the high watermark. Waits up
  # to maxWaitMs until at least minBytes are available. currentLeaderEpoch (KIP-320): the
  # partition's leaderEpoch in the caller's metadata; FENCED_LEADER_EPOCH when the leader is at a
  # newer one, UNKNOWN_LEADER_EPOCH when the node has not applied it yet (refresh metadata and
  # retry, either way); -1 is not checked. lastFetchedEpoch: the partitionLeaderEpoch of the batch
  # that held the caller's last record (-1: none). When the log no longer holds what the caller
  # read (an unclean election truncated it), the answer has no records and names the leader's
  # last epoch up to lastFetchedEpoch and that epoch's end offset: the caller's records from there
  # to `offset` are gone (docs/protocol.md, "Leader epoch"). Otherwise divergingEpoch is -1.
  fetch @7 (topic :Text, partition :Int32, offset :Int64, maxBytes :Int32, minBytes :Int32,
            maxWaitMs :Int32, currentLeaderEpoch :Int32 = -1, lastFetchedEpoch :Int32 = -1)
      -> (errorCode :UInt8, errorMessage :Text, highWatermark :Int64, logStartOffset :Int64,
          records :Data, divergingEpoch :Int32 = -1, divergingEndOffset :Int64 = -1);

  # timestamp: -2 earliest, -1 latest (the high watermark), else the first offset whose record
  # timestamp >= it (offset -1 when none).
  listOffsets @8 (topic :Text, partition :Int32, timestamp :Int64)
      -> (errorCode :UInt8, errorMessage :Text, offset :Int64, timestamp :Int64);

  # A group member commits with its memberId and generation (and groupInstanceId if static);
  # anyone else, with none and generation -1, only while the group has no members. A refused
  # commit has the error in every entry: ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID,
  # FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS.
  commitOffsets @9 (group :Text, offsets :List(GroupOffset), memberId :Text,
                    groupInstanceId :Text, generation :Int32 = -1)
      -> (errorCode :UInt8, errorMessage :Text, results :List(GroupOffset));
  fetchOffsets @10 (group :Text, partitions :List(TopicPartition))
      -> (errorCode :UInt8, errorMessage :Text, offsets :List(GroupOffset));

  # The controller quorum as the answering node finds it by asking every voter (each within a
  # bounded time). activeControllerId -1: no voter reported an active controller. nodesKnown
  # false: no active controller answered, `nodes` is empty. `voters`: the voters in effect,
  # ascending, as the active controller's quorum member has them (else the reachable member of the
  # highest term and commit index; empty when none answered). No members: the cluster runs no
  # controller quorum (a single node).
  describeCluster @11 () -> (errorCode :UInt8, errorMessage :Text, activeControllerId :Int32,
      members :List(QuorumMember), nodesKnown :Bool, nodes :List(RegisteredNode),
      voters :List(Int32));

  # Kafka's InitProducerId for an idempotent producer (docs/idempotence.md): a producer id that
  # no other initProducerId got, on any node of the cluster, and epoch 0. transactionalId must be
  # empty: capstan has no transactions (INVALID_REQUEST). producerId is -1 on error.
  initProducerId @12 (transactionalId :Text)
      -> (errorCode :UInt8, errorMessage :Text, producerId :Int64 = -1, producerEpoch :Int16 = -1);

  # Kafka's CreatePartitions: grows the topic to totalCount partitions (INVALID_PARTITIONS unless
  # above its count). The new partitions' replicas continue partition 0's placement; they serve
  # once the controller's LeaderAndIsr reached them. A producer sees them after its next metadata
  # refresh.
  createPartitions @13 (topic :Text, totalCount :Int32) -> (errorCode :UInt8, errorMessage :Text);

  # Kafka's ElectLeaders with electionType PREFERRED: each partition's preferred replica (its
  # first) becomes leader where it is unfenced, in the ISR and not leading already. No partitions:
  # every partition of every topic. One result per partition asked (or per partition, for all).
  electLeaders @14 (partitions :List(TopicPartition))
      -> (errorCode :UInt8, errorMessage :Text, results :List(ElectionResult));
  # The answering node's fault switch, for failure tests (docs/operations.md, "Fault
  # injection"). POLICY_VIOLATION unless the node runs with fault.injection.enable = true.
  # isolate: every message between this node and each of `peers` (node ids) is dropped, both
  # ways, until cleared. dropOutgoing / dropIncoming: one way, what this node sends to `peers` /
  # what it receives from them. dropProduceResponses: the next `count` produce calls on this node
  # are appended as usual, and their answers replaced by a DISCONNECTED error, a lost response.
  # dropControl: this node's controller loses its next `count` LeaderAndIsr / UpdateMetadata /
  # StopReplica messages, then each with `probability`. delayControl: it sends each `delayMs`
  # late. diskFull: every write, fsync and file or directory creation under this node's data dir
  # fails with ENOSPC; diskReadOnly the same with EROFS (a file system remounted read-only), and
  # diskIoError with EIO (a failing disk). clear: all undone. INVALID_REQUEST for a cut without peers, with this
  # node's own id or a negative one, a negative count, a probability outside [0, 1], a delay
  # below 1 ms, or a disk fault with peers, a count, a probability or a delay.
  injectFault @15 (fault :FaultKind, peers :List(Int32), count :Int32, probability :Float64,
                   delayMs :Int32) -> (errorCode :UInt8, errorMessage :Text);

  # Kafka's AlterPartitionReassignments (KIP-455): each partition's replicas move to `replicas`.
  # The new replicas are added first and catch up as followers; the ones leaving are dropped, and
  # their logs deleted, once every target replica is in the ISR (docs/operations.md, "Replacing a
  # node"). A new target replaces a running reassignment; `cancel` drops the replicas it added
  # (the ones it was removing stay). One result per partition: UNKNOWN_TOPIC_OR_PARTITION,
  # INVALID_REQUEST (a partition twice), INVALID_REPLICA_ASSIGNMENT (no replicas, a node twice or not registered; a
  # cancel that would leave no ISR member), NO_REASSIGNMENT_IN_PROGRESS. The request as a whole:
  # INVALID_REQUEST on a single node (no cluster to move replicas in), or a list too long.
  reassignPartitions @16 (partitions :List(ReassignTarget))
      -> (errorCode :UInt8, errorMessage :Text, results :List(ElectionResult));

  # Kafka's UnregisterBroker: node `nodeId`, gone for good, leaves the cluster's metadata
  # (docs/operations.md, "Replacing a node"); `cluster describe` no longer lists it, and the
  # same id may register again later with a new broker epoch. BROKER_ID_NOT_REGISTERED for a
  # node that is not registered; INVALID_REQUEST while it is unfenced or still heartbeats, while
  # it is still the last in-sync replica of a partition, and on a single node.
  unregisterNode @17 (nodeId :Int32) -> (errorCode :UInt8, errorMessage :Text);

  # Kafka's FindCoordinator for a consumer group: the node that coordinates `group`, which is
  # the leader of its partition of __consumer_offsets (docs/groups.md). The first call of a
  # cluster has the controller create that topic and answers COORDINATOR_NOT_AVAILABLE until
  # the partition has a leader; retry. nodeId -1 on error.
  findCoordinator @18 (group :Text)
      -> (errorCode :UInt8, errorMessage :Text, nodeId :Int32, host :Text, port :UInt16);

  # Kafka's ListGroups at one node: the groups with committed offsets that this node coordinates,
  # sorted. A client lists the cluster's groups by asking every node. COORDINATOR_LOAD_IN_PROGRESS
  # while a partition of __consumer_offsets this node took over is still loading; retry.
  listGroups @19 () -> (errorCode :UInt8, errorMessage :Text, groups :List(Text));

  # Kafka's classic group protocol at the group's coordinator (docs/groups.md, "Membership");
  # any other node answers NOT_COORDINATOR. A first join without memberId gets
  # MEMBER_ID_REQUIRED with the memberId to join again with (a static member, one with a
  # groupInstanceId, joins at once). The answer waits until the join phase ends (at most the
  # group's longest rebalanceTimeoutMs); the leader alone gets `members`, each member's metadata
  # for the protocol chosen. Errors: INVALID_REQUEST (bad group id, an empty protocol type or
  # list, a non-positive rebalance timeout, lists or strings too long), INVALID_SESSION_TIMEOUT,
  # INCONSISTENT_GROUP_PROTOCOL, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, GROUP_MAX_SIZE_REACHED,
  # REBALANCE_IN_PROGRESS (a newer join of the member replaced this one).
  joinGroup @20 (group :Text, memberId :Text, groupInstanceId :Text, clientId :Text,
                 sessionTimeoutMs :Int32, rebalanceTimeoutMs :Int32, protocolType :Text,
                 protocols :List(GroupProtocol))
      -> (errorCode :UInt8, errorMessage :Text, generation :Int32 = -1, protocolName :Text,
          leader :Text, memberId :Text, members :List(GroupMember));

  # Kafka's SyncGroup: the leader sends every member's assignment, the others none; each gets
  # its own once the leader's arrived. ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID,
  # FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS (join again).
  syncGroup @21 (group :Text, memberId :Text, groupInstanceId :Text, generation :Int32,
                 assignments :List(MemberAssignment))
      -> (errorCode :UInt8, errorMessage :Text, assignment :Data);

  # Kafka's Heartbeat: keeps the member's session. REBALANCE_IN_PROGRESS: join again;
  # ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID: the member is out of the group.
  heartbeat @22 (group :Text, memberId :Text, groupInstanceId :Text, generation :Int32)
      -> (errorCode :UInt8, errorMessage :Text);

  # Kafka's LeaveGroup: the member leaves now, and the others rebalance without waiting for its
  # session to end.
  leaveGroup @23 (group :Text, memberId :Text, groupInstanceId :Text)
      -> (errorCode :UInt8, errorMessage :Text);

  # Kafka's DescribeGroups for one group, at its coordinator: the state by Kafka's name (Empty,
  # PreparingRebalance, CompletingRebalance, Stable; Empty for a group with commits and no
  # members, Dead for one with neither), its protocol, generation and leader, and each member
  # with its assignment.
  describeGroup @24 (group :Text)
      -> (errorCode :UInt8, errorMessage :Text, state :Text, protocolType :Text,
          protocolName :Text, generation :Int32, leader :Text, members :List(GroupMemberSummary));

  # Kafka's DeleteGroups for one group, at its coordinator: its commits and its record are
  # removed (tombstones in __consumer_offsets). GROUP_NOT_EMPTY while it has members,
  # GROUP_ID_NOT_FOUND when it has neither members nor commits.
  deleteGroup @25 (group :Text) -> (errorCode :UInt8, errorMessage :Text);

  # KIP-853's AddRaftVoter (Kafka: kafka-metadata-quorum add-controller): node `nodeId` becomes a
  # controller quorum voter (docs/operations.md, "Replacing a controller"). It must already run a
  # quorum member (started with the cluster's --controller-quorum, which names it) whose cluster
  # listener is `endpoint` (HOST:PORT). Answered once the new voter set committed, which waits for the node to
  # catch up with the quorum's log (up to 15 s). INVALID_REQUEST for a negative id or an endpoint
  # that is not HOST:PORT with a port in [1, 65535]; DUPLICATE_VOTER when the node is a voter
  # already; REQUEST_TIMED_OUT when another voter change is under way or the node did not catch
  # up; NOT_CONTROLLER when no active controller was found.
  addVoter @26 (nodeId :Int32, endpoint :Text) -> (errorCode :UInt8, errorMessage :Text);

  # KIP-853's RemoveRaftVoter (Kafka: kafka-metadata-quorum remove-controller): node `nodeId`
  # stops being a controller quorum voter. INVALID_REQUEST for a negative id or the last voter;
  # VOTER_NOT_FOUND when the node is no voter; REQUEST_TIMED_OUT when another voter change is
  # under way or the remaining voters have no live majority.
  removeVoter @27 (nodeId :Int32) -> (errorCode :UInt8, errorMessage :Text);
}

struct GroupMemberSummary {
  memberId @0 :Text;
  groupInstanceId @1 :Text;
  clientId @2 :Text;
  assignment @3 :Data;
}

struct GroupProtocol {
  name @0 :Text;          # e.g. "range"
  metadata @1 :Data;      # opaque to the coordinator (a consumer's subscription)
}

struct GroupMember {
  memberId @0 :Text;
  groupInstanceId @1 :Text;
  metadata @2 :Data;
}

struct MemberAssignment {
  memberId @0 :Text;
  assignment @1 :Data;    # opaque to the coordinator
}

enum FaultKind {
  clear @0;
  isolate @1;
  dropProduceResponses @2;
  dropOutgoing @3;
  dropIncoming @4;
  dropControl @5;
  delayControl @6;
  diskFull @7;
  diskReadOnly @8;
  diskIoError @9;
}
