// OffsetForLeaderEpoch (key 23), versions 2-4, flexible from 4: the end offset of a leader
// epoch on each partition, which a client asks after a leader change to find where its
// position may have been truncated (KIP-320).

#include "runtime/kafka/api_schemas.hpp"

namespace capstan::kafka {
namespace {

constexpr int64_t consumer_replica_id = -2;

constexpr field request_partition_fields[] = {
    f::int32("Partition", v(0)),
    f::int32("CurrentLeaderEpoch", v(2)).defaults_to(-1),
    f::int32("LeaderEpoch", v(0)),
};

constexpr field request_topic_fields[] = {
    f::string("Topic", v(0)),
    f::array("Partitions", v(0), request_partition_fields),
};

constexpr field request[] = {
    f::int32("ReplicaId", v(3)).defaults_to(consumer_replica_id),
    f::array("Topics", v(0), request_topic_fields),
};

constexpr field end_offset_fields[] = {
    f::int16("ErrorCode", v(0)),
    f::int32("Partition", v(0)),
    f::int32("LeaderEpoch", v(1)).defaults_to(-1),
    f::int64("EndOffset", v(0)).defaults_to(-1),
};

constexpr field response_topic_fields[] = {
    f::string("Topic", v(0)),
    f::array("Partitions", v(0), end_offset_fields),
};

constexpr field response[] = {
    f::int32("ThrottleTimeMs", v(2)),
    f::array("Topics", v(0), response_topic_fields),
};

} // namespace

const api_schema offset_for_leader_epoch_api{api_key::offset_for_leader_epoch,
                                             "OffsetForLeaderEpoch", v(2, 4), v(4), request,
                                             response};

} // namespace capstan::kafka
