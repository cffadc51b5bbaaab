#pragma once

// Checks of a voter change's inputs (addVoter, removeVoter; docs/controller.md, "Voter changes"):
// the gateway runs them before anything is sent, and the controller codec again on the frames a
// peer sends, so the quorum member only sees well-formed ids and endpoints.

#include <cstdint>
#include <string_view>

#include "runtime/result.hpp"

namespace capstan {

// INVALID_REQUEST unless `id` >= 0.
status validate_voter_id(int32_t id);

// INVALID_REQUEST unless `endpoint` is HOST:PORT (what --controller-quorum names after the '@':
// the voter's cluster listener) with a non-empty host, a port in [1, 65535], and at most
// raft::max_endpoint_bytes bytes.
status validate_voter_endpoint(std::string_view endpoint);

} // namespace capstan
