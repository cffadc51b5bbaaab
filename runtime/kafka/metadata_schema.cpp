// Metadata (key 3), versions 0-9, flexible from 9: brokers, controller, and each topic's
// partitions with their leader and replicas. A null topic list (v1+) asks for every topic; v0
// says the same with an empty list.

#include "runtime/kafka/api_schemas.hpp"

namespace capstan::kafka {
namespace {

constexpr int64_t authorized_operations_unknown = -2147483648;

constexpr field request_topic_fields[] = {
    f::string("Name", v(0)),
};

constexpr field request[] = {
    f::array("Topics", v(0), request_topic_fields).nullable_in(v(1)),
    f::boolean("AllowAutoTopicCreation", v(4)).defaults_to(1),
    f::boolean("IncludeClusterAuthorizedOperations", v(8, 10)),
    f::boolean("IncludeTopicAuthorizedOperations", v(8)),
};

constexpr field broker_fields[] = {
    f::int32("NodeId", v(0)),
    f::string("Host", v(0)),
    f::int32("Port", v(0)),
    f::string("Rack", v(1)).nullable_in(v(1)).defaults_to_null(),
};

constexpr field partition_fields[] = {
    f::int16("ErrorCode", v(0)),
    f::int32("PartitionIndex", v(0)),
    f::int32("LeaderId", v(0)),
    f::int32("LeaderEpoch", v(7)).defaults_to(-1),
    f::array_of(field_type::int32, "ReplicaNodes", v(0)),
    f::array_of(field_type::int32, "IsrNodes", v(0)),
    f::array_of(field_type::int32, "OfflineReplicas", v(5)),
};

constexpr field topic_fields[] = {
    f::int16("ErrorCode", v(0)),
    f::string("Name", v(0)),
    f::boolean("IsInternal", v(1)),
    f::array("Partitions", v(0), partition_fields),
    f::int32("TopicAuthorizedOperations", v(8)).defaults_to(authorized_operations_unknown),
};

constexpr field response[] = {
    f::int32("ThrottleTimeMs", v(3)),
    f::array("Brokers", v(0), broker_fields),
    f::string("ClusterId", v(2)).nullable_in(v(2)).defaults_to_null(),
    f::int32("ControllerId", v(1)).defaults_to(-1),
    f::array("Topics", v(0), topic_fields),
    f::int32("ClusterAuthorizedOperations", v(8, 10)).defaults_to(authorized_operations_unknown),
};

} // namespace

const api_schema metadata_api{api_key::metadata, "Metadata", v(0, 9), v(9), request, response};

} // namespace capstan::kafka
