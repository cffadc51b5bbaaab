#pragma once

// A Kafka response as the listener sends it: size prefix, response header, body.

#include "runtime/kafka/message_header.hpp"
#include "runtime/types.hpp"

namespace capstan {

// The whole frame of `body` answering `req`, an `api` request. A body the description cannot
// encode (a bug, not a client's doing) throws a kj exception, which ends the connection.
bytes response_frame(const kafka::api_schema& api, const kafka::request& req,
                     const kafka::struct_value& body);

// An empty element of the struct array `name` of `parent`, to fill in.
kafka::struct_value element_of(const kafka::struct_value& parent, std::string_view name);

} // namespace capstan
