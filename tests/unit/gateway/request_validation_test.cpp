#include "actors/gateway/request_validation.hpp"

#include <string>

#include <catch2/catch.hpp>

#include "runtime/batch/record_batch_builder.hpp"
#include "runtime/batch/record_batch_format.hpp"

using namespace capstan;

namespace {

bytes one_batch(size_t value_size = 10) {
  record_batch_builder builder(offset{0}, 1000);
  builder.add("k", std::string(value_size, 'v'), 1000);
  return builder.build();
}

} // namespace

TEST_CASE("topic and partition checks name the error a client sees", "[gateway][validation]") {
  CHECK(validate_topic_partition("orders", 0).ok());
  CHECK(validate_topic_partition("bad name", 0).code() == errc::invalid_topic_exception);
  CHECK(validate_topic_partition("", 0).code() == errc::invalid_topic_exception);
  CHECK(validate_topic_partition("..", 0).code() == errc::invalid_topic_exception);
  CHECK(validate_topic_partition(std::string(250, 'a'), 0).code() == errc::invalid_topic_exception);
  CHECK(validate_topic_partition("orders", -1).code() == errc::unknown_topic_or_partition);
}

TEST_CASE("acks other than 0, 1 and -1 are rejected", "[gateway][validation]") {
  for (int16_t acks : {0, 1, -1}) CHECK(validate_acks(acks).ok());
  for (int16_t acks : {5, 2, -2, 32767}) {
    auto s = validate_acks(acks);
    CHECK(s.code() == errc::invalid_required_acks);
    CHECK(s.err().message.find(std::to_string(acks)) != std::string::npos);
  }
  CHECK(validate_timeout(0, "timeoutMs").ok());
  CHECK(validate_timeout(-1, "timeoutMs").code() == errc::invalid_request);
}

TEST_CASE("a produce carries exactly one valid batch, optionally zero-padded",
          "[gateway][validation]") {
  auto batch = one_batch(13);
  REQUIRE(batch.size() % 8 != 0);
  auto exact = validate_produce_records(batch);
  REQUIRE(exact.ok());
  CHECK(exact->size() == batch.size());

  auto padded = batch;
  padded.resize((batch.size() + 7) / 8 * 8, 0);
  auto p = validate_produce_records(padded);
  REQUIRE(p.ok());
  CHECK(p->size() == batch.size());

  SECTION("non-zero padding") {
    padded.back() = 1;
    CHECK(validate_produce_records(padded).code() == errc::corrupt_message);
  }
  SECTION("two batches") {
    auto two = padded;
    two.insert(two.end(), batch.begin(), batch.end());
    CHECK(validate_produce_records(two).code() == errc::corrupt_message);
  }
  SECTION("empty") {
    CHECK(validate_produce_records({}).code() == errc::corrupt_message);
  }
  SECTION("garbage") {
    bytes junk(100, 0xab);
    CHECK(validate_produce_records(junk).code() == errc::corrupt_message);
  }
  SECTION("wrong CRC") {
    batch.back() ^= 0x01;
    CHECK(validate_produce_records(batch).code() == errc::corrupt_message);
  }
  SECTION("truncated") {
    batch.pop_back();
    CHECK(validate_produce_records(batch).code() == errc::corrupt_message);
  }
  SECTION("above the size limit") {
    CHECK(validate_produce_records(batch, batch.size() - 1).code() == errc::message_too_large);
  }
}

TEST_CASE("fetch limits: offsets, sizes and waits are checked and maxBytes is capped",
          "[gateway][validation]") {
  auto ok = validate_fetch(5, 1000, 1, 500);
  REQUIRE(ok.ok());
  CHECK(ok->from == offset{5});
  CHECK(ok->max_bytes == 1000);

  auto capped = validate_fetch(0, std::numeric_limits<int32_t>::max(), 0, 0);
  REQUIRE(capped.ok());
  CHECK(capped->max_bytes == max_fetch_bytes);

  auto smaller = validate_fetch(0, std::numeric_limits<int32_t>::max(), 0, 0, 4096);
  REQUIRE(smaller.ok());
  CHECK(smaller->max_bytes == 4096);

  CHECK(validate_fetch(-1, 1000, 1, 0).code() == errc::offset_out_of_range);
  CHECK(validate_fetch(0, 0, 1, 0).code() == errc::invalid_request);
  CHECK(validate_fetch(0, -5, 1, 0).code() == errc::invalid_request);
  CHECK(validate_fetch(0, 10, -1, 0).code() == errc::invalid_request);
  CHECK(validate_fetch(0, 10, 1, -1).code() == errc::invalid_request);
}

TEST_CASE("list offsets timestamps and group ids", "[gateway][validation]") {
  CHECK(validate_list_offsets_timestamp(-2).ok());
  CHECK(validate_list_offsets_timestamp(-1).ok());
  CHECK(validate_list_offsets_timestamp(0).ok());
  CHECK(validate_list_offsets_timestamp(-3).code() == errc::invalid_request);
  CHECK(validate_group_id("g").ok());
  CHECK(validate_group_id("").code() == errc::invalid_request);
  CHECK(validate_group_id(std::string(256, 'g')).code() == errc::invalid_request);
}
