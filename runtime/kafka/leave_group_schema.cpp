// LeaveGroup (key 13), versions 0-4, flexible from 4: one member leaves (v0-2), or several
// identified by member id and group instance id (v3+).

#include "runtime/kafka/api_schemas.hpp"

namespace capstan::kafka {
namespace {

constexpr field member_identity_fields[] = {
    f::string("MemberId", v(3)),
    f::string("GroupInstanceId", v(3)).nullable_in(v(3)).defaults_to_null(),
};

constexpr field request[] = {
    f::string("GroupId", v(0)),
    f::string("MemberId", v(0, 2)),
    f::array("Members", v(3), member_identity_fields),
};

constexpr field member_response_fields[] = {
    f::string("MemberId", v(3)),
    f::string("GroupInstanceId", v(3)).nullable_in(v(3)),
    f::int16("ErrorCode", v(3)),
};

constexpr field response[] = {
    f::int32("ThrottleTimeMs", v(1)),
    f::int16("ErrorCode", v(0)),
    f::array("Members", v(3), member_response_fields),
};

} // namespace

const api_schema leave_group_api{api_key::leave_group, "LeaveGroup", v(0, 4), v(4), request,
                                 response};

} // namespace capstan::kafka
