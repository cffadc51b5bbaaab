@0xe37ab81153a5f00e;
# The controller's metadata log (docs/controller.md, "Metadata records and decisions"): KRaft's
# record types, reduced to what capstan needs. One Raft entry holds one MetadataBatch, applied
# all or nothing; a Raft snapshot holds one MetadataSnapshot. The codec
# (actors/controller/metadata/metadata_record_codec) checks every field's range before the image
# sees a record; the image (metadata_image) checks each record against what it holds.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("capstan::schema");

struct MetadataRecord {
  union {
    registerBroker @0 :RegisterBroker;
    fenceBroker @1 :BrokerFencing;
    unfenceBroker @2 :BrokerFencing;
    topic @3 :Topic;
    partition @4 :Partition;
    partitionChange @5 :PartitionChange;
    removeTopic @6 :RemoveTopic;
    topicConfig @7 :TopicConfig;
    producerIds @8 :ProducerIds;
    unregisterBroker @9 :BrokerFencing;
  }

  # A node's registration; it starts fenced (KRaft's RegisterBrokerRecord).
  struct RegisterBroker {
    nodeId @0 :Int32;
    incarnationId @1 :Data;          # 16 bytes, new at every process start
    clusterId @2 :Text;
    clientHost @3 :Text;
    clientPort @4 :UInt16;
    clusterHost @5 :Text;
    clusterPort @6 :UInt16;
    rack @7 :Text;                   # empty: no rack
    brokerEpoch @8 :Int64;           # above every earlier epoch of this node
    # The process started on a data dir that named no earlier incarnation (a new machine or a
    # lost disk under this id): each partition it is a replica of, outside the ISR, marks it wiped.
    newDataDir @9 :Bool;
    # The node's advertised Kafka listener; port 0: none (and in records older than the field).
    kafkaHost @10 :Text;
    kafkaPort @11 :UInt16;
  }

  # FenceBroker, UnfenceBroker and UnregisterBroker name the registration they change by its
  # epoch. UnregisterBroker removes a fenced node gone for good (KRaft's UnregisterBrokerRecord).
  struct BrokerFencing {
    nodeId @0 :Int32;
    brokerEpoch @1 :Int64;
  }

  struct Topic {
    name @0 :Text;
    topicId @1 :Data;                # 16 bytes, not all zero
    internal @2 :Bool;
    configs @3 :List(Config);        # the topic's overrides
  }

  struct Config {
    name @0 :Text;
    value @1 :Text;
  }

  # A new partition: the next one of its topic, numbered densely from 0.
  struct Partition {
    topicId @0 :Data;
    partition @1 :Int32;
    replicas @2 :List(Int32);        # the first is the preferred leader
    isr @3 :List(Int32);
    leader @4 :Int32;                # -1: none (offline)
    leaderEpoch @5 :Int32;
    partitionEpoch @6 :Int32;
    addingReplicas @7 :List(Int32);  # a reassignment's (KIP-455); both empty: none runs
    removingReplicas @8 :List(Int32);
    # Replicas whose node came back on a new data dir since they were last in the ISR: their logs
    # may lack acknowledged records, so last-replica-standing recovery neither counts nor elects
    # them. A replica leaves the list when it enters the ISR or the replica set.
    wipedReplicas @9 :List(Int32);
  }

  # A change to an existing partition and the epochs it results in: the partition epoch is one
  # above the current one; the leader epoch too when the leader changes, else the current one.
  struct PartitionChange {
    topicId @0 :Data;
    partition @1 :Int32;
    hasLeader @2 :Bool;
    leader @3 :Int32;
    hasIsr @4 :Bool;
    isr @5 :List(Int32);
    hasReplicas @6 :Bool;
    replicas @7 :List(Int32);
    leaderEpoch @8 :Int32;
    partitionEpoch @9 :Int32;
    # A reassignment starts, moves on, ends or is cancelled: the adding and removing replicas
    # (within `replicas`) replace the current ones; both empty: none runs any more.
    hasReassignment @10 :Bool;
    addingReplicas @11 :List(Int32);
    removingReplicas @12 :List(Int32);
  }

  struct RemoveTopic {
    topicId @0 :Data;
  }

  # Replaces the topic's overrides by these.
  struct TopicConfig {
    topicId @0 :Data;
    configs @1 :List(Config);
  }

  # Producer ids [firstId, firstId + size) are handed out; firstId is the image's next id.
  struct ProducerIds {
    firstId @0 :Int64;
    size @1 :Int64;
  }
}

# The payload of one Raft entry.
struct MetadataBatch {
  records @0 :List(MetadataRecord);
}

# The payload of a Raft snapshot: records that rebuild the image from an empty one.
struct MetadataSnapshot {
  version @0 :UInt32;                # 1
  clusterId @1 :Text;
  records @2 :List(MetadataRecord);
  # The highest broker epoch any registration had, also of nodes unregistered since: a node that
  # registers again gets a higher one. 0 in snapshots written before the field (their records
  # hold every registration there was).
  maxBrokerEpoch @3 :Int64;
}
