#pragma once

// A segment as a partition log and its I/O worker share it (actors/log/io_worker_actor.hpp): the
// log keeps the slot in its bookkeeping and sends it with every operation on the segment.
// REQUIRES: once a slot was sent to a worker, only that worker touches its `seg`.

#include <filesystem>
#include <memory>
#include <string>

#include "runtime/storage/segment.hpp"
#include "runtime/types.hpp"

namespace capstan {

// A new partition directory that is not durable yet (prepared_dir::unsynced): the worker makes it
// durable (make_partition_dir_durable) before it writes the log's first record, and refuses to
// write while that fails. One per log, shared by its slots; only its worker touches it.
struct unsynced_partition_dir {
  std::filesystem::path dir;
  bool synced = false;
};

// One segment of a partition log, as the log and its worker share it.
struct segment_slot {
  // Empty until the worker created or was handed the segment, and again after close or delete.
  std::shared_ptr<segment> seg;
  // "topic-partition on node n", for log lines.
  std::string log_name;
  timestamp_ms created_ms = 0;
  // Set while the log's directory may not be durable; null otherwise.
  std::shared_ptr<unsynced_partition_dir> unsynced_dir;
};
using segment_ref = std::shared_ptr<segment_slot>;

} // namespace capstan
