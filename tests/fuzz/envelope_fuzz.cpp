// libFuzzer target: the inter-node envelope (runtime/messages/capnp_frame.*) as a peer's bytes
// reach it. The input goes through the path BASP takes for a capnp_frame inside a remote
// message, CAF's binary_deserializer into capnp_frame's inspect (load_frame, then from_words);
// the input's whole words also go to from_words directly. Every frame accepted is then read as
// each replication message (schema/replication.capnp) through try_read, as a node reads a
// peer's frame, including a FetchResponse's records as a padded batch sequence, and must survive
// the serializer round trip word for word. The node's own decoders of those messages
// (fetch_codec, control_codec) then read it too: each either refuses it with a named error or
// gives values within their documented bounds.
//
// Input: what save_frame writes (a u64 word count, then the words), or anything else.
// Run: build-fuzz/tests/fuzz/envelope_fuzz tests/fuzz/corpus/envelope, or
// tests/fuzz/run.sh envelope [seconds] (tests/fuzz/README.md).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <kj/array.h>

#include "actors/replica/control_codec.hpp"
#include "actors/replica/fetch_codec.hpp"
#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/record_batch_view.hpp"
#include "runtime/messages/capnp_frame.hpp"
#include "schema/replication.capnp.h"
#include "tests/fuzz/fuzz_support.hpp"

namespace capstan::fuzz {
namespace {

// A frame of a few words may hold a list of empty structs that claims millions of entries (the
// traversal limit, 8 Mi words at least, bounds it; each entry reads as defaults). Visiting all of
// them only costs time, and seconds per input would stall the fuzzer, so each list is read up to
// this many entries. A node reading a peer's lists must bound them likewise (as the gateway does
// with max_request_list_entries).
constexpr unsigned max_entries_read = 1024;

template <class List>
unsigned entries_to_read(const List& list) {
  return std::min(list.size(), max_entries_read);
}

void read_topic_partition(schema::TopicPartition::Reader tp) {
  const std::string topic = tp.getTopic();
  (void)tp.getPartition();
}

void scan_records(bytes_view records) {
  batch_sequence_reader reader(records, batch_format::default_max_batch_bytes);
  for (auto b = reader.next(); b && *b; b = reader.next())
    FUZZ_CHECK((*b)->record_count() >= 0);
}

void read_everything(const capnp_frame& frame) {
  auto fetch = frame.try_read<schema::Fetch>([](schema::Fetch::Reader f) {
    (void)f.getReplicaId();
    (void)f.getMaxWaitMs();
    (void)f.getMinBytes();
    (void)f.getMaxBytes();
    const auto partitions = f.getPartitions();
    for (unsigned i = 0; i < entries_to_read(partitions); ++i) {
      const auto p = partitions[i];
      read_topic_partition(p.getTopicPartition());
      (void)p.getCurrentLeaderEpoch();
      (void)p.getFetchOffset();
      (void)p.getLogStartOffset();
      (void)p.getPartitionMaxBytes();
    }
  });
  auto response = frame.try_read<schema::FetchResponse>([](schema::FetchResponse::Reader r) {
    const auto partitions = r.getPartitions();
    for (unsigned i = 0; i < entries_to_read(partitions); ++i) {
      const auto p = partitions[i];
      read_topic_partition(p.getTopicPartition());
      (void)p.getErrorCode();
      (void)p.getHighWatermark();
      (void)p.getLogStartOffset();
      auto records = p.getRecords();
      scan_records({records.begin(), records.size()});
      bytes fixed(records.begin(), records.end());
      fix_batch_crcs(fixed);
      scan_records(fixed);
    }
  });
  auto tp = frame.try_read<schema::TopicPartition>(read_topic_partition);
  // The empty message reads as defaults, whatever the type; anything else that cannot be read
  // is CORRUPT_MESSAGE.
  if (frame.empty()) FUZZ_CHECK(fetch && response && tp);
  for (const status& s : {fetch, response, tp})
    FUZZ_CHECK(s.ok() || s.code() == errc::corrupt_message);
}

// A decoder either refuses with a named error for a malformed message (INVALID_REQUEST,
// CORRUPT_MESSAGE, INVALID_TOPIC_EXCEPTION for a bad topic name), or answers.
template <class T>
void check_decoded(const result<T>& r) {
  FUZZ_CHECK(r.ok() || r.code() == errc::invalid_request || r.code() == errc::corrupt_message ||
             r.code() == errc::invalid_topic_exception);
}

void decode_everything(const capnp_frame& frame) {
  auto fetch = decode_fetch(frame);
  check_decoded(fetch);
  if (fetch) FUZZ_CHECK(fetch->partitions.size() <= max_partitions_per_request);
  // A response may carry any error code its sender names.
  auto response = decode_fetch_response(frame);
  if (response) FUZZ_CHECK(response->size() <= max_partitions_per_request);
  check_decoded(decode_epoch_queries(frame));
  (void)decode_epoch_answers(frame);
  auto lai = decode_leader_and_isr(frame);
  check_decoded(lai);
  if (lai) {
    FUZZ_CHECK(lai->partitions.size() <= max_partitions_per_request);
    for (const auto& p : lai->partitions) FUZZ_CHECK(p.replicas.size() <= 1024 && p.isr.size() <= 1024);
  }
  check_decoded(decode_update_metadata(frame));
  check_decoded(decode_stop_replica(frame));
  check_decoded(decode_control_response(frame, false));
  check_decoded(decode_control_response(frame, true));
  check_decoded(decode_alter_partition(frame));
  check_decoded(decode_alter_partition_response(frame));
}

// save_frame then load_frame gives back the same words.
void check_round_trip(const capnp_frame& frame) {
  std::vector<char> buf;
  caf::binary_serializer sink{nullptr, buf};
  auto copy = frame;
  FUZZ_CHECK(!sink(copy));
  FUZZ_CHECK(buf.size() == sizeof(uint64_t) + frame.size_bytes());
  capnp_frame back;
  caf::binary_deserializer source{nullptr, buf};
  FUZZ_CHECK(!source(back));
  FUZZ_CHECK(back.size_words() == frame.size_words());
  FUZZ_CHECK(frame.empty() ||
             std::memcmp(back.words().begin(), frame.words().begin(), frame.size_bytes()) == 0);
}

} // namespace
} // namespace capstan::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace capstan;
  using namespace capstan::fuzz;

  const std::vector<char> wire(data, data + size);
  capnp_frame frame;
  caf::binary_deserializer source{nullptr, wire};
  if (auto err = source(frame); err) {
    FUZZ_CHECK(frame.empty());
  } else {
    read_everything(frame);
    decode_everything(frame);
    check_round_trip(frame);
  }

  auto words = kj::heapArray<capnp::word>(size / sizeof(capnp::word));
  if (words.size() > 0) std::memcpy(words.begin(), data, words.size() * sizeof(capnp::word));
  const size_t count = words.size();
  if (auto direct = capnp_frame::from_words(kj::mv(words)); direct) {
    FUZZ_CHECK(direct->size_words() == count);
    read_everything(*direct);
    decode_everything(*direct);
    check_round_trip(*direct);
  } else {
    FUZZ_CHECK(direct.code() == errc::corrupt_message || direct.code() == errc::message_too_large);
  }
  return 0;
}
