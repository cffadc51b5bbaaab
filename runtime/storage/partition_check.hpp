#pragma once

// What start-up compares before it opens a partition directory: the directory as it is on disk
// (log_survey) against what the node knew when it last wrote its checkpoints. A directory that
// lost records the node had handed out is damaged: it is reported by name with the offsets
// affected and left exactly as it is, and the partition goes offline until an operator accepts
// the loss (`capstan log repair`). docs/storage.md, "Damage", states the rules.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "runtime/result.hpp"
#include "runtime/storage/log_survey.hpp"
#include "runtime/storage/segment.hpp"

namespace capstan {

// A partition's entries in the data dir's checkpoints, when it has them.
struct checkpointed_offsets {
  std::optional<offset> recovery_point; // recovery-point-offset-checkpoint
  std::optional<offset> high_watermark; // replication-offset-checkpoint

  // Where the node last knew the log to end (offsets below it were handed out): the larger of
  // the two, 0 when neither is known. On one node the high watermark is the log end.
  offset known_end() const;
  bool any() const { return recovery_point || high_watermark; }
};

// Offsets [from, to) that are gone or would be cut, with what shows it; an empty range when no
// offset is lost but the directory cannot be trusted as it is.
struct log_damage {
  offset from{0};
  offset to{0};
  std::string what;
};

struct damage_report {
  std::vector<log_damage> damages;
  // Where the log would end after start-up recovery; nullopt when the directory holds no
  // segment.
  std::optional<offset> recovered_end;

  bool damaged() const { return !damages.empty(); }
  // One line: every damage, "; "-separated.
  std::string describe() const;
};

// Applies the rules to a surveyed directory that exists:
//  - segments must follow each other: a segment starting inside its predecessor's offsets, or
//    after its predecessor's end without a recorded gap (offset-gaps) covering the difference,
//    is damage;
//  - recovery may cut a torn or corrupt tail only at or above `known_end`: a cut below it loses
//    records that were handed out;
//  - the log must end at or above `known_end`;
//  - partition.metadata may be torn (log_survey::metadata_torn) only where `known_end` is 0.
damage_report find_damage(const log_survey& survey, offset known_end);

enum class dir_state {
  intact,  // opened as found (partition.metadata written when it was missing or torn)
  created, // there was no directory and nothing was known of it: a new, empty partition
  replaced // the directory belonged to an earlier topic of the same name and was moved aside
};

struct prepared_dir {
  dir_state state = dir_state::intact;
  // The recovery point to open the log with: the checkpointed one for an intact directory, 0
  // otherwise (the checkpoints described another directory, or none).
  offset recovery_point{0};
  // Where an earlier topic's directory went (dir_state::replaced).
  std::filesystem::path moved_to;
  // The directory may not be durable yet (it was just created, or no record was written into it,
  // or no checkpoint knows it): its partition.metadata, its entries and its own entry in the
  // data dir. The log makes it durable before it writes its first record
  // (make_partition_dir_durable).
  bool unsynced = false;
};

// Gets <dir> ready for load_log, or says why it must not be opened. Changes nothing on disk
// unless it returns a value: then it may have created the directory and its partition.metadata
// (without an fsync: unsynced), written a missing partition.metadata or a torn one beside no
// record (log_survey::metadata_torn), or renamed a directory whose partition.metadata names
// another topic id to <dir>.<that id>-stray (Kafka's name for a stray log). Errors, all
// KAFKA_STORAGE_ERROR: the survey failed (naming the path and reason); the directory is missing,
// or its partition.metadata torn, although the checkpoints know offsets of it; find_damage
// reported damage (the message lists it). `partition` names it in messages ("orders-0").
result<prepared_dir> prepare_partition_dir(const std::filesystem::path& dir,
                                           const std::string& partition, const uuid_bytes& topic_id,
                                           const checkpointed_offsets& checkpoints,
                                           const segment_options& options);

} // namespace capstan
