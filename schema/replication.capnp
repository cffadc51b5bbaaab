@0xa75414eb5cb1a652;
# Messages between brokers on the replication path (docs/protocol.md). Record bytes are padded
# batch sequences (docs/formats.md, "Alignment").

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("capstan::schema");

struct TopicPartition {
  topic @0 :Text;
  partition @1 :Int32;
}

# A follower's (or consumer's) pull; `replicaId` -1 for a consumer.
struct Fetch {
  replicaId @0 :Int32;
  maxWaitMs @1 :Int32;
  minBytes @2 :Int32;
  maxBytes @3 :Int32;
  partitions @4 :List(FetchPartition);

  struct FetchPartition {
    topicPartition @0 :TopicPartition;
    currentLeaderEpoch @1 :Int32;
    fetchOffset @2 :Int64;
    logStartOffset @3 :Int64;
    partitionMaxBytes @4 :Int32;
  }
}

struct FetchResponse {
  partitions @0 :List(PartitionData);

  struct PartitionData {
    topicPartition @0 :TopicPartition;
    errorCode @1 :UInt8;
    highWatermark @2 :Int64;
    logStartOffset @3 :Int64;
    records @4 :Data;
  }
}
