#pragma once

// The messages of the partition log actor and its typed interface (its I/O worker's are in
// actors/log/io_worker_actor.hpp). These actors are local to a node: buffers and slices travel
// by shared pointer and are never serialized (the replication path turns Cap'n Proto frames into
// them on arrival).

#include <memory>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/log/log_requests.hpp"
#include "runtime/storage/leader_epoch_cache.hpp"
#include "runtime/storage/log_config.hpp"
#include "runtime/storage/log_policy.hpp"
#include "runtime/storage/log_slice.hpp"
#include "runtime/types.hpp"

namespace capstan {

using append_atom = caf::atom_constant<caf::atom("append")>;
using read_atom = caf::atom_constant<caf::atom("read")>;
using truncate_atom = caf::atom_constant<caf::atom("truncate")>;
using flush_atom = caf::atom_constant<caf::atom("flush")>;
using seal_atom = caf::atom_constant<caf::atom("seal")>;
using delete_atom = caf::atom_constant<caf::atom("delete")>;
using close_atom = caf::atom_constant<caf::atom("close")>;
using time_atom = caf::atom_constant<caf::atom("time")>;
using retain_atom = caf::atom_constant<caf::atom("retain")>;
using compact_atom = caf::atom_constant<caf::atom("compact")>;
using info_atom = caf::atom_constant<caf::atom("info")>;
using tick_atom = caf::atom_constant<caf::atom("tick")>;
using epoch_atom = caf::atom_constant<caf::atom("epoch")>;
using newepoch_atom = caf::atom_constant<caf::atom("newepoch")>;
using reset_atom = caf::atom_constant<caf::atom("reset")>;
using reconfig_atom = caf::atom_constant<caf::atom("reconfig")>;
inline constexpr append_atom append_atom_v{};
inline constexpr read_atom read_atom_v{};
inline constexpr truncate_atom truncate_atom_v{};
inline constexpr flush_atom flush_atom_v{};
inline constexpr seal_atom seal_atom_v{};
inline constexpr delete_atom delete_atom_v{};
inline constexpr close_atom close_atom_v{};
inline constexpr time_atom time_atom_v{};
inline constexpr retain_atom retain_atom_v{};
inline constexpr compact_atom compact_atom_v{};
inline constexpr info_atom info_atom_v{};
inline constexpr tick_atom tick_atom_v{};
inline constexpr epoch_atom epoch_atom_v{};
inline constexpr newepoch_atom newepoch_atom_v{};
inline constexpr reset_atom reset_atom_v{};
inline constexpr reconfig_atom reconfig_atom_v{};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, append_result& x) {
  return f(caf::meta::type_name("append_result"), x.first, x.last, x.log_start, x.record_count,
           x.duplicate);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, read_request& x) {
  return f(caf::meta::type_name("read_request"), x.from, x.max_bytes, x.upto);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, log_info& x) {
  return f(caf::meta::type_name("log_info"), x.log_start, x.log_end, x.recovery_point,
           x.size_bytes, x.segment_count, x.cleaned_upto, x.latest_epoch, x.last_written_epoch);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, epoch_end& x) {
  return f(caf::meta::type_name("epoch_end"), x.epoch, x.end);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, compaction_stats& x) {
  return f(caf::meta::type_name("compaction_stats"), x.segments_cleaned, x.records_removed,
           x.bytes_before, x.bytes_after);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, segment_meta& x) {
  return f(caf::meta::type_name("segment_meta"), x.base, x.next, x.size_bytes, x.max_timestamp,
           x.created_ms);
}

// One partition's log (actors/log/partition_log_actor.cpp).
using partition_log_actor = caf::typed_actor<
  caf::replies_to<append_atom, append_request>::with<append_result>,
  caf::replies_to<read_atom, read_request>::with<log_slice>,
  // First offset whose record timestamp >= the given one; -1 if none.
  caf::replies_to<time_atom, timestamp_ms>::with<int64_t>,
  // Drops every batch with an offset >= the given one (and the epochs starting there); replies
  // the new log end.
  caf::replies_to<truncate_atom, offset>::with<offset>,
  // Empties the log and restarts it at the given offset (Kafka's truncateFullyAndStartAt, for a
  // follower below its leader's log start); replies the new log end.
  caf::replies_to<reset_atom, offset>::with<offset>,
  // The leader-epoch cache's end offset for an epoch (OffsetsForLeaderEpoch, KIP-101/279).
  caf::replies_to<epoch_atom, leader_epoch>::with<epoch_end>,
  // A new leader's epoch starts at the current log end (recorded and checkpointed before the
  // reply); replies that offset.
  caf::replies_to<newepoch_atom, leader_epoch>::with<offset>,
  // fsync everything appended so far; replies the new recovery point.
  caf::replies_to<flush_atom>::with<offset>,
  // Runs retention now; replies how many segments were deleted.
  caf::replies_to<retain_atom>::with<int32_t>,
  // Runs compaction now (cleanup.policy=compact) and replies when the swap is done.
  caf::replies_to<compact_atom>::with<compaction_stats>,
  caf::replies_to<info_atom>::with<log_info>,
  // The topic's configs changed (alter-config): later appends, rolls, retention, flushes and
  // compactions follow the new ones; segments already open keep their index interval.
  caf::reacts_to<reconfig_atom, log_config>,
  // Flushes, closes every segment and quits; replies the final recovery point.
  caf::replies_to<close_atom>::with<offset>,
  caf::reacts_to<tick_atom>>;

} // namespace capstan

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::batch_buffer)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::append_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::log_slice)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::log_config)
