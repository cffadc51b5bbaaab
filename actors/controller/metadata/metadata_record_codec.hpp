#pragma once

// Metadata records to and from bytes (schema/metadata.capnp). A Raft entry's data is one batch:
// the records of one decision, which the image applies all or nothing. A Raft snapshot's data is
// the cluster id and the records that rebuild the image.
//
// Decoding never throws. It refuses (CORRUPT_MESSAGE, naming the record and field) bytes that are
// not one well-formed message, an unknown record kind, and every field out of its own range: a
// node id below 0 (the leader may be -1), a topic or incarnation id that is not 16 bytes or a
// topic id of zeros, a partition below 0, an epoch outside [0, 2^31-1) (broker epochs
// [0, 2^63-1)), a node listed twice in replicas or ISR, an empty or repeated config name, a
// producer id block that is empty or overflows. Whether a record fits the image (the topic
// exists, the epochs follow on) is the image's to check.

#include <cstdint>
#include <string>
#include <vector>

#include "actors/controller/metadata/metadata_records.hpp"
#include "runtime/result.hpp"
#include "runtime/types.hpp"

namespace capstan::controller {

inline constexpr uint32_t metadata_snapshot_version = 1;

// The data of one Raft entry. Never empty, also for no records (empty data is the Raft core's
// no-op).
bytes encode_batch(const std::vector<metadata_record>& records);
result<std::vector<metadata_record>> decode_batch(bytes_view data);

struct snapshot_contents {
  std::string cluster_id;
  std::vector<metadata_record> records;
  // The highest broker epoch any registration had, also of nodes unregistered since.
  broker_epoch max_broker_epoch{0};

  bool operator==(const snapshot_contents&) const = default;
};

// The data of a Raft snapshot. decode_snapshot also refuses a version other than
// metadata_snapshot_version.
bytes encode_snapshot(const snapshot_contents& contents);
result<snapshot_contents> decode_snapshot(bytes_view data);

} // namespace capstan::controller
