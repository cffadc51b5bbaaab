#pragma once

// Fields the replication codecs (fetch_codec, control_codec) both write and read, checked the
// same way wherever a peer's frame carries them.

#include <string>

#include "runtime/result.hpp"
#include "runtime/storage/offset_checkpoint.hpp"
#include "schema/replication.capnp.h"

namespace capstan::codec {

// INVALID_REQUEST with `what`: a peer's message that no correct peer sends.
error invalid(std::string what);

void set_tp(schema::TopicPartition::Builder b, const topic_partition& tp);

// A peer's topic-partition: a valid topic name (INVALID_TOPIC_EXCEPTION otherwise) and a
// partition >= 0 (INVALID_REQUEST otherwise).
result<topic_partition> read_tp(schema::TopicPartition::Reader r);

// An incarnation id as its 16 bytes; all zeros (none) as no bytes at all.
capnp::Data::Reader incarnation_data(const incarnation_bytes& id);
// A peer's incarnation id: 16 bytes, or none (all zeros) for no bytes; INVALID_REQUEST naming
// `what` otherwise.
result<incarnation_bytes> read_incarnation(capnp::Data::Reader d, const char* what);

} // namespace capstan::codec
