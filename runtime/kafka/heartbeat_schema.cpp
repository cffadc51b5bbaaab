// Heartbeat (key 12), versions 0-4, flexible from 4: a member says it is alive in its
// generation; the answer says whether the group is rebalancing.

#include "runtime/kafka/api_schemas.hpp"

namespace capstan::kafka {
namespace {

constexpr field request[] = {
    f::string("GroupId", v(0)),
    f::int32("GenerationId", v(0)),
    f::string("MemberId", v(0)),
    f::string("GroupInstanceId", v(3)).nullable_in(v(3)).defaults_to_null(),
};

constexpr field response[] = {
    f::int32("ThrottleTimeMs", v(1)),
    f::int16("ErrorCode", v(0)),
};

} // namespace

const api_schema heartbeat_api{api_key::heartbeat, "Heartbeat", v(0, 4), v(4), request,
                               response};

} // namespace capstan::kafka
