// JoinGroup (key 11), versions 0-7, flexible from 6: a member asks to join a group with the
// protocols it supports; the coordinator answers with the generation, the chosen protocol, the
// leader and, to the leader only, every member's metadata.

#include "runtime/kafka/api_schemas.hpp"

namespace capstan::kafka {
namespace {

constexpr field request_protocol_fields[] = {
    f::string("Name", v(0)),
    f::bytes("Metadata", v(0)),
};

constexpr field request[] = {
    f::string("GroupId", v(0)),
    f::int32("SessionTimeoutMs", v(0)),
    f::int32("RebalanceTimeoutMs", v(1)).defaults_to(-1),
    f::string("MemberId", v(0)),
    f::string("GroupInstanceId", v(5)).nullable_in(v(5)).defaults_to_null(),
    f::string("ProtocolType", v(0)),
    f::array("Protocols", v(0), request_protocol_fields),
};

constexpr field member_fields[] = {
    f::string("MemberId", v(0)),
    f::string("GroupInstanceId", v(5)).nullable_in(v(5)).defaults_to_null(),
    f::bytes("Metadata", v(0)),
};

constexpr field response[] = {
    f::int32("ThrottleTimeMs", v(2)),
    f::int16("ErrorCode", v(0)),
    f::int32("GenerationId", v(0)).defaults_to(-1),
    f::string("ProtocolType", v(7)).nullable_in(v(7)).defaults_to_null(),
    f::string("ProtocolName", v(0)).nullable_in(v(7)),
    f::string("Leader", v(0)),
    f::string("MemberId", v(0)),
    f::array("Members", v(0), member_fields),
};

} // namespace

const api_schema join_group_api{api_key::join_group, "JoinGroup", v(0, 7), v(6), request,
                                response};

} // namespace capstan::kafka
