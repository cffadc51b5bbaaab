#pragma once

// How a failed call reads to the caller: a kj exception (a lost or refused connection) or a
// broker's errorCode as capstan's error, for every call of the client's RPC files. Internal to
// runtime/client.

#include <cstdint>

#include <capnp/blob.h>
#include <kj/exception.h>

#include "runtime/result.hpp"

namespace capstan::client {

error from_exception(const kj::Exception& e);

// A response's errorCode as the broker named it; a code this client does not know (a newer
// broker's) is UNKNOWN_SERVER_ERROR with the number kept in the text.
error from_code(uint8_t code, capnp::Text::Reader message);

} // namespace capstan::client
