// OffsetCommit (key 8), versions 2-8, flexible from 8: a group member commits offsets of
// partitions, with optional metadata, in its generation.

#include "runtime/kafka/api_schemas.hpp"

namespace capstan::kafka {
namespace {

constexpr field request_partition_fields[] = {
    f::int32("PartitionIndex", v(0)),
    f::int64("CommittedOffset", v(0)),
    f::int32("CommittedLeaderEpoch", v(6)).defaults_to(-1),
    f::string("CommittedMetadata", v(0)).nullable_in(v(0)),
};

constexpr field request_topic_fields[] = {
    f::string("Name", v(0)),
    f::array("Partitions", v(0), request_partition_fields),
};

constexpr field request[] = {
    f::string("GroupId", v(0)),
    f::int32("GenerationIdOrMemberEpoch", v(1)).defaults_to(-1),
    f::string("MemberId", v(1)),
    f::string("GroupInstanceId", v(7)).nullable_in(v(7)).defaults_to_null(),
    f::int64("RetentionTimeMs", v(2, 4)).defaults_to(-1),
    f::array("Topics", v(0), request_topic_fields),
};

constexpr field response_partition_fields[] = {
    f::int32("PartitionIndex", v(0)),
    f::int16("ErrorCode", v(0)),
};

constexpr field response_topic_fields[] = {
    f::string("Name", v(0)),
    f::array("Partitions", v(0), response_partition_fields),
};

constexpr field response[] = {
    f::int32("ThrottleTimeMs", v(3)),
    f::array("Topics", v(0), response_topic_fields),
};

} // namespace

const api_schema offset_commit_api{api_key::offset_commit, "OffsetCommit", v(2, 8), v(8),
                                   request, response};

} // namespace capstan::kafka
