#pragma once

// The decisions a partition log makes about whole segments — when to roll, which to delete for
// retention, when compaction is worth running — as plain functions over segment metadata, so
// tests check them without files or actors. Rules follow Kafka's Log/LogCleaner (docs/storage.md).

#include <cstddef>
#include <vector>

#include "runtime/storage/log_config.hpp"
#include "runtime/types.hpp"

namespace capstan {

// What a partition log knows about one of its segments without asking it.
struct segment_meta {
  offset base{0};
  offset next{0}; // one past the last offset
  int64_t size_bytes = 0;
  timestamp_ms max_timestamp = no_timestamp;
  // Wall-clock time the segment was created (or opened), for segment.ms.
  timestamp_ms created_ms = 0;
};

// True iff a batch of `batch_bytes` covering [first, last] must go to a new segment: the active
// one would pass segment.bytes, is older than segment.ms, or its relative offsets (uint32 in the
// index) would overflow. An empty active segment never rolls.
bool should_roll(const segment_meta& active, int64_t batch_bytes, offset last, timestamp_ms now,
                 const log_config& config);

// How many of the oldest segments retention deletes: none when cleanup.policy is compact (as in
// Kafka, retention applies only to a delete policy). `segments` is ordered by base offset and
// its last element is the active segment, which is never deleted. retention.ms deletes a segment
// whose largest timestamp is older than now - retention.ms (an empty segment never; one whose
// largest timestamp is negative, as Kafka, by the time it was sealed: the next segment's
// created_ms; the subtraction saturates, so no stored timestamp or setting overflows it); then
// retention.bytes deletes the oldest while what remains would still be >= retention.bytes.
size_t segments_to_delete(const std::vector<segment_meta>& segments, timestamp_ms now,
                          const log_config& config);

// How long a log waits between two checks of its background work (retention, flush.ms,
// compaction): the shortest of log.retention.check.interval.ms, flush.ms and
// log.cleaner.backoff.ms, but never less than min_schedule_interval_ms (an idle node must not
// spin) nor more than a minute.
int64_t background_interval_ms(const log_config& config);

// True iff compaction should run: there are sealed segments and the share of sealed bytes at
// or above `cleaned_upto` (not yet compacted) reaches min.cleanable.dirty.ratio.
bool should_compact(const std::vector<segment_meta>& segments, offset cleaned_upto,
                    const log_config& config);

} // namespace capstan
