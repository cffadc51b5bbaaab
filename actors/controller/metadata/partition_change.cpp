#include "actors/controller/metadata/partition_change.hpp"

namespace capstan::controller {

std::optional<partition_change_record> make_partition_change(const topic_id& topic,
                                                             partition_id partition,
                                                             const partition_state& current,
                                                             node_id leader,
                                                             const std::vector<node_id>& isr) {
  const bool new_leader = leader != current.leader;
  const bool new_isr = isr != current.isr;
  if (!new_leader && !new_isr) return std::nullopt;
  partition_change_record out;
  out.topic = topic;
  out.partition = partition;
  if (new_leader) out.leader = leader;
  if (new_isr) out.isr = isr;
  out.leader_epoch = new_leader ? next(current.leader_epoch) : current.leader_epoch;
  out.partition_epoch = next(current.partition_epoch);
  return out;
}

} // namespace capstan::controller
