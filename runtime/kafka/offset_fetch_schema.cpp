// OffsetFetch (key 9), versions 1-7, flexible from 6: a group's committed offsets for some
// partitions, or for every partition it has committed (a null topic list, v2+).

#include "runtime/kafka/api_schemas.hpp"

namespace capstan::kafka {
namespace {

constexpr field request_topic_fields[] = {
    f::string("Name", v(0, 7)),
    f::array_of(field_type::int32, "PartitionIndexes", v(0, 7)),
};

constexpr field request[] = {
    f::string("GroupId", v(0, 7)),
    f::array("Topics", v(0, 7), request_topic_fields).nullable_in(v(2, 7)),
    f::boolean("RequireStable", v(7)),
};

constexpr field response_partition_fields[] = {
    f::int32("PartitionIndex", v(0, 7)),
    f::int64("CommittedOffset", v(0, 7)),
    f::int32("CommittedLeaderEpoch", v(5, 7)).defaults_to(-1),
    f::string("Metadata", v(0, 7)).nullable_in(v(0, 7)),
    f::int16("ErrorCode", v(0, 7)),
};

constexpr field response_topic_fields[] = {
    f::string("Name", v(0, 7)),
    f::array("Partitions", v(0, 7), response_partition_fields),
};

constexpr field response[] = {
    f::int32("ThrottleTimeMs", v(3)),
    f::array("Topics", v(0, 7), response_topic_fields),
    f::int16("ErrorCode", v(2, 7)),
};

} // namespace

const api_schema offset_fetch_api{api_key::offset_fetch, "OffsetFetch", v(1, 7), v(6), request,
                                  response};

} // namespace capstan::kafka
