#pragma once

// Helpers the Cap'n Proto service (capstan_service*.cpp) writes its results with.

#include <cstdint>
#include <string>

#include <capnp/message.h>
#include <kj/exception.h>

#include "actors/gateway/service_context.hpp"
#include "runtime/result.hpp"

namespace capstan {

// First segment of every response message: room for the error fields and a zero-copy record
// reference. Without a hint Cap'n Proto starts each response with 8 KiB, which is what an answer
// costs while it waits to be sent; a larger response grows into further segments.
inline constexpr capnp::MessageSize results_size_hint{64, 0};

// Fails a call whose response has no error field: the client gets a Cap'n Proto exception for
// this call; the connection stays up.
[[noreturn]] inline void fail_call(const std::string& why) {
  kj::throwFatalException(
      kj::Exception(kj::Exception::Type::FAILED, __FILE__, __LINE__, kj::str(why.c_str())));
}

// Writes `e` into a results struct with errorCode/errorMessage. Counting is the handler's.
template <class Results>
void set_error(Results results, const error& e) {
  results.setErrorCode(static_cast<uint8_t>(e.code));
  results.setErrorMessage(e.message);
}

// Counts a call refused before its params were read (a list too long to copy, checked before a
// handler sees it) as `method`'s request and error.
inline void count_unread(const service_context& ctx, const char* method, const error& e) {
  ctx.metrics.count_request(method);
  ctx.metrics.count_error(method, e.code);
}

} // namespace capstan
