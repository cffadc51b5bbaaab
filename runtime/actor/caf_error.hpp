#pragma once

// capstan errors as caf::error and back (docs/messages.md, "Errors"). A capstan error crosses an
// actor boundary as a caf::error of category "capstan" whose code is the errc value and whose
// context is the message text (one std::string, omitted when empty); both survive a remote send.
// A CAF error of another category maps to the nearest errc, keeping CAF's rendering as the text.

#include <cstdint>
#include <string>

#include <caf/atom.hpp>
#include <caf/error.hpp>
#include <caf/fwd.hpp>

#include "runtime/errc.hpp"
#include "runtime/result.hpp"

namespace capstan {

inline constexpr caf::atom_value caf_error_category = caf::atom("capstan");

caf::error to_caf_error(const error& e);

// Found by CAF through ADL, so an errc converts to caf::error implicitly: a handler returning
// caf::result<T> may `return errc::not_leader_or_follower;`.
caf::error make_error(errc code);

// Inverse of to_caf_error for category "capstan"; a default (empty) caf::error gives errc::none.
// Other categories:
//   - the request timed out, or its receiver or the route to it is gone (CAF "system" codes
//     request_timeout, connection_timeout, request_receiver_down, no_route_to_receiving_node,
//     cannot_connect_to_node, remote_lookup_failed, disconnect_during_handshake, socket
//     disconnects, and any "exit" reason): REQUEST_TIMED_OUT, Kafka's retriable "outcome
//     unknown";
//   - anything else (unexpected_message, serialization failures, runtime errors, unknown
//     categories): generic_caf_errc.
error from_caf_error(const caf::error& e);

// The errc for CAF failures that are neither a timeout nor a lost peer.
inline constexpr errc generic_caf_errc = errc::unknown_server_error;

// Renders a "capstan" error as "KAFKA_NAME: text"; registered with the actor system config
// (runtime/actor/actor_system_setup.hpp) so CAF's logs and to_string show Kafka's names.
std::string render_caf_error(uint8_t code, caf::atom_value category, const caf::message& context);

} // namespace capstan
