#pragma once

// The records of the controller's Raft files to and from bytes (layouts: raft_storage_format.hpp,
// docs/controller.md "On disk"). Pure functions: raft_storage does the I/O, and tests and the
// controller simulation damage the bytes in between. Decoding never throws: a record that is cut
// short, fails its CRC or holds what its format does not allow is CORRUPT_MESSAGE, saying why.

#include <string>
#include <vector>

#include "actors/controller/raft/raft_types.hpp"
#include "runtime/result.hpp"

namespace capstan::raft {

// What a Raft directory is: whose, of which quorum, and which incarnation of that voter's stored
// state (docs/controller.md, "Quorum identity").
struct directory_identity {
  std::string cluster_id;
  node_id node{0};
  directory_id directory{};
  // The voter set the directory was made in, ascending. Voters never change (no membership
  // changes), so a node started with another --controller-quorum is refused.
  std::vector<node_id> voters{};

  bool operator==(const directory_identity&) const = default;
};

bytes encode_identity(const directory_identity& id);
result<directory_identity> decode_identity(bytes_view b);

bytes encode_hard_state(const hard_state& hs);
result<hard_state> decode_hard_state(bytes_view b);
// True iff `b` is a whole hard state of format version 1 (24 bytes, its CRC right), as a capstan
// before the quorum identity wrote: such a directory is refused, never taken for a lost one.
bool is_version_one_hard_state(bytes_view b);

bytes encode_snapshot(const snapshot& s);
result<snapshot> decode_snapshot(bytes_view b);

// Appends the frame of `e` to `out`; `append_first` is the index of the first entry of the same
// append (the same write and fsync).
void put_frame(bytes& out, const entry& e, log_index append_first);

struct log_frame {
  entry e;
  log_index append_first;
  uint64_t size = 0; // header and data
};

// The frame at the start of `b` if it is whole, passes its CRC and holds non-zero term, index
// and append_first <= index.
result<log_frame> read_frame(bytes_view b);

} // namespace capstan::raft
