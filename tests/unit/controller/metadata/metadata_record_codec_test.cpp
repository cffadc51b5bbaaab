// Metadata records to and from a Raft entry's bytes: every kind round trips, and bytes a peer or
// a damaged disk could hand over come back as CORRUPT_MESSAGE, never an exception.

#include <catch2/catch.hpp>

#include <cstring>
#include <limits>

#include <capnp/any.h>
#include <capnp/message.h>
#include <capnp/serialize.h>

#include "actors/controller/metadata/metadata_record_codec.hpp"
#include "schema/metadata.capnp.h"
#include "tests/unit/controller/metadata/image_builder.hpp"

using namespace capstan;
using namespace capstan::controller;
using namespace capstan::controller::test;

namespace {

std::vector<metadata_record> one_of_each() {
  const auto t = make_topic_id(7);
  return {
    registration(3, broker_epoch{12}, "rack-b", 9),
    [] {
      auto r = registration(4, broker_epoch{1}, "", 2);
      r.new_data_dir = true;
      return r;
    }(),
    fence_broker_record{node_id{3}, broker_epoch{12}},
    unfence_broker_record{node_id{3}, broker_epoch{12}},
    unregister_broker_record{node_id{3}, broker_epoch{12}},
    topic_record{"orders", t, false, {{"cleanup.policy", "compact"}, {"retention.ms", "-1"}}},
    partition_record{t, partition_id{0}, ids({3, 1, 2}), ids({3, 1}), node_id{3}, leader_epoch{4},
                     partition_epoch{9}, {}, {}},
    partition_change_record{t, partition_id{0}, node_id{1}, ids({1}), std::nullopt,
                            leader_epoch{5}, partition_epoch{10}, {}},
    partition_change_record{t, partition_id{0}, std::nullopt, std::nullopt, ids({1, 2, 4}),
                            leader_epoch{5}, partition_epoch{11}, {}},
    partition_change_record{t, partition_id{0}, no_leader, std::nullopt, std::nullopt,
                            leader_epoch{6}, partition_epoch{12}, {}},
    // A reassignment that starts, and one that ends (both lists empty).
    partition_change_record{t, partition_id{0}, std::nullopt, std::nullopt, ids({1, 2, 5, 4}),
                            leader_epoch{6}, partition_epoch{13},
                            reassignment_state{ids({5}), ids({4})}},
    partition_change_record{t, partition_id{0}, std::nullopt, std::nullopt, ids({1, 2, 5}),
                            leader_epoch{6}, partition_epoch{14}, reassignment_state{}},
    partition_record{t, partition_id{1}, ids({3, 1, 2}), ids({3, 1}), node_id{3}, leader_epoch{4},
                     partition_epoch{9}, reassignment_state{ids({2}), ids({})}, ids({2})},
    remove_topic_record{t},
    topic_config_record{t, {}},
    topic_config_record{t, {{"min.insync.replicas", "2"}}},
    producer_ids_record{1000, 1000},
  };
}

bytes batch_of(const metadata_record& r) { return encode_batch({r}); }

// The encoded batch holding `r` after `edit` changed its builder.
template <class Edit>
bytes edited(const metadata_record& r, Edit edit) {
  auto data = batch_of(r);
  auto words = kj::heapArray<capnp::word>(data.size() / sizeof(capnp::word));
  std::memcpy(words.begin(), data.data(), data.size());
  capnp::FlatArrayMessageReader reader(words);
  capnp::MallocMessageBuilder builder;
  builder.setRoot(reader.getRoot<schema::MetadataBatch>());
  edit(builder.getRoot<schema::MetadataBatch>().getRecords()[0]);
  auto flat = capnp::messageToFlatArray(builder);
  return bytes(flat.asBytes().begin(), flat.asBytes().end());
}

} // namespace

TEST_CASE("every metadata record kind round trips through a batch", "[controller][codec]") {
  const auto records = one_of_each();
  auto decoded = decode_batch(encode_batch(records));
  REQUIRE(decoded.ok());
  CHECK(*decoded == records);
  for (const auto& r : records) {
    INFO(record_kind(r));
    auto one = decode_batch(batch_of(r));
    REQUIRE(one.ok());
    CHECK(one->front() == r);
  }
  auto empty = decode_batch(encode_batch({}));
  REQUIRE(empty.ok());
  CHECK(empty->empty());
  CHECK_FALSE(encode_batch({}).empty());
}

TEST_CASE("a metadata snapshot round trips and names its version", "[controller][codec]") {
  snapshot_contents contents{"cluster-a", one_of_each(), broker_epoch{17}};
  auto decoded = decode_snapshot(encode_snapshot(contents));
  REQUIRE(decoded.ok());
  CHECK(*decoded == contents);
  contents.max_broker_epoch = broker_epoch{-1};
  CHECK_FALSE(decode_snapshot(encode_snapshot(contents)).ok());

  capnp::MallocMessageBuilder builder;
  auto root = builder.initRoot<schema::MetadataSnapshot>();
  root.setVersion(metadata_snapshot_version + 1);
  auto flat = capnp::messageToFlatArray(builder);
  auto newer = decode_snapshot(bytes(flat.asBytes().begin(), flat.asBytes().end()));
  CHECK(newer.code() == errc::corrupt_message);
  CHECK(newer.err().message.find("version") != std::string::npos);
}

TEST_CASE("bytes that are not one metadata message are CORRUPT_MESSAGE", "[controller][codec]") {
  CHECK(decode_batch(bytes{}).code() == errc::corrupt_message);
  auto good = encode_batch(one_of_each());
  bytes odd(good.begin(), good.end() - 3);
  CHECK(decode_batch(odd).code() == errc::corrupt_message);
  bytes cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(good.size() / 2 / 8 * 8));
  CHECK(decode_batch(cut).code() == errc::corrupt_message);
  bytes noise(64);
  for (size_t i = 0; i < noise.size(); ++i) noise[i] = static_cast<uint8_t>(i * 37 + 11);
  CHECK_FALSE(decode_batch(noise).ok());
  CHECK(decode_snapshot(bytes{}).code() == errc::corrupt_message);
}

TEST_CASE("no flipped bit in an encoded batch makes decoding throw", "[controller][codec]") {
  const auto good = encode_batch(one_of_each());
  size_t refused = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    for (int bit = 0; bit < 8; bit += 3) {
      auto damaged = good;
      damaged[i] ^= static_cast<uint8_t>(1u << bit);
      auto decoded = decode_batch(damaged);
      if (!decoded.ok()) {
        ++refused;
        CHECK((decoded.code() == errc::corrupt_message || decoded.code() == errc::message_too_large));
      }
    }
  }
  CHECK(refused > 0);
}

TEST_CASE("fields out of their range are refused, naming the record", "[controller][codec]") {
  const auto t = make_topic_id(7);
  const partition_record partition{t, partition_id{0}, ids({1, 2}), ids({1, 2}), node_id{1},
                                   leader_epoch{0}, partition_epoch{0}, {}, {}};
  struct row {
    const char* what;
    bytes data;
  };
  const std::vector<row> rows = {
    {"negative node id", edited(registration(1, broker_epoch{1}),
                                [](auto r) { r.getRegisterBroker().setNodeId(-1); })},
    {"short incarnation id",
     edited(registration(1, broker_epoch{1}), [](auto r) {
       uint8_t fifteen[15] = {};
       r.getRegisterBroker().setIncarnationId(capnp::Data::Reader(fifteen, 15));
     })},
    {"negative broker epoch", edited(fence_broker_record{node_id{1}, broker_epoch{1}},
                                     [](auto r) { r.getFenceBroker().setBrokerEpoch(-4); })},
    {"topic id of 15 bytes", edited(remove_topic_record{t}, [](auto r) {
       uint8_t fifteen[15] = {1};
       r.getRemoveTopic().setTopicId(capnp::Data::Reader(fifteen, 15));
     })},
    {"topic id of zeros", edited(remove_topic_record{t}, [](auto r) {
       uint8_t zeros[16] = {};
       r.getRemoveTopic().setTopicId(capnp::Data::Reader(zeros, 16));
     })},
    {"empty topic name", edited(topic_record{"orders", t, false, {}},
                                [](auto r) { r.getTopic().setName(""); })},
    {"empty config name", edited(topic_record{"orders", t, false, {{"a", "1"}}}, [](auto r) {
       r.getTopic().getConfigs()[0].setName("");
     })},
    {"config set twice", edited(topic_record{"orders", t, false, {{"a", "1"}, {"b", "2"}}},
                                [](auto r) { r.getTopic().getConfigs()[1].setName("a"); })},
    {"negative partition", edited(partition, [](auto r) { r.getPartition().setPartition(-1); })},
    {"replica listed twice", edited(partition, [](auto r) {
       r.getPartition().getReplicas().set(1, 1);
     })},
    {"negative ISR member", edited(partition, [](auto r) { r.getPartition().getIsr().set(0, -2); })},
    {"leader below -1", edited(partition, [](auto r) { r.getPartition().setLeader(-2); })},
    {"negative leader epoch",
     edited(partition, [](auto r) { r.getPartition().setLeaderEpoch(-1); })},
    {"partition epoch at the maximum", edited(partition, [](auto r) {
       r.getPartition().setPartitionEpoch(std::numeric_limits<int32_t>::max());
     })},
    {"change with a duplicate ISR",
     edited(partition_change_record{t, partition_id{0}, std::nullopt, ids({1, 2}), std::nullopt,
                                    leader_epoch{0}, partition_epoch{1}, {}},
            [](auto r) { r.getPartitionChange().getIsr().set(1, 1); })},
    {"empty producer id block", edited(producer_ids_record{0, 10},
                                       [](auto r) { r.getProducerIds().setSize(0); })},
    {"overflowing producer id block", edited(producer_ids_record{0, 10}, [](auto r) {
       r.getProducerIds().setFirstId(std::numeric_limits<int64_t>::max() - 5);
     })},
    {"unknown record kind", edited(producer_ids_record{0, 10}, [](auto r) {
       capnp::AnyStruct::Builder any(std::move(r));
       auto section = any.getDataSection();
       section[0] = 0xff;
       section[1] = 0x00;
     })},
  };
  for (const auto& r : rows) {
    INFO(r.what);
    auto decoded = decode_batch(r.data);
    REQUIRE_FALSE(decoded.ok());
    CHECK(decoded.code() == errc::corrupt_message);
    CHECK(decoded.err().message.find("metadata record 0") != std::string::npos);
  }
}
