#include "actors/gateway/request_validation.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include <capnp/serialize.h>
#include <catch2/catch.hpp>

#include "runtime/batch/record_batch_builder.hpp"
#include "runtime/batch/record_batch_format.hpp"
#include "schema/client.capnp.h"

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

TEST_CASE("a validated produce batch is a copy of its own, without the padding",
          "[gateway][validation]") {
  auto batch = one_batch(5);
  auto padded = batch;
  padded.resize((batch.size() + 7) / 8 * 8, 0);
  auto v = validate_produce_records(padded);
  REQUIRE(v.ok());
  const bytes_view copy = v->buffer().view();
  REQUIRE(copy.size() == batch.size());
  CHECK(std::equal(copy.begin(), copy.end(), batch.begin()));
  // The connection's buffer is reused after the call: the batch must not point into it.
  CHECK(copy.data() != padded.data());
  CHECK(v->view().record_count() == 1);
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

TEST_CASE("request lists above max_request_list_entries are INVALID_REQUEST naming the list",
          "[gateway][validation]") {
  CHECK(validate_list_length(0, "configs").ok());
  CHECK(validate_list_length(max_request_list_entries, "configs").ok());
  auto s = validate_list_length(max_request_list_entries + 1, "configs");
  CHECK(s.code() == errc::invalid_request);
  CHECK(s.err().message.find("configs") != std::string::npos);
}

// Found by tests/fuzz/rpc_request_fuzz (tests/fuzz/corpus/rpc_request/
// found-create-topic-amplified-configs): createTopic params of 155 bytes whose configs list claims
// 4,096,000 empty entries, which the gateway read one by one before it checked list lengths.
TEST_CASE("the fuzzer's createTopic with 4 million configs in 155 bytes is refused",
          "[gateway][validation]") {
  static const uint8_t input[] = {
      0x00, 0x00, 0x00, 0x00, 0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x01, 0x00, 0x02, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
      0x05, 0x00, 0x00, 0x00, 0x3a, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00,
      0x27, 0x00, 0x00, 0x00, 0x6f, 0x72, 0x64, 0x65, 0x72, 0x73, 0x00, 0x00,
      0x00, 0x00, 0xfa, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08,
      0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x0d, 0x00, 0x00, 0x00, 0x7a,
      0x00, 0x00, 0x00, 0x11, 0x00, 0x00, 0x00, 0x42, 0x00, 0x00, 0x00, 0x11,
      0x00, 0x00, 0x00, 0xa2, 0x00, 0x00, 0x00, 0x19, 0x00, 0x00, 0x00, 0x12,
      0x00, 0x00, 0x00, 0x63, 0x6c, 0x65, 0x61, 0x6e, 0x75, 0x70, 0x2e, 0x70,
      0x6f, 0x6c, 0x69, 0x63, 0x79, 0x00, 0x00, 0x63, 0x6f, 0x6d, 0x70, 0x61,
      0x63, 0x74, 0x00, 0x6d, 0x69, 0x6e, 0x2e, 0x69, 0x6e, 0x73, 0x79, 0x6e,
      0x63, 0x2e, 0x72, 0x65, 0x70, 0x6c, 0x69, 0x63, 0x61, 0x73, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x31, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  };
  auto words = kj::heapArray<capnp::word>((sizeof(input) + 7) / 8);
  std::memset(words.begin(), 0, words.size() * sizeof(capnp::word));
  std::memcpy(words.begin(), input, sizeof(input));
  capnp::ReaderOptions options;
  options.traversalLimitInWords = rpc_traversal_limit_words;
  capnp::FlatArrayMessageReader reader(words, options);
  auto configs = reader.getRoot<rpc::Capstan::CreateTopicParams>().getConfigs();
  CHECK(configs.size() == 4096000);
  CHECK(validate_list_length(configs.size(), "configs").code() == errc::invalid_request);
}
