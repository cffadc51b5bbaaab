#pragma once

// Raft messages to and from Cap'n Proto frames (schema/raft.capnp). Decoding is where a peer's
// bytes are checked: it never throws, and it refuses (CORRUPT_MESSAGE) anything the core must not
// see, such as entries that do not follow prev_log_index one by one or terms that go backwards.

#include "actors/controller/raft/raft_messages.hpp"
#include "runtime/messages/capnp_frame.hpp"
#include "runtime/result.hpp"

namespace capstan::raft {

capnp_frame encode(const message& m);

result<message> decode(const capnp_frame& frame);

} // namespace capstan::raft
