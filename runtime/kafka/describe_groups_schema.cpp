// DescribeGroups (key 15), versions 0-5, flexible from 5: each group's state, protocol and
// members with their metadata and assignment.

#include "runtime/kafka/api_schemas.hpp"

namespace capstan::kafka {
namespace {

constexpr int64_t authorized_operations_unknown = -2147483648;

constexpr field request[] = {
    f::array_of(field_type::string, "Groups", v(0)),
    f::boolean("IncludeAuthorizedOperations", v(3)),
};

constexpr field member_fields[] = {
    f::string("MemberId", v(0)),
    f::string("GroupInstanceId", v(4)).nullable_in(v(4)).defaults_to_null(),
    f::string("ClientId", v(0)),
    f::string("ClientHost", v(0)),
    f::bytes("MemberMetadata", v(0)),
    f::bytes("MemberAssignment", v(0)),
};

constexpr field group_fields[] = {
    f::int16("ErrorCode", v(0)),
    f::string("GroupId", v(0)),
    f::string("GroupState", v(0)),
    f::string("ProtocolType", v(0)),
    f::string("ProtocolData", v(0)),
    f::array("Members", v(0), member_fields),
    f::int32("AuthorizedOperations", v(3)).defaults_to(authorized_operations_unknown),
};

constexpr field response[] = {
    f::int32("ThrottleTimeMs", v(1)),
    f::array("Groups", v(0), group_fields),
};

} // namespace

const api_schema describe_groups_api{api_key::describe_groups, "DescribeGroups", v(0, 5), v(5),
                                     request, response};

} // namespace capstan::kafka
