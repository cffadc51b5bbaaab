#pragma once

// The I/O worker: a detached actor (its own thread, off the scheduler) that runs the blocking
// file work of the partition logs assigned to it: segment creation (roll), append, read, fsync,
// seal, truncation, deletion, the leader-epoch checkpoint write, compaction's install, and
// (through run_atom) the replica manager's loading of partition directories and its checkpoint
// writes. A partition log sends every operation on its segments to its one worker, which handles
// them in the order sent, so a read sent after an append sees it and a flush covers every append
// sent before it. One stalled disk operation stalls only the partitions of its worker; the scheduler's
// threads, and so the node's other partitions, fetches, produces and heartbeats, go on.
//
// A segment travels as a segment_ref. REQUIRES: once a segment_ref was sent to a worker, only
// that worker touches its `seg` (the segment is single-threaded code, docs/storage.md).

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/atom.hpp>
#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "actors/log/log_messages.hpp"
#include "actors/log/segment_slot.hpp"
#include "runtime/storage/leader_epoch_cache.hpp"
#include "runtime/storage/segment.hpp"

namespace capstan {

// What a roll asks the worker to create.
struct segment_spec {
  std::filesystem::path dir;
  offset base{0};
  segment_options options;
};

// The leader-epoch checkpoint to write.
struct epoch_checkpoint {
  std::filesystem::path file;
  std::vector<epoch_entry> entries;
};

// A blocking job for a worker, such as loading a partition directory at start-up. It reports
// through what `fn` captured; the worker replies once `fn` returned. REQUIRES: `fn` throws not.
struct io_task {
  std::function<void()> fn;
};

using roll_atom = caf::atom_constant<caf::atom("roll")>;
inline constexpr roll_atom roll_atom_v{};
using run_atom = caf::atom_constant<caf::atom("run")>;
inline constexpr run_atom run_atom_v{};

using io_worker_actor = caf::typed_actor<
  // Creates the slot's segment (segment_open_mode::create).
  caf::replies_to<roll_atom, segment_ref, segment_spec>::with<segment_meta>,
  // Appends a padded sequence of batches the partition log validated and stamped.
  caf::replies_to<append_atom, segment_ref, batch_buffer>::with<segment_meta>,
  caf::replies_to<read_atom, segment_ref, offset, int64_t>::with<log_slice>,
  // First offset in the segment with a record timestamp >= the given one; -1 if none.
  caf::replies_to<time_atom, segment_ref, timestamp_ms>::with<int64_t>,
  caf::replies_to<truncate_atom, segment_ref, offset>::with<segment_meta>,
  caf::replies_to<flush_atom, segment_ref>::with<segment_meta>,
  caf::replies_to<seal_atom, segment_ref>::with<segment_meta>,
  // Removes the segment's files.
  caf::replies_to<delete_atom, segment_ref>::with<bool>,
  // Closes the segment (its destructor writes buffered index entries).
  caf::replies_to<close_atom, segment_ref>::with<bool>,
  // Writes the leader-epoch checkpoint file atomically.
  caf::replies_to<epoch_atom, epoch_checkpoint>::with<bool>,
  // Runs a blocking job.
  caf::replies_to<run_atom, io_task>::with<bool>,
  // Quits once everything sent before it ran (a log's own worker, when the log closes).
  caf::reacts_to<close_atom>>;

// Jobs to run, each on the worker named beside it.
struct io_batch {
  std::vector<std::pair<io_worker_actor, io_task>> jobs;
};

// Spawns one worker on its own thread. It quits with its links (the replica manager for a
// pool's workers, the log for a log's private worker).
io_worker_actor spawn_io_worker(caf::actor_system& sys);

// Spawns a one-shot actor (on the scheduler: it only sends and counts) that takes
// (run_atom, io_batch), sends each job to its worker, replies true once every job ran (or its
// worker was gone), and quits. Jobs on different workers run in parallel, those on one worker
// in turn, so the parallelism is bounded by the number of workers. A caller that awaits the
// reply holds back its other messages without holding a thread.
caf::actor spawn_io_fan_out(caf::actor_system& sys);

// What the partition log mirrors of a segment.
segment_meta meta_of(const segment& seg, timestamp_ms created_ms);

} // namespace capstan

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::segment_ref)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::segment_spec)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::epoch_checkpoint)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::io_task)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(capstan::io_batch)
