#pragma once

// Judges what the workload saw of one partition (workload.hpp) against its final read, with
// Jepsen's names for what can go wrong in a Kafka-like log (jepsen.tests.kafka):
// - lost-write: acknowledged, not in the final read;
// - duplicate: one value at two offsets (the final read, or a replica's log);
// - inconsistent-offsets: one offset, two values between an acknowledgement, a consumer, the
//   final read and the replicas' logs (below the final read's end);
// - nonmonotonic: a consumer's offsets go backwards, or one producer's acknowledgements in a
//   partition are at offsets out of its send order;
// - poll-skip: a consumer jumps over offsets that the final read has;
// - unseen: acknowledged below the final read's end, seen by none of the consumers (which the
//   caller let catch up first).
// Plain functions over plain data: a unit test can feed them any history.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/log_builder.hpp"
#include "tests/support/workload.hpp"

namespace capstan::test {

struct anomaly {
  std::string kind;
  std::string detail;
};

// Everything known about one partition at the end of a run.
struct partition_history {
  topic_partition tp;
  // Per producer, its acknowledgements in this partition.
  std::vector<std::vector<acked_record>> acked;
  // The log from its start to the high watermark, in offset order.
  std::vector<read_record> final_read;
  // Per live consumer, what it read in the order it read it; empty: no consumer was running.
  std::vector<std::vector<read_record>> consumed;
  // Per replica (node id), the whole log on its disk.
  std::vector<std::pair<int, std::vector<read_record>>> replicas;
};

std::vector<anomaly> check_partition(const partition_history& h);

// "kind: detail" lines, at most `per_kind` of each kind and a count of the rest.
std::string describe(const std::vector<anomaly>& found, size_t per_kind = 5);

} // namespace capstan::test
