// SyncGroup (key 14), versions 0-5, flexible from 4: after a join, the leader sends every
// member's assignment and each member receives its own.

#include "runtime/kafka/api_schemas.hpp"

namespace capstan::kafka {
namespace {

constexpr field assignment_fields[] = {
    f::string("MemberId", v(0)),
    f::bytes("Assignment", v(0)),
};

constexpr field request[] = {
    f::string("GroupId", v(0)),
    f::int32("GenerationId", v(0)),
    f::string("MemberId", v(0)),
    f::string("GroupInstanceId", v(3)).nullable_in(v(3)).defaults_to_null(),
    f::string("ProtocolType", v(5)).nullable_in(v(5)).defaults_to_null(),
    f::string("ProtocolName", v(5)).nullable_in(v(5)).defaults_to_null(),
    f::array("Assignments", v(0), assignment_fields),
};

constexpr field response[] = {
    f::int32("ThrottleTimeMs", v(1)),
    f::int16("ErrorCode", v(0)),
    f::string("ProtocolType", v(5)).nullable_in(v(5)).defaults_to_null(),
    f::string("ProtocolName", v(5)).nullable_in(v(5)).defaults_to_null(),
    f::bytes("Assignment", v(0)),
};

} // namespace

const api_schema sync_group_api{api_key::sync_group, "SyncGroup", v(0, 5), v(4), request,
                                response};

} // namespace capstan::kafka
