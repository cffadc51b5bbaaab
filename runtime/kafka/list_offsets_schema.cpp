// ListOffsets (key 2), versions 1-5 (none flexible): the offset for a timestamp, or the
// earliest (-2) or latest (-1) offset, of partitions.

#include "runtime/kafka/api_schemas.hpp"

namespace capstan::kafka {
namespace {

constexpr field request_partition_fields[] = {
    f::int32("PartitionIndex", v(0)),
    f::int32("CurrentLeaderEpoch", v(4)).defaults_to(-1),
    f::int64("Timestamp", v(0)),
};

constexpr field request_topic_fields[] = {
    f::string("Name", v(0)),
    f::array("Partitions", v(0), request_partition_fields),
};

constexpr field request[] = {
    f::int32("ReplicaId", v(0)),
    f::int8("IsolationLevel", v(2)),
    f::array("Topics", v(0), request_topic_fields),
};

constexpr field response_partition_fields[] = {
    f::int32("PartitionIndex", v(0)),
    f::int16("ErrorCode", v(0)),
    f::int64("Timestamp", v(1)).defaults_to(-1),
    f::int64("Offset", v(1)).defaults_to(-1),
    f::int32("LeaderEpoch", v(4)).defaults_to(-1),
};

constexpr field response_topic_fields[] = {
    f::string("Name", v(0)),
    f::array("Partitions", v(0), response_partition_fields),
};

constexpr field response[] = {
    f::int32("ThrottleTimeMs", v(2)),
    f::array("Topics", v(0), response_topic_fields),
};

} // namespace

const api_schema list_offsets_api{api_key::list_offsets, "ListOffsets", v(1, 5), no_versions,
                                  request, response};

} // namespace capstan::kafka
