#include "actors/controller/raft/quorum_identity.hpp"

#include <algorithm>

#include "actors/controller/metadata/metadata_types.hpp"
#include "runtime/cluster/metadata_store.hpp"

namespace capstan::raft {

std::vector<node_id> sorted_voters(std::vector<node_id> voters) {
  std::sort(voters.begin(), voters.end());
  return voters;
}

status check_frame(const message& m, const quorum_identity& theirs, const quorum_identity& mine,
                   node_id self, const directory_id& own) {
  const auto from = "node " + std::to_string(m.from.value());
  if (theirs.cluster_id != mine.cluster_id)
    return make_error(errc::inconsistent_cluster_id,
                      "raft message from " + from + " of cluster '" + theirs.cluster_id +
                          "', but this is cluster '" + mine.cluster_id + "'");
  if (theirs.voters != mine.voters)
    return make_error(errc::inconsistent_voter_set,
                      "raft message from " + from + " whose controller quorum is voters " +
                          controller::to_string(theirs.voters) + ", but this node's is " +
                          controller::to_string(mine.voters));
  if (m.to != self)
    return make_error(errc::inconsistent_voter_set,
                      "raft message from " + from + " for node " + std::to_string(m.to.value()) +
                          " reached node " + std::to_string(self.value()));
  if (m.to_directory != directory_id{} && m.to_directory != own)
    return make_error(errc::inconsistent_voter_set,
                      "raft message from " + from + " for directory " + to_hex(m.to_directory) +
                          " of node " + std::to_string(self.value()) + ", whose directory is now " +
                          to_hex(own) + " (its stored state was lost or damaged since)");
  return {};
}

} // namespace capstan::raft
