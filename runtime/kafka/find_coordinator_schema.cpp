// FindCoordinator (key 10), versions 0-3, flexible from 3: the node that coordinates a group
// (KeyType 0) or a transactional id (KeyType 1, v1+).

#include "runtime/kafka/api_schemas.hpp"

namespace capstan::kafka {
namespace {

constexpr field request[] = {
    f::string("Key", v(0, 3)),
    f::int8("KeyType", v(1)),
};

constexpr field response[] = {
    f::int32("ThrottleTimeMs", v(1)),
    f::int16("ErrorCode", v(0, 3)),
    f::string("ErrorMessage", v(1, 3)).nullable_in(v(1, 3)),
    f::int32("NodeId", v(0, 3)),
    f::string("Host", v(0, 3)),
    f::int32("Port", v(0, 3)),
};

} // namespace

const api_schema find_coordinator_api{api_key::find_coordinator, "FindCoordinator", v(0, 3),
                                      v(3), request, response};

} // namespace capstan::kafka
