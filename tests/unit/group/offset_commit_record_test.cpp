#include <catch2/catch.hpp>

#include "actors/group/offset_commit_record.hpp"

using namespace capstan;

TEST_CASE("offset commit keys and values round-trip in Kafka's layout", "[group][record]") {
  offset_commit_key key{"payments", "orders", 7};
  auto kb = encode_offset_commit_key(key);
  // int16 version 1, "payments", "orders", int32 7
  CHECK(kb.size() == 2 + 2 + 8 + 2 + 6 + 4);
  CHECK(kb[0] == 0);
  CHECK(kb[1] == 1);
  auto k = decode_offset_commit_key(kb);
  REQUIRE(k);
  REQUIRE(*k);
  CHECK(**k == key);

  offset_commit_value value{12345, -1, "meta", 1700000000000};
  auto vb = encode_offset_commit_value(value);
  CHECK(vb.size() == 2 + 8 + 4 + 2 + 4 + 8);
  CHECK(vb[1] == 3);
  auto v = decode_offset_commit_value(vb);
  REQUIRE(v);
  CHECK(*v == value);
}

TEST_CASE("every truncation of a record is CORRUPT_MESSAGE, never a read past the end",
          "[group][record]") {
  auto kb = encode_offset_commit_key({"g", "t", 1});
  auto vb = encode_offset_commit_value({5, 2, "m", 9});
  for (size_t n = 0; n < kb.size(); ++n)
    CHECK(decode_offset_commit_key(bytes_view{kb.data(), n}).code() == errc::corrupt_message);
  for (size_t n = 0; n < vb.size(); ++n)
    CHECK(decode_offset_commit_value(bytes_view{vb.data(), n}).code() == errc::corrupt_message);
  kb.push_back(0);
  CHECK(decode_offset_commit_key(kb).code() == errc::corrupt_message);
}

TEST_CASE("group metadata keys are skipped and unknown versions refused", "[group][record]") {
  bytes group_metadata_key{0, 2, 0, 1, 'g'};
  auto k = decode_offset_commit_key(group_metadata_key);
  REQUIRE(k);
  CHECK_FALSE(*k);
  bytes future_key{0, 9, 0, 0, 0, 0, 0, 0, 0, 0};
  CHECK(decode_offset_commit_key(future_key).code() == errc::corrupt_message);
  bytes negative_length{0, 1, 0xff, 0xff};
  CHECK(decode_offset_commit_key(negative_length).code() == errc::corrupt_message);
}

TEST_CASE("older value versions decode", "[group][record]") {
  // v1: offset 42, metadata "x", commit timestamp 7, expire timestamp 8
  bytes v1{0, 1, 0, 0, 0, 0, 0, 0, 0, 42, 0, 1, 'x', 0, 0, 0, 0, 0, 0, 0, 7,
           0, 0, 0, 0, 0, 0, 0, 8};
  auto v = decode_offset_commit_value(v1);
  REQUIRE(v);
  CHECK(v->offset == 42);
  CHECK(v->metadata == "x");
  CHECK(v->commit_timestamp == 7);
  CHECK(v->leader_epoch == -1);
}

TEST_CASE("a group maps to abs(Java hashCode) modulo the partition count", "[group][record]") {
  // "hello".hashCode() == 99162322 in Java.
  CHECK(offsets_partition_for("hello", 50) == 22);
  CHECK(offsets_partition_for("hello", 1) == 0);
  // "polygenelubricants".hashCode() == Integer.MIN_VALUE; Kafka's Utils.abs maps it to 0.
  CHECK(offsets_partition_for("polygenelubricants", 7) == 0);
  for (const char* g : {"a", "group-1", "zzzzzzzzzzzzzzzzzzzzzzzz"}) {
    auto p = offsets_partition_for(g, 13);
    CHECK(p >= 0);
    CHECK(p < 13);
  }
}
