#pragma once

// Raft messages to and from Cap'n Proto frames (schema/raft.capnp). Decoding is where a peer's
// bytes are checked: it never throws, and it refuses (CORRUPT_MESSAGE) anything the core must not
// see, such as entries that do not follow prev_log_index one by one or terms that go backwards.
// Whether a well-formed frame is of this quorum and for this voter is check_frame's to say
// (quorum_identity.hpp).

#include "actors/controller/raft/quorum_identity.hpp"
#include "actors/controller/raft/raft_messages.hpp"
#include "runtime/messages/capnp_frame.hpp"
#include "runtime/result.hpp"

namespace capstan::raft {

// A decoded frame: the message and the quorum its sender belongs to.
struct received_frame {
  message msg;
  quorum_identity quorum;
};

// REQUIRES: quorum.voters ascending (sorted_voters).
capnp_frame encode(const message& m, const quorum_identity& quorum);

result<received_frame> decode(const capnp_frame& frame);

} // namespace capstan::raft
