#pragma once

// Builds record batches for tests and reads them back into plain values, so a test can compare a
// log's content with a model.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "actors/log/log_messages.hpp"
#include "runtime/types.hpp"

namespace capstan::test {

struct test_record {
  std::optional<std::string> key;
  std::optional<std::string> value; // nullopt = tombstone
  timestamp_ms timestamp = 0;
};

// What a read gave back, one entry per record, with absolute offsets.
struct read_record {
  offset off{0};
  std::optional<std::string> key;
  std::optional<std::string> value;
  timestamp_ms timestamp = 0;
  bool operator==(const read_record&) const = default;
};

// One batch (relative offsets from 0) holding `records`.
bytes make_batch(const std::vector<test_record>& records);

// One batch of `count` records "<prefix>-<i>" with key "k<i % keys>" (or no key when keys == 0),
// each value padded to at least `value_size` bytes.
bytes make_batch(int count, const std::string& prefix, timestamp_ms timestamp, int keys = 0,
                 size_t value_size = 0);

// An idempotent producer's identity on a batch (docs/idempotence.md).
struct producer_stamp {
  int64_t id = -1;
  int16_t epoch = 0;
  int32_t base_sequence = 0;
};

// make_batch(count, prefix, timestamp) as written by `producer`.
bytes make_producer_batch(producer_stamp producer, int count, const std::string& prefix,
                          timestamp_ms timestamp);

batch_buffer to_buffer(bytes batch);

// Validates a padded batch sequence and expands it into records. Throws (test failure) on any
// invalid batch: a read must never hand one out.
std::vector<read_record> records_of(bytes_view padded_sequence);

// Every whole, valid batch in a partition directory's segment files, in order: what is on disk
// (or in the page cache), not only what lies below the high watermark.
std::vector<read_record> partition_dir_records(const std::filesystem::path& dir);

} // namespace capstan::test
