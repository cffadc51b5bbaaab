#pragma once

// A simple consumer (no group membership or rebalancing): the caller assigns partitions, sets
// where each starts (an offset, the beginning, the end, or the group's committed offset), then
// polls; poll fetches every assigned partition from its leader in parallel and returns records
// in offset order per partition. commit() stores the positions (the next offset to read) for the
// group, as Kafka's commitSync does. Not thread-safe; blocking; never call it from the client's
// own thread.

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/batch/record_batch_view.hpp"
#include "runtime/client/cluster_client.hpp"
#include "runtime/client/record_accumulator.hpp"

namespace capstan::client {

// A position the consumer moved: out of range (auto.offset.reset), or back to where the log
// diverged from what this consumer read (`truncation`, KIP-320: the records it read from `to` up
// to `from` are no longer in the log, after an unclean leader election).
struct position_reset {
  topic_partition_key tp;
  offset from{0};
  offset to{0};
  bool truncation = false;
};

struct consumer_record {
  std::string topic;
  int32_t partition = 0;
  offset off{0};
  timestamp_ms timestamp = no_timestamp;
  std::optional<bytes> key;
  std::optional<bytes> value;
};

// What a poll hands to a visitor: a record inside a fetched batch, valid during the call.
struct record_ref {
  const topic_partition_key& tp;
  offset off;
  timestamp_ms timestamp;
  const record_view& record;
};

class consumer {
public:
  // `group` may be empty when the caller never commits nor seeks to committed offsets.
  consumer(cluster_client& client, client_config config, std::string group = {});
  consumer(const consumer&) = delete;
  consumer& operator=(const consumer&) = delete;

  // Assigns `partitions` of `topic` (every partition when empty). Errors:
  // UNKNOWN_TOPIC_OR_PARTITION for an unknown topic or a partition it does not have.
  status assign(const std::string& topic, const std::vector<int32_t>& partitions = {});
  // Replaces the assignment (a group's): partitions it keeps keep their positions.
  void set_assignment(std::vector<topic_partition_key> partitions);
  const std::vector<topic_partition_key>& assignment() const { return assigned_; }

  void seek(const topic_partition_key& tp, offset to);
  status seek_to_beginning();
  status seek_to_end();
  // Positions at the group's committed offsets; partitions without one start at the beginning
  // (`earliest`) or the end. A commit's leader epoch goes with the next fetch, so a log truncated
  // below the commit since it was made is reported as poll reports one (take_resets).
  // REQUIRES: a group. The second form positions only the assigned partitions that have no
  // position yet (a group member's newly assigned ones).
  status seek_to_committed(bool earliest);
  status seek_unpositioned_to_committed(bool earliest);
  std::optional<offset> position(const topic_partition_key& tp) const;

  // Fetches until at least one record is visited or `timeout` passes; visits at most
  // `max_records` records and advances positions past exactly what it visited. Returns the
  // number visited. Partitions without a position start at the end. A retriable fetch error (a
  // deleted topic, a moved leader) is retried until `timeout` passes, and for no longer than
  // request.timeout.ms, then returned: the call ends within `timeout` plus at most one request
  // already in flight. A position that is out of range moves as auto_offset_reset says
  // (take_resets() lists the moves), or, with offset_reset::none, fails the poll with
  // OFFSET_OUT_OF_RANGE. A poll that visited records returns their count even if another
  // partition's fetch failed: that partition keeps its position, and a later poll that visits
  // nothing returns its error. A fetched batch that fails validation (its CRC-32C, unless
  // check_crcs is off, or its framing) is CORRUPT_MESSAGE naming the partition and offset, the
  // same way: none of its records is visited and the position stays before it. Each fetch names
  // the leader epoch of the last record visited (KIP-320): when the leader's log no longer holds
  // the records this consumer read (an unclean election truncated them), the position moves back
  // to where the log diverged and take_resets() reports it as a truncation, or, with
  // offset_reset::none, the poll fails with OFFSET_OUT_OF_RANGE saying so (Kafka's
  // LogTruncationException) until the caller seeks.
  result<size_t> poll_each(std::chrono::milliseconds timeout, const std::function<void(const record_ref&)>& visit,
                           size_t max_records = std::numeric_limits<size_t>::max());
  // poll_each that copies the records out.
  result<std::vector<consumer_record>> poll(std::chrono::milliseconds timeout,
                                            size_t max_records = std::numeric_limits<size_t>::max());

  // Commits the current positions of every assigned partition for the group, each with the leader
  // epoch of the last record read before it, as `member` (none: from outside the membership).
  status commit(const group_member_ref& member = {});

  // The positions moved by auto_offset_reset since the last call.
  std::vector<position_reset> take_resets() { return std::exchange(resets_, {}); }

private:
  result<int64_t> list_offset(const topic_partition_key& tp, int64_t timestamp);
  status seek_to_committed(bool earliest, const std::vector<topic_partition_key>& partitions);

  cluster_client& client_;
  client_config config_;
  std::string group_;
  std::vector<topic_partition_key> assigned_;
  std::map<topic_partition_key, offset> positions_;
  // The partition leader epoch of the batch that held the last record visited; absent after a
  // seek (nothing read there yet).
  std::map<topic_partition_key, leader_epoch> epochs_;
  std::vector<position_reset> resets_;
};

} // namespace capstan::client
