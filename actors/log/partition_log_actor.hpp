#pragma once

// Opens a partition log and spawns the actor that owns it. Its protocol is partition_log_actor in
// log_messages.hpp: append (as leader or as follower), read whole batches below an upper bound,
// offset-for-timestamp, truncate, flush, retention, compaction, close.

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include <caf/fwd.hpp>

#include "actors/log/io_worker_actor.hpp"
#include "actors/log/log_messages.hpp"
#include "runtime/result.hpp"
#include "runtime/storage/leader_epoch_cache.hpp"
#include "runtime/storage/log_config.hpp"
#include "runtime/storage/producer_state.hpp"

namespace capstan {

struct partition_log_options {
  std::filesystem::path dir;
  // Prefix of every log line, e.g. "orders-0 on node 1".
  std::string log_name;
  log_config config;
  // Everything below it was flushed before the last stop: segments wholly below it are trusted,
  // the rest re-validated (docs/storage.md, "Recovery").
  offset recovery_point{0};
  // `dir` may not be durable yet (prepared_dir::unsynced): its worker makes it durable before it
  // writes the first record.
  bool dir_unsynced = false;
  // Base offset of a log that has no segment yet.
  offset start{0};
  // Wall clock in ms; tests substitute their own to drive segment.ms and retention.ms.
  std::function<timestamp_ms()> clock;
  // The I/O worker that runs this log's file operations (actors/log/io_worker_actor.hpp), shared
  // with other logs of a pool. Empty: the log spawns a worker of its own, which stops with it.
  io_worker_actor worker;
  // Whether to run retention, flush.ms and compaction on timers. Tests that drive them by
  // message turn it off.
  bool schedule_background_work = true;
};

struct loaded_log;

// A partition directory loaded and recovered, ready for spawn_partition_log.
struct loaded_partition_log {
  std::shared_ptr<loaded_log> log;
  leader_epoch_cache epochs;
  // Rebuilt from the newest readable producer snapshot and the batches after it.
  producer_state producers;
};

// Loads (and recovers) the directory, which is created if missing, its leader epochs and its
// producer state (runtime/storage/producer_state_loader.hpp). Blocks on file I/O: run it on an
// I/O worker, not a scheduler thread. Errors: KAFKA_STORAGE_ERROR when the directory cannot be
// read or a file cannot be opened.
result<loaded_partition_log> load_partition_log(const partition_log_options& options);

// Spawns the actor over a loaded directory; does no file I/O on the calling thread.
partition_log_actor spawn_partition_log(caf::actor_system& sys, partition_log_options options,
                                        loaded_partition_log loaded);

// load_partition_log, then spawn_partition_log, on the calling thread.
result<partition_log_actor> open_partition_log(caf::actor_system& sys, partition_log_options options);

} // namespace capstan
