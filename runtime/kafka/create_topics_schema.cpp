// CreateTopics (key 19), versions 2-7, flexible from 5: topics with a partition count and
// replication factor (-1: the broker's default, v4+) or explicit replica assignments, and
// configs. v2 is the first version that answers with a throttle time; 5+ answers with the
// topic's resulting configs.

#include "runtime/kafka/api_schemas.hpp"

namespace capstan::kafka {
namespace {

constexpr field assignment_fields[] = {
    f::int32("PartitionIndex", v(0)),
    f::array_of(field_type::int32, "BrokerIds", v(0)),
};

constexpr field request_config_fields[] = {
    f::string("Name", v(0)),
    f::string("Value", v(0)).nullable_in(v(0)),
};

constexpr field creatable_topic_fields[] = {
    f::string("Name", v(0)),
    f::int32("NumPartitions", v(0)),
    f::int16("ReplicationFactor", v(0)),
    f::array("Assignments", v(0), assignment_fields),
    f::array("Configs", v(0), request_config_fields),
};

constexpr field request[] = {
    f::array("Topics", v(0), creatable_topic_fields),
    f::int32("timeoutMs", v(0)).defaults_to(60000),
    f::boolean("validateOnly", v(1)),
};

constexpr field result_config_fields[] = {
    f::string("Name", v(5)),
    f::string("Value", v(5)).nullable_in(v(5)),
    f::boolean("ReadOnly", v(5)),
    f::int8("ConfigSource", v(5)).defaults_to(-1),
    f::boolean("IsSensitive", v(5)),
};

constexpr field topic_result_fields[] = {
    f::string("Name", v(0)),
    f::uuid("TopicId", v(7)),
    f::int16("ErrorCode", v(0)),
    f::string("ErrorMessage", v(1)).nullable_in(v(0)),
    f::int16("TopicConfigErrorCode", v(5)).tagged(0, v(5)),
    f::int32("NumPartitions", v(5)).defaults_to(-1),
    f::int16("ReplicationFactor", v(5)).defaults_to(-1),
    f::array("Configs", v(5), result_config_fields).nullable_in(v(5)),
};

constexpr field response[] = {
    f::int32("ThrottleTimeMs", v(2)),
    f::array("Topics", v(0), topic_result_fields),
};

} // namespace

const api_schema create_topics_api{api_key::create_topics, "CreateTopics", v(2, 7), v(5),
                                   request, response};

} // namespace capstan::kafka
