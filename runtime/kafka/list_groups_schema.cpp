// ListGroups (key 16), versions 0-4, flexible from 3: the groups a node coordinates, filtered
// by state from v4.

#include "runtime/kafka/api_schemas.hpp"

namespace capstan::kafka {
namespace {

constexpr field request[] = {
    f::array_of(field_type::string, "StatesFilter", v(4)),
};

constexpr field listed_group_fields[] = {
    f::string("GroupId", v(0)),
    f::string("ProtocolType", v(0)),
    f::string("GroupState", v(4)),
};

constexpr field response[] = {
    f::int32("ThrottleTimeMs", v(1)),
    f::int16("ErrorCode", v(0)),
    f::array("Groups", v(0), listed_group_fields),
};

} // namespace

const api_schema list_groups_api{api_key::list_groups, "ListGroups", v(0, 4), v(3), request,
                                 response};

} // namespace capstan::kafka
