// Fetch (key 1), versions 4-11 (none flexible): record batches from partitions at offsets, for
// consumers (ReplicaId -1) and followers. v7 adds fetch sessions (KIP-227), v11 the rack of a
// consumer that may read from a follower (KIP-392).

#include "runtime/kafka/api_schemas.hpp"

namespace capstan::kafka {
namespace {

constexpr field fetch_partition_fields[] = {
    f::int32("Partition", v(0)),
    f::int32("CurrentLeaderEpoch", v(9)).defaults_to(-1),
    f::int64("FetchOffset", v(0)),
    f::int64("LogStartOffset", v(5)).defaults_to(-1),
    f::int32("PartitionMaxBytes", v(0)),
};

constexpr field fetch_topic_fields[] = {
    f::string("Topic", v(0)),
    f::array("Partitions", v(0), fetch_partition_fields),
};

constexpr field forgotten_topic_fields[] = {
    f::string("Topic", v(7)),
    f::array_of(field_type::int32, "Partitions", v(7)),
};

constexpr field request[] = {
    f::int32("ReplicaId", v(0)).defaults_to(-1),
    f::int32("MaxWaitMs", v(0)),
    f::int32("MinBytes", v(0)),
    f::int32("MaxBytes", v(3)).defaults_to(0x7fffffff),
    f::int8("IsolationLevel", v(4)),
    f::int32("SessionId", v(7)),
    f::int32("SessionEpoch", v(7)).defaults_to(-1),
    f::array("Topics", v(0), fetch_topic_fields),
    f::array("ForgottenTopicsData", v(7), forgotten_topic_fields),
    f::string("RackId", v(11)),
};

constexpr field aborted_transaction_fields[] = {
    f::int64("ProducerId", v(4)),
    f::int64("FirstOffset", v(4)),
};

constexpr field partition_data_fields[] = {
    f::int32("PartitionIndex", v(0)),
    f::int16("ErrorCode", v(0)),
    f::int64("HighWatermark", v(0)),
    f::int64("LastStableOffset", v(4)).defaults_to(-1),
    f::int64("LogStartOffset", v(5)).defaults_to(-1),
    f::array("AbortedTransactions", v(4), aborted_transaction_fields).nullable_in(v(4)),
    f::int32("PreferredReadReplica", v(11)).defaults_to(-1),
    f::records("Records", v(0)).nullable_in(v(0)),
};

constexpr field topic_response_fields[] = {
    f::string("Topic", v(0)),
    f::array("Partitions", v(0), partition_data_fields),
};

constexpr field response[] = {
    f::int32("ThrottleTimeMs", v(1)),
    f::int16("ErrorCode", v(7)),
    f::int32("SessionId", v(7)),
    f::array("Responses", v(0), topic_response_fields),
};

} // namespace

const api_schema fetch_api{api_key::fetch, "Fetch", v(4, 11), no_versions, request, response};

} // namespace capstan::kafka
