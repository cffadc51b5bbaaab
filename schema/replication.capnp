@0xa75414eb5cb1a652;
# Messages between nodes on the replication and control paths (docs/messages.md lists each with
# who sends it to whom). Every one travels in a capnp_frame over the CAF middleman, whether the
# peer is another process or the same one. Record bytes are padded batch sequences
# (docs/formats.md, "Alignment"). Error codes are capstan errc values (runtime/errc.hpp).

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("capstan::schema");

struct TopicPartition {
  topic @0 :Text;
  partition @1 :Int32;
}

struct PartitionError {
  topicPartition @0 :TopicPartition;
  errorCode @1 :UInt8;
  errorMessage @2 :Text;
}

# ---- controller -> replica manager ----

# The state of one partition as the controller decided it (Kafka's LeaderAndIsrPartitionState).
struct PartitionState {
  topicPartition @0 :TopicPartition;
  topicId @1 :Data;                # 16 bytes
  leader @2 :Int32;                # -1: no leader (offline)
  leaderEpoch @3 :Int32;
  isr @4 :List(Int32);
  partitionEpoch @5 :Int32;        # bumped by every leader or ISR change
  replicas @6 :List(Int32);
  # Replicas back on a new data dir since they were last in the ISR: last-replica-standing
  # recovery does not count them (docs/controller.md). For `topic describe`; a replica ignores it.
  wipedReplicas @7 :List(Int32);
}

struct NodeEndpoint {
  nodeId @0 :Int32;
  host @1 :Text;
  clientPort @2 :UInt16;           # Cap'n Proto RPC for clients
  clusterPort @3 :UInt16;          # the CAF middleman
  rack @4 :Text;
  kafkaHost @5 :Text;              # the advertised Kafka listener; port 0: none
  kafkaPort @6 :UInt16;
}

# Makes the receiving node's replicas of these partitions leaders or followers. Stale
# controller epochs are refused whole; stale leader epochs per partition.
#
# `sequence`, on LeaderAndIsr, UpdateMetadata and StopReplica: the message's place in the
# controller's stream of control messages to this node (docs/controller.md, "Metadata that always
# arrives"). A node applies sequence n of a controller epoch only right after n - 1, or after an
# UpdateMetadata with `full` (which starts the stream afresh); it answers a gap with
# INVALID_UPDATE_VERSION, and the controller then sends it its whole state. 0: not sequenced.
#
# `targetIncarnation`, on the same three: the registration (incarnation id, 16 bytes) of the
# receiving node they are for (KIP-380's broker epoch in control requests). A node's next process
# listens where the last one did, and must not act on what the controller decided for its
# predecessor (lead with a log a crash shortened, at its predecessor's leader epoch): it refuses a
# message for another incarnation with STALE_BROKER_EPOCH. Empty: for any.
struct LeaderAndIsr {
  controllerId @0 :Int32;
  controllerEpoch @1 :Int32;
  partitions @2 :List(PartitionState);
  # Endpoints of every leader named above, so a follower can reach it.
  leaders @3 :List(NodeEndpoint);
  sequence @4 :Int64;
  targetIncarnation @5 :Data;
}

struct LeaderAndIsrResponse {
  errorCode @0 :UInt8;
  errorMessage @1 :Text;
  partitions @2 :List(PartitionError);
}

struct TopicConfig {
  name @0 :Text;
  topicId @1 :Data;
  internal @2 :Bool;
  configs @3 :List(ConfigEntry);

  struct ConfigEntry {
    name @0 :Text;
    value @1 :Text;
  }
}

# The cluster as the controller knows it: live nodes, topics with their configs, and partition
# states. Every node keeps the latest in its metadata cache and answers clients from it.
# With `full`, the whole cluster (the node's cache is replaced); without, what changed since the
# previous message of the stream: every live node, the topics that are new or changed (their
# configs), the partition states that are new or changed, and the ids of removed topics.
struct UpdateMetadata {
  controllerId @0 :Int32;
  controllerEpoch @1 :Int32;
  clusterId @2 :Text;
  nodes @3 :List(NodeEndpoint);
  topics @4 :List(TopicConfig);
  partitions @5 :List(PartitionState);
  sequence @6 :Int64;
  full @7 :Bool = true;
  removedTopics @8 :List(Data);    # 16 bytes each; only without `full`
  targetIncarnation @9 :Data;
}

struct StopReplica {
  controllerId @0 :Int32;
  controllerEpoch @1 :Int32;
  deletePartitions @2 :Bool;       # true: remove the data too (topic deleted or reassigned)
  partitions @3 :List(StopPartition);
  sequence @4 :Int64;
  targetIncarnation @5 :Data;

  struct StopPartition {
    topicPartition @0 :TopicPartition;
    topicId @1 :Data;
    leaderEpoch @2 :Int32;         # -2: delete regardless of epoch (Kafka's EpochDuringDelete)
  }
}

struct StopReplicaResponse {
  errorCode @0 :UInt8;
  errorMessage @1 :Text;
  partitions @2 :List(PartitionError);
}

# ---- follower fetcher -> leader ----

# A follower's pull for many partitions of one leader.
struct Fetch {
  replicaId @0 :Int32;
  maxWaitMs @1 :Int32;             # replica.fetch.wait.max.ms
  minBytes @2 :Int32;              # replica.fetch.min.bytes
  maxBytes @3 :Int32;              # replica.fetch.response.max.bytes
  partitions @4 :List(FetchPartition);
  # The fetching process's incarnation id (16 bytes; empty: not named), as KIP-903's replica
  # epoch: the leader names it for the replica in AlterPartition, so that the controller refuses
  # to add a replica whose process restarted since (its log may have lost what it fetched).
  replicaIncarnation @5 :Data;

  struct FetchPartition {
    topicPartition @0 :TopicPartition;
    currentLeaderEpoch @1 :Int32;  # the epoch of the leader the follower follows
    fetchOffset @2 :Int64;         # the follower's log end offset
    logStartOffset @3 :Int64;
    partitionMaxBytes @4 :Int32;   # replica.fetch.max.bytes
  }
}

struct FetchResponse {
  errorCode @0 :UInt8;
  errorMessage @1 :Text;
  partitions @2 :List(PartitionData);

  struct PartitionData {
    topicPartition @0 :TopicPartition;
    errorCode @1 :UInt8;
    errorMessage @5 :Text;
    highWatermark @2 :Int64;
    logStartOffset @3 :Int64;
    logEndOffset @6 :Int64;        # the leader's, so a follower out of range knows where it is
    records @4 :Data;
  }
}

# KIP-101 / KIP-279: the end offset of `leaderEpoch` in the leader's log (the start of the next
# epoch it knows, or its log end for its current epoch).
struct OffsetsForLeaderEpoch {
  replicaId @0 :Int32;
  partitions @1 :List(EpochRequest);

  struct EpochRequest {
    topicPartition @0 :TopicPartition;
    currentLeaderEpoch @1 :Int32;
    leaderEpoch @2 :Int32;         # the follower's latest epoch
  }
}

struct OffsetsForLeaderEpochResponse {
  errorCode @0 :UInt8;
  errorMessage @1 :Text;
  partitions @2 :List(EpochEndOffset);

  struct EpochEndOffset {
    topicPartition @0 :TopicPartition;
    errorCode @1 :UInt8;
    errorMessage @4 :Text;
    leaderEpoch @2 :Int32;         # -1 with endOffset -1: unknown
    endOffset @3 :Int64;
  }
}

# ---- leader -> controller ----

# A leader's proposed ISR change (Kafka's AlterPartition, KIP-497).
struct AlterPartition {
  brokerId @0 :Int32;
  partitions @1 :List(PartitionChange);

  struct PartitionChange {
    topicPartition @0 :TopicPartition;
    topicId @1 :Data;
    leaderEpoch @2 :Int32;
    partitionEpoch @3 :Int32;      # the state the proposal builds on
    newIsr @4 :List(Int32);
    # Per newIsr member, the incarnation id its fetches named (KIP-903's newIsrWithEpochs): 16
    # bytes, or empty when unknown (the leader itself). An empty list: none named.
    newIsrIncarnations @5 :List(Data);
  }
}

# The committed state of each partition (or why the change was refused).
struct AlterPartitionResponse {
  errorCode @0 :UInt8;
  errorMessage @1 :Text;
  partitions @2 :List(PartitionResult);

  struct PartitionResult {
    topicPartition @0 :TopicPartition;
    errorCode @1 :UInt8;
    errorMessage @6 :Text;
    leader @2 :Int32;
    leaderEpoch @3 :Int32;
    isr @4 :List(Int32);
    partitionEpoch @5 :Int32;
  }
}
