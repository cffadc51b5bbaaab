#pragma once

// A partition log's bookkeeping as a plain class (Kafka's UnifiedLog, Redpanda's disk_log_impl,
// without the disk): the segments and what it knows of each, log start and end, recovery point,
// leader epochs and idempotent producers. It validates appends and (as leader) stamps offsets
// and epochs, decides rolls, truncation points, what retention deletes, what a flush covers and
// what compaction installs, and answers with the file operations to carry that out. It does no
// I/O: partition_log_actor.cpp is its protocol shell, sending those operations to the log's I/O
// worker and replying once they ran. Tests call it directly
// (tests/unit/log/partition_log_plan_test.cpp).
//
// State changes at once, when an operation is planned: the I/O that follows is sent to the
// worker in the order planned and the worker keeps that order, so a read planned afterwards
// sees the change. A failed operation takes the whole log offline (the actor's concern), never
// leaving it to run on with state that disagrees with the disk.
//
// Single-threaded: only its actor calls it. Movable, not copyable (it owns the segment slots).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "actors/log/log_requests.hpp"
#include "actors/log/segment_slot.hpp"
#include "runtime/result.hpp"
#include "runtime/storage/compactor.hpp"
#include "runtime/storage/leader_epoch_cache.hpp"
#include "runtime/storage/log_config.hpp"
#include "runtime/storage/log_policy.hpp"
#include "runtime/storage/log_slice.hpp"
#include "runtime/storage/producer_state.hpp"

namespace capstan {

// One segment: the slot its worker operates on, and its metadata as the log mirrors it.
struct log_segment {
  segment_ref slot;
  segment_meta meta;
  // Cut on disk (truncation) since its last flush: the next flush takes it even when it holds
  // no data past the recovery point, or an OS crash could bring the cut batches back.
  bool cut_unflushed = false;
};

// Appends a padded run of batches to the segment.
struct segment_write {
  segment_ref slot;
  batch_buffer part;
};

// A roll: create `created` at `base`, write `producers` as the snapshot at `base` (as Kafka
// does on roll), seal `sealed` (the old active segment) and flush `flushed` in the background:
// every segment below `base` with data past the recovery point or a cut since its last flush,
// `sealed` among them. When those flushes are done the recovery point may move to `base`
// (raise_recovery_point), as Kafka's flushUptoOffsetExclusive after a roll: flushing only the
// sealed segment would make the segments a crash left unflushed (recovered at open, in the page
// cache only) trusted by the next recovery.
struct segment_roll {
  segment_ref sealed;
  segment_ref created;
  offset base{0};
  std::shared_ptr<const producer_state> producers;
  std::vector<segment_ref> flushed;
};

using append_step = std::variant<segment_write, segment_roll>;

// What an accepted append asks of the disk, in this order: the leader-epoch checkpoint (when
// save_epochs), then `steps`, then, when `flush` (flush.messages reached), a flush of the whole
// log (plan_flush) before the reply. A producer's duplicate has no steps.
struct append_plan {
  append_result result;
  bool save_epochs = false;
  std::vector<append_step> steps;
  bool flush = false;
};

// What a flush covers: the segments holding anything at or past the recovery point. Once they
// are fsynced, raise_recovery_point(target, generation).
struct flush_plan {
  offset target{0};
  uint64_t generation = 0;
  std::vector<segment_ref> segments;
};

// What retention deletes: whole segments, oldest first, already gone from the bookkeeping.
// Afterwards: the leader-epoch checkpoint when save_epochs, and the producer snapshots below
// log_start are removed (the producers themselves stay until they expire, KIP-360).
struct retention_plan {
  std::vector<log_segment> deleted;
  offset log_start{0};
  bool save_epochs = false;
};

// Where a read starts: answer empty, or read from the segment at `segment_base`.
struct read_start {
  bool empty = true;
  offset segment_base{0};
};

// Which background work is due now (on_tick).
struct background_work {
  bool retention = false;
  bool flush = false;
  bool compaction = false;
};

// A compaction to run against the layout of `generation`: clean `input`; everything below
// dirty_end is then clean.
struct compaction_plan {
  compaction_input input;
  offset dirty_end{0};
  uint64_t generation = 0;
};

// The compacted segments worth installing (any record removed), and the offset ranges their
// cleaned copies leave empty at their ends: [new end, next segment base).
struct compaction_selection {
  std::vector<compacted_segment> segments;
  std::vector<std::pair<offset, offset>> gaps;
};

class partition_log {
public:
  // REQUIRES: `segments` is non-empty and ordered by base offset; the last is the active one.
  // `unsynced_dir` (null when the directory is durable) goes into every slot of the log, these
  // and those it makes later.
  partition_log(std::string log_name, log_config config, std::vector<log_segment> segments,
                offset recovery_point, leader_epoch_cache epochs, producer_state producers,
                timestamp_ms now, std::shared_ptr<unsynced_partition_dir> unsynced_dir = nullptr);
  partition_log(const partition_log&) = delete;
  partition_log& operator=(const partition_log&) = delete;
  partition_log(partition_log&&) = default;
  partition_log& operator=(partition_log&&) = default;

  // Validates `req` whole before changing anything (an append is all or nothing): every batch
  // as a producer sends it (leader) or as stored (replication), within max.message.bytes, a
  // leader's CreateTimes within the timestamp window around `now` (a leader's validated_batch is
  // not parsed again: only its size and timestamp range are checked); no control batch from a
  // client; no keyless record on a compacted topic; a replicated batch must follow the log
  // end; a producer's batch must be alone in its produce and pass the producer state's check.
  // Then, as leader, patches base offsets and the leader epoch into req.batches in place, and
  // records the batches: log end, epochs, producers, segment metadata, with a roll wherever
  // should_roll says so. Errors: the named error of the first bad batch (CORRUPT_MESSAGE,
  // INVALID_RECORD, INVALID_TIMESTAMP, MESSAGE_TOO_LARGE, OFFSET_OUT_OF_RANGE, a producer
  // check's), and nothing changed.
  result<append_plan> append(append_request& req, timestamp_ms now);

  // Where a read of `req` starts: OFFSET_OUT_OF_RANGE outside [log start, log end].
  result<read_start> start_read(const read_request& req) const;
  // The segment at `base`, if it still exists.
  segment_ref segment_at(offset base) const;
  // The segment after the one at `base` when it starts below `upto` (a read that found its
  // segment empty, as compaction can leave a segment's tail, goes on there).
  std::optional<offset> next_segment(offset base, offset upto) const;
  // The first segment at or after `from` whose max timestamp is >= target (a time lookup).
  std::optional<offset> segment_with_timestamp(offset from, timestamp_ms target) const;

  // Covers everything appended so far (the segments holding data past the recovery point) and
  // every truncation's cut; resets the flush.messages count.
  flush_plan plan_flush();
  // A flush of everything below `target` finished: the recovery point moves up to it, unless
  // the layout changed since (`generation`).
  void raise_recovery_point(offset target, uint64_t generation);
  // A flush ended (flush.ms counts from here).
  void flushed_at(timestamp_ms now) { last_flush_ms_ = now; }

  // Drops the segments retention wants gone (segments_to_delete) from the bookkeeping.
  retention_plan plan_retention(timestamp_ms now);

  // Truncation, in three steps: drop_segments_from(first) removes every segment whose base is
  // >= first and returns them for deletion; then either the log is empty() and
  // restart_at(to) adds an empty active segment at `to` to create, or the active segment is
  // cut on disk and active_truncated(meta) records what is left; finally truncated(end)
  // moves log end, recovery point, epochs and producers to the new end, and returns whether the
  // epochs changed (checkpoint them).
  std::vector<segment_ref> drop_segments_from(offset first);
  bool empty() const { return segments_.empty(); }
  segment_ref restart_at(offset to, timestamp_ms now);
  segment_ref active_slot() const { return segments_.rbegin()->second.slot; }
  void active_truncated(const segment_meta& meta);
  bool truncated(offset end);
  // Kafka's truncateFullyAndStartAt, before its drop_segments_from: forgets every leader epoch
  // and producer. Returns whether the epochs changed.
  bool forget_history();

  // Drops the epochs that start at or after `end` (>= the log end: they hold no record). Returns
  // whether the epochs changed (checkpoint them).
  bool forget_epochs_from(offset end) { return epochs_.truncate_from_end(end); }

  // The epoch starts at the log end. Returns whether it was new (checkpoint the epochs).
  bool assign_epoch(leader_epoch epoch) { return epochs_.assign(epoch, log_end_); }
  epoch_end end_offset_for(leader_epoch epoch) const {
    return epochs_.end_offset_for(epoch, log_end_);
  }

  // Due background work: retention every log.retention.check.interval.ms, flush after
  // flush.ms with unflushed messages, compaction every log.cleaner.backoff.ms when
  // should_compact. Also expires producers idle for producer.id.expiration.ms, every
  // producer_expiration_check_interval_ms; `expired` gets how many.
  background_work due(timestamp_ms now, size_t& expired);

  // A compaction of every sealed segment, or nullopt when none is due (not compact, already
  // running, or no sealed segment). Marks the log compacting.
  std::optional<compaction_plan> plan_compaction(timestamp_ms now);
  // The cleaned segments to install, if the layout is still that of `generation`; nullopt (and
  // the log no longer compacting) when it changed.
  std::optional<compaction_selection> select_compacted(const compaction_output& out,
                                                       uint64_t generation);
  // The cleaned copy of the segment at `base` is live as `seg` (opened by the worker, described
  // by `meta`; the segment's creation time is kept); returns the replaced slot to close.
  segment_ref install_compacted(offset base, segment_meta meta, std::shared_ptr<segment> seg);
  // The installs are done: the layout changed, and everything below dirty_end is clean.
  void compaction_installed(offset dirty_end);
  // A compaction stopped without installing anything.
  void compaction_abandoned() { compacting_ = false; }

  log_info info() const;
  std::vector<segment_ref> slots() const;
  std::vector<segment_meta> metas() const;
  // A copy of the producer state as of the log end, for the snapshot a close writes.
  std::shared_ptr<const producer_state> producers_at_end() const;

  const std::string& name() const { return log_name_; }
  const log_config& config() const { return config_; }
  // The topic's configs changed: every later decision (append limits, rolls, retention, flushes,
  // compaction) takes the new ones, as Kafka's live log does after an alter-config.
  void reconfigure(log_config config) { config_ = std::move(config); }
  offset log_start() const { return log_start_; }
  offset log_end() const { return log_end_; }
  offset recovery_point() const { return recovery_point_; }
  uint64_t generation() const { return generation_; }
  const leader_epoch_cache& epochs() const { return epochs_; }
  const producer_state& producers() const { return producers_; }

private:
  log_segment& active() { return segments_.rbegin()->second; }
  log_segment& add_segment(offset base, timestamp_ms now);
  // The segments below `upto` a flush must take (data past the recovery point, or a cut since
  // their last flush); clears their cut marks.
  std::vector<segment_ref> take_unflushed(offset upto);

  std::string log_name_;
  std::shared_ptr<unsynced_partition_dir> unsynced_dir_;
  log_config config_;
  std::map<offset, log_segment> segments_; // by base offset; the last one is active
  offset log_start_{0};
  offset log_end_{0};
  offset recovery_point_{0};
  offset cleaned_upto_{0};
  int64_t unflushed_messages_ = 0;
  timestamp_ms last_flush_ms_ = 0;
  timestamp_ms last_retention_ms_ = 0;
  timestamp_ms last_compaction_ms_ = 0;
  timestamp_ms last_producer_expiry_ms_ = 0;
  bool compacting_ = false;
  // Bumped by every change to sealed segments (truncation, retention, compaction swap), so
  // answers computed against an older layout are discarded.
  uint64_t generation_ = 0;
  // Where each leader epoch starts in this log.
  leader_epoch_cache epochs_;
  // The idempotent producers of the log so far (up to log_end); changed only as the log is.
  producer_state producers_;
};

// Keeps only the batches of `slice` whose last offset is below `upto` (batches are whole, so the
// cut is at a batch boundary).
log_slice trim_to(log_slice slice, offset upto);

} // namespace capstan
