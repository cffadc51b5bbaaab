// CreatePartitions (key 37), versions 0-3, flexible from 2: raises topics' partition counts,
// optionally with the replicas of each new partition.

#include "runtime/kafka/api_schemas.hpp"

namespace capstan::kafka {
namespace {

constexpr field assignment_fields[] = {
    f::array_of(field_type::int32, "BrokerIds", v(0)),
};

constexpr field topic_fields[] = {
    f::string("Name", v(0)),
    f::int32("Count", v(0)),
    f::array("Assignments", v(0), assignment_fields).nullable_in(v(0)),
};

constexpr field request[] = {
    f::array("Topics", v(0), topic_fields),
    f::int32("TimeoutMs", v(0)),
    f::boolean("ValidateOnly", v(0)),
};

constexpr field result_fields[] = {
    f::string("Name", v(0)),
    f::int16("ErrorCode", v(0)),
    f::string("ErrorMessage", v(0)).nullable_in(v(0)).defaults_to_null(),
};

constexpr field response[] = {
    f::int32("ThrottleTimeMs", v(0)),
    f::array("Results", v(0), result_fields),
};

} // namespace

const api_schema create_partitions_api{api_key::create_partitions, "CreatePartitions", v(0, 3),
                                       v(2), request, response};

} // namespace capstan::kafka
