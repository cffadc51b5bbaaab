// DeleteGroups (key 42), versions 0-2, flexible from 2: deletes empty groups and their
// committed offsets, with a result per group.

#include "runtime/kafka/api_schemas.hpp"

namespace capstan::kafka {
namespace {

constexpr field request[] = {
    f::array_of(field_type::string, "GroupsNames", v(0)),
};

constexpr field result_fields[] = {
    f::string("GroupId", v(0)),
    f::int16("ErrorCode", v(0)),
};

constexpr field response[] = {
    f::int32("ThrottleTimeMs", v(0)),
    f::array("Results", v(0), result_fields),
};

} // namespace

const api_schema delete_groups_api{api_key::delete_groups, "DeleteGroups", v(0, 2), v(2),
                                   request, response};

} // namespace capstan::kafka
