#pragma once

// Operations on voter sets (raft_types.hpp) and the bytes of a voter set entry.

#include <string>
#include <vector>

#include "actors/controller/raft/raft_types.hpp"
#include "runtime/result.hpp"

namespace capstan::raft {


// Limits on what a voter set entry may hold: far above any real quorum, low enough that a
// damaged or hostile entry cannot make a reader allocate much.
inline constexpr size_t max_voters = 255;
inline constexpr size_t max_endpoint_bytes = 255;

bool contains(const voter_set& s, node_id id);
// The set with `v` added (kept ascending). REQUIRES: !contains(s, v.id).
voter_set with_voter(voter_set s, voter v);
// The set without `id`. REQUIRES: contains(s, id).
voter_set without_voter(voter_set s, node_id id);
// Bootstrap voters: ids only.
voter_set bootstrap_voters(const std::vector<node_id>& ids);
std::vector<node_id> ids_of(const voter_set& s);

// The bytes of a voter set entry, and back. Layout (little-endian): version u8 (1) | count u16 |
// per voter: id i32 | directory id (16 bytes) | endpoint length u8 | endpoint.
// CORRUPT_MESSAGE when the bytes are not such a set: truncated, trailing bytes, an unknown
// version, no voter, ids not ascending or negative, or a limit passed.
// REQUIRES: at most max_voters voters, endpoints of at most max_endpoint_bytes.
bytes encode_voter_set(const voter_set& s);
result<voter_set> decode_voter_set(bytes_view b);

} // namespace capstan::raft
