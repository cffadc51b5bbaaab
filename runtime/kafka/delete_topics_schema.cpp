// DeleteTopics (key 20), versions 1-6, flexible from 4: topics by name (v1-5), or by name or
// topic id (v6), with a result per topic.

#include "runtime/kafka/api_schemas.hpp"

namespace capstan::kafka {
namespace {

constexpr field topic_state_fields[] = {
    f::string("Name", v(6)).nullable_in(v(6)).defaults_to_null(),
    f::uuid("TopicId", v(6)),
};

constexpr field request[] = {
    f::array("Topics", v(6), topic_state_fields),
    f::array_of(field_type::string, "TopicNames", v(0, 5)),
    f::int32("TimeoutMs", v(0)),
};

constexpr field result_fields[] = {
    f::string("Name", v(0)).nullable_in(v(6)),
    f::uuid("TopicId", v(6)),
    f::int16("ErrorCode", v(0)),
    f::string("ErrorMessage", v(5)).nullable_in(v(5)).defaults_to_null(),
};

constexpr field response[] = {
    f::int32("ThrottleTimeMs", v(1)),
    f::array("Responses", v(0), result_fields),
};

} // namespace

const api_schema delete_topics_api{api_key::delete_topics, "DeleteTopics", v(1, 6), v(4),
                                   request, response};

} // namespace capstan::kafka
