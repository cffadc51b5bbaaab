// The offline replica actor: answers every request of the partition replica protocol with
// KAFKA_STORAGE_ERROR and the reason the partition is offline. close quits; its reply carries
// nothing the replica manager uses (it keeps the checkpointed offsets of an offline partition).

#include "actors/replica/offline_replica_actor.hpp"

#include <caf/all.hpp>

#include "runtime/actor/caf_error.hpp"

namespace capstan {

namespace {

struct offline_replica_state {
  static inline const char* name = "capstan.offline_replica";
  std::string reason;
};

using self_ptr = partition_replica_actor::stateful_pointer<offline_replica_state>;

partition_replica_actor::behavior_type offline_replica(self_ptr self, std::string reason) {
  self->state.reason = std::move(reason);
  auto refuse = [self] { return to_caf_error(make_error(errc::kafka_storage_error, self->state.reason)); };
  return {
    [refuse](produce_atom, const produce_request&) -> caf::result<produce_result> { return refuse(); },
    [refuse](fetch_atom, const fetch_request&) -> caf::result<fetch_result> { return refuse(); },
    [refuse](offsets_atom, timestamp_ms) -> caf::result<list_offsets_result> { return refuse(); },
    [refuse](info_atom) -> caf::result<log_info> { return refuse(); },
    [refuse](checkpoint_atom) -> caf::result<replica_checkpoint> { return refuse(); },
    [refuse](status_atom) -> caf::result<replica_status> { return refuse(); },
    [refuse](become_atom, const replica_role&) -> caf::result<bool> { return refuse(); },
    [](reconfig_atom, const replica_config&) {},
    [self](ffetch_atom, const follower_fetch_request&) {
      follower_fetch_result out;
      out.error = errc::kafka_storage_error;
      out.message = self->state.reason;
      return out;
    },
    [refuse](epochend_atom, leader_epoch, leader_epoch) -> caf::result<epoch_end> { return refuse(); },
    [refuse](position_atom) -> caf::result<follower_position> { return refuse(); },
    [refuse](ftruncate_atom, leader_epoch, epoch_end) -> caf::result<truncation_decision> {
      return refuse();
    },
    [refuse](replicate_atom, const replicate_request&) -> caf::result<offset> { return refuse(); },
    [refuse](restart_atom, leader_epoch, offset) -> caf::result<offset> { return refuse(); },
    [self](close_atom) -> replica_checkpoint {
      self->quit();
      return {};
    },
    [](tick_atom) {},
    [](isrcheck_atom) {},
  };
}

} // namespace

partition_replica_actor spawn_offline_replica(caf::actor_system& sys, std::string reason) {
  return sys.spawn(offline_replica, std::move(reason));
}

} // namespace capstan
