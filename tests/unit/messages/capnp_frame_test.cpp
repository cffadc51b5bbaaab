// capnp_frame: building, reading, the CAF wire format, and what a bad peer can and cannot do.

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/deep_to_string.hpp>
#include <capnp/message.h>
#include <capnp/orphan.h>
#include <catch2/catch.hpp>

#include "runtime/actor/caf_error.hpp"
#include "runtime/messages/capnp_frame.hpp"
#include "schema/replication.capnp.h"

namespace capstan {
namespace {

capnp_frame make_fetch(int32_t replica, int partitions) {
  capnp::MallocMessageBuilder builder;
  auto fetch = builder.initRoot<schema::Fetch>();
  fetch.setReplicaId(replica);
  fetch.setMaxWaitMs(500);
  fetch.setMaxBytes(1 << 20);
  auto list = fetch.initPartitions(partitions);
  for (int i = 0; i < partitions; ++i) {
    list[i].initTopicPartition().setTopic("orders");
    list[i].getTopicPartition().setPartition(i);
    list[i].setFetchOffset(1000 + i);
  }
  return capnp_frame::from_builder(builder);
}

std::vector<char> serialize(const capnp_frame& frame) {
  std::vector<char> buf;
  caf::binary_serializer sink{nullptr, buf};
  auto copy = frame;
  REQUIRE(!sink(copy));
  return buf;
}

caf::error deserialize(const std::vector<char>& buf, capnp_frame& out) {
  caf::binary_deserializer source{nullptr, buf};
  return source(out);
}

// A serialized frame: the u64 word count as CAF writes it, then `words`.
std::vector<char> raw_frame(uint64_t count, const std::vector<uint64_t>& words) {
  std::vector<char> buf;
  caf::binary_serializer sink{nullptr, buf};
  REQUIRE(!sink(count));
  for (auto w : words) {
    char bytes[8];
    std::memcpy(bytes, &w, 8);
    buf.insert(buf.end(), bytes, bytes + 8);
  }
  return buf;
}

kj::Array<capnp::word> to_words(const std::vector<uint64_t>& xs) {
  auto words = kj::heapArray<capnp::word>(xs.size());
  std::memcpy(words.asBytes().begin(), xs.data(), xs.size() * 8);
  return words;
}

errc code_of(const caf::error& err) {
  return from_caf_error(err).code;
}

} // namespace

TEST_CASE("a frame reads back the message it was built from", "[messages][capnp_frame]") {
  auto frame = make_fetch(3, 2);
  auto reader = frame.reader<schema::Fetch>();
  auto fetch = reader.root();
  CHECK(fetch.getReplicaId() == 3);
  REQUIRE(fetch.getPartitions().size() == 2);
  CHECK(fetch.getPartitions()[1].getTopicPartition().getTopic() == "orders");
  CHECK(fetch.getPartitions()[1].getFetchOffset() == 1001);
  CHECK(frame.size_bytes() == frame.size_words() * 8);
}

TEST_CASE("an empty frame reads as a message of defaults", "[messages][capnp_frame]") {
  capnp_frame frame;
  CHECK(frame.empty());
  auto reader = frame.reader<schema::Fetch>();
  CHECK(reader.root().getReplicaId() == 0);
  CHECK(reader.root().getPartitions().size() == 0);
}

TEST_CASE("copies of a frame share one buffer", "[messages][capnp_frame]") {
  auto frame = make_fetch(1, 1);
  auto copy = frame;
  CHECK(copy.shares_buffer_with(frame));
  CHECK(copy.words().begin() == frame.words().begin());
  CHECK_FALSE(make_fetch(1, 1).shares_buffer_with(frame));
}

TEST_CASE("a frame survives the binary serializer round trip word for word",
          "[messages][capnp_frame]") {
  auto frame = make_fetch(7, 5);
  auto buf = serialize(frame);
  CHECK(buf.size() == 8 + frame.size_bytes());
  capnp_frame out;
  REQUIRE(!deserialize(buf, out));
  REQUIRE(out.size_words() == frame.size_words());
  CHECK(std::memcmp(out.words().begin(), frame.words().begin(), frame.size_bytes()) == 0);
  CHECK(reinterpret_cast<uintptr_t>(out.words().begin()) % alignof(capnp::word) == 0);
  auto reader = out.reader<schema::Fetch>();
  auto fetch = reader.root();
  CHECK(fetch.getReplicaId() == 7);
  CHECK(fetch.getPartitions()[4].getFetchOffset() == 1004);
}

TEST_CASE("an empty frame round trips as the word count zero", "[messages][capnp_frame]") {
  auto buf = serialize(capnp_frame{});
  CHECK(buf.size() == 8);
  capnp_frame out = make_fetch(1, 1);
  REQUIRE(!deserialize(buf, out));
  CHECK(out.empty());
}

TEST_CASE("a frame larger than capnp's default 64 MiB traversal limit reads fully",
          "[messages][capnp_frame]") {
  constexpr size_t size = size_t{72} << 20;
  capnp::MallocMessageBuilder builder;
  auto response = builder.initRoot<schema::FetchResponse>();
  auto data = response.initPartitions(1)[0].initRecords(size);
  data[0] = 0xab;
  data[size - 1] = 0xcd;
  auto frame = capnp_frame::from_builder(builder);
  auto buf = serialize(frame);
  capnp_frame out;
  REQUIRE(!deserialize(buf, out));
  auto reader = out.reader<schema::FetchResponse>();
  auto records = reader.root().getPartitions()[0].getRecords();
  REQUIRE(records.size() == size);
  CHECK(records[0] == 0xab);
  CHECK(records[size - 1] == 0xcd);
}

TEST_CASE("truncated serialized input fails cleanly at every cut", "[messages][capnp_frame]") {
  auto buf = serialize(make_fetch(2, 3));
  for (size_t cut = 0; cut < buf.size(); ++cut) {
    std::vector<char> prefix(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(cut));
    capnp_frame out;
    INFO("cut at byte " << cut);
    CHECK(deserialize(prefix, out));
    CHECK(out.empty());
  }
}

TEST_CASE("a word count above the frame limit fails before allocating",
          "[messages][capnp_frame]") {
  for (uint64_t count : {uint64_t{max_frame_words} + 1, uint64_t{1} << 60, ~uint64_t{0}}) {
    capnp_frame out;
    auto err = deserialize(raw_frame(count, {0, 0}), out);
    REQUIRE(err);
    CHECK(code_of(err) == errc::message_too_large);
  }
}

TEST_CASE("a word count beyond the remaining input fails before allocating",
          "[messages][capnp_frame]") {
  capnp_frame out;
  auto err = deserialize(raw_frame(max_frame_words, {0, 0, 0}), out);
  REQUIRE(err);
  CHECK(code_of(err) == errc::corrupt_message);
  CHECK(from_caf_error(err).message.find("truncated") != std::string::npos);
}

TEST_CASE("garbage words never deserialize into a frame", "[messages][capnp_frame]") {
  std::mt19937_64 rng{42};
  for (int round = 0; round < 2000; ++round) {
    std::vector<uint64_t> words(1 + rng() % 16);
    for (auto& w : words)
      w = rng();
    // Keep the segment count small half of the time so the pointers, not the table, are tested.
    if (round % 2 == 0)
      words[0] = (words[0] & 0xffff'ffff'0000'0000) | 0;
    if (round % 4 == 0)
      words[0] = (uint64_t{words.size() - 1} << 32);
    capnp_frame out;
    auto err = deserialize(raw_frame(words.size(), words), out);
    if (!err) {
      // Random bits that happen to form a valid message must read without throwing.
      CHECK(out.try_read<schema::Fetch>([](schema::Fetch::Reader r) { return r.getReplicaId(); }));
    }
  }
}

TEST_CASE("from_words rejects malformed messages with CORRUPT_MESSAGE", "[messages][capnp_frame]") {
  // Segment table: one segment of 1 word, then the root pointer.
  auto one_segment = [](uint64_t root) { return std::vector<uint64_t>{uint64_t{1} << 32, root}; };

  SECTION("root struct pointer past the end of its segment") {
    // Struct pointer, offset 5 words, 1 data word: points outside the 1-word segment.
    auto r = capnp_frame::from_words(to_words(one_segment((uint64_t{1} << 32) | (5 << 2))));
    REQUIRE_FALSE(r);
    CHECK(r.code() == errc::corrupt_message);
  }
  SECTION("root is a list, not a struct") {
    // List pointer (kind 1), offset 0, element size 2 (byte), 0 elements.
    auto r = capnp_frame::from_words(to_words(one_segment(1 | (uint64_t{2} << 32))));
    REQUIRE_FALSE(r);
    CHECK(r.code() == errc::corrupt_message);
  }
  SECTION("segment table announces more words than present") {
    auto r = capnp_frame::from_words(to_words({uint64_t{100} << 32, 0}));
    REQUIRE_FALSE(r);
    CHECK(r.code() == errc::corrupt_message);
  }
  SECTION("trailing words after the message") {
    auto words = one_segment(0);
    words.push_back(0);
    auto r = capnp_frame::from_words(to_words(words));
    REQUIRE_FALSE(r);
    CHECK(r.code() == errc::corrupt_message);
  }
  SECTION("a null root is a valid message of defaults") {
    auto r = capnp_frame::from_words(to_words(one_segment(0)));
    REQUIRE(r);
    auto reader = r->reader<schema::Fetch>();
    CHECK(reader.root().getReplicaId() == 0);
  }
}

TEST_CASE("try_read turns a field of the wrong wire type into CORRUPT_MESSAGE",
          "[messages][capnp_frame]") {
  // PartitionData's first pointer is a struct; Fetch reads its first pointer as a list.
  capnp::MallocMessageBuilder builder;
  builder.initRoot<schema::FetchResponse::PartitionData>().initTopicPartition().setTopic("t");
  auto frame = capnp_frame::from_builder(builder);
  auto r = frame.try_read<schema::Fetch>(
    [](schema::Fetch::Reader fetch) { return fetch.getPartitions().size(); });
  REQUIRE_FALSE(r);
  CHECK(r.code() == errc::corrupt_message);

  auto ok = make_fetch(9, 1).try_read<schema::Fetch>(
    [](schema::Fetch::Reader fetch) { return fetch.getReplicaId(); });
  REQUIRE(ok);
  CHECK(*ok == 9);
  auto done = make_fetch(9, 1).try_read<schema::Fetch>([](schema::Fetch::Reader) {});
  CHECK(done.ok());
}

TEST_CASE("an adopted builder reads in place and references external bytes without copying",
          "[messages][capnp_frame]") {
  // Stored records, 8-byte aligned, kept alive by the pin alone once the test lets go.
  auto stored = std::make_shared<std::vector<uint64_t>>(64, 0x0123456789abcdefULL);
  const auto* bytes = reinterpret_cast<const kj::byte*>(stored->data());
  auto builder = std::make_unique<capnp::MallocMessageBuilder>();
  auto response = builder->initRoot<schema::FetchResponse>();
  auto part = response.initPartitions(1)[0];
  part.initTopicPartition().setTopic("orders");
  part.setHighWatermark(42);
  part.adoptRecords(capnp::Orphanage::getForMessageContaining(part).referenceExternalData(
    capnp::Data::Reader(bytes, 500)));
  auto frame = capnp_frame::adopt(std::move(builder), {stored});
  stored.reset();

  CHECK(frame.adopted());
  auto copy = frame;
  CHECK(copy.shares_buffer_with(frame));
  auto reader = copy.reader<schema::FetchResponse>();
  auto records = reader.root().getPartitions()[0].getRecords();
  CHECK(records.begin() == bytes);
  CHECK(records.size() == 500);
  CHECK(reader.root().getPartitions()[0].getHighWatermark() == 42);
}

TEST_CASE("an adopted builder goes on the wire as the same bytes as its flat form",
          "[messages][capnp_frame]") {
  auto stored = std::make_shared<std::vector<uint64_t>>(300);
  for (size_t i = 0; i < stored->size(); ++i) (*stored)[i] = i * 0x9e3779b97f4a7c15ULL;
  const auto* bytes = reinterpret_cast<const kj::byte*>(stored->data());
  auto build = [&](capnp::MallocMessageBuilder& b, bool external) {
    auto parts = b.initRoot<schema::FetchResponse>().initPartitions(3);
    for (unsigned i = 0; i < 3; ++i) {
      parts[i].initTopicPartition().setPartition(static_cast<int32_t>(i));
      capnp::Data::Reader data(bytes + i * 800, 800 - i * 8);
      if (external)
        parts[i].adoptRecords(
          capnp::Orphanage::getForMessageContaining(parts[i]).referenceExternalData(data));
      else
        parts[i].setRecords(data);
    }
  };
  auto adopted_builder = std::make_unique<capnp::MallocMessageBuilder>();
  build(*adopted_builder, true);
  auto adopted = capnp_frame::adopt(std::move(adopted_builder), {stored});
  CHECK(adopted.segments().size() > 1);

  auto sent = serialize(adopted);
  CHECK(sent.size() == 8 + adopted.size_bytes());
  capnp_frame out;
  REQUIRE(!deserialize(sent, out));
  CHECK_FALSE(out.adopted());
  auto reader = out.reader<schema::FetchResponse>();
  for (unsigned i = 0; i < 3; ++i) {
    auto records = reader.root().getPartitions()[i].getRecords();
    REQUIRE(records.size() == 800 - i * 8);
    CHECK(std::memcmp(records.begin(), bytes + i * 800, records.size()) == 0);
    CHECK(reader.root().getPartitions()[i].getTopicPartition().getPartition() ==
          static_cast<int32_t>(i));
  }
  // A flat frame of the same content reads back the same.
  capnp::MallocMessageBuilder flat_builder;
  build(flat_builder, false);
  auto flat = capnp_frame::from_builder(flat_builder);
  auto flat_reader = flat.reader<schema::FetchResponse>();
  CHECK(flat_reader.root().getPartitions()[2].getRecords() ==
        reader.root().getPartitions()[2].getRecords());
}

TEST_CASE("a frame prints as its size", "[messages][capnp_frame]") {
  auto frame = make_fetch(1, 1);
  auto text = caf::deep_to_string(frame);
  CHECK(text.find("capnp_frame") != std::string::npos);
  CHECK(text.find(std::to_string(frame.size_bytes())) != std::string::npos);
}

} // namespace capstan
