#include "runtime/client/producer_sequencer.hpp"

#include <catch2/catch.hpp>

#include <limits>

using namespace capstan;
using namespace capstan::client;

namespace {

const topic_partition_key p0{"t", 0};
const topic_partition_key p1{"t", 1};

producer_sequencer with_identity(int64_t id = 42, int16_t epoch = 0) {
  producer_sequencer s;
  s.set_identity({id, epoch});
  return s;
}

} // namespace

TEST_CASE("idempotence follows Kafka 3.x: implicit default gives way, explicit conflict fails",
          "[client][sequencer]") {
  client_config c;
  CHECK(*resolve_idempotence(c)); // acks all, 5 in flight
  c.acks = 1;
  CHECK_FALSE(*resolve_idempotence(c));
  c.enable_idempotence = true;
  auto r = resolve_idempotence(c);
  REQUIRE_FALSE(r);
  CHECK(r.code() == errc::invalid_config);
  CHECK(r.err().message.find("acks") != std::string::npos);
  c.enable_idempotence = false;
  CHECK_FALSE(*resolve_idempotence(c));

  client_config wide;
  wide.max_in_flight = 6;
  CHECK_FALSE(*resolve_idempotence(wide));
  wide.enable_idempotence = true;
  auto w = resolve_idempotence(wide);
  REQUIRE_FALSE(w);
  CHECK(w.code() == errc::invalid_config);
  CHECK(w.err().message.find("in flight") != std::string::npos);
}

TEST_CASE("nothing is sent before a producer id is known", "[client][sequencer]") {
  producer_sequencer s;
  CHECK(s.wants_identity());
  CHECK(s.free_slots(p0, 5) == 0);
  s.set_identity({7, 3});
  CHECK_FALSE(s.wants_identity());
  CHECK(s.free_slots(p0, 5) == 5);
}

TEST_CASE("each partition numbers its batches from 0 by record count", "[client][sequencer]") {
  auto s = with_identity();
  CHECK(s.next(p0, 3) == batch_stamp{42, 0, 0});
  CHECK(s.next(p0, 2) == batch_stamp{42, 0, 3});
  CHECK(s.next(p1, 10) == batch_stamp{42, 0, 0});
  CHECK(s.next(p0, 1) == batch_stamp{42, 0, 5});
  CHECK(s.in_flight(p0) == 3);
  CHECK(s.free_slots(p0, 5) == 2);
  CHECK(s.free_slots(p1, 5) == 4);
}

TEST_CASE("sequences wrap from INT32_MAX to 0 as Kafka's incrementSequence",
          "[client][sequencer]") {
  auto s = with_identity();
  // Walk the sequence to the top in one enormous (bookkeeping-only) batch.
  auto first = s.next(p0, std::numeric_limits<int32_t>::max());
  s.acknowledged(p0, first);
  CHECK(s.next(p0, 3).base_sequence == std::numeric_limits<int32_t>::max());
  CHECK(s.peek(p0)->base_sequence == 2);
}

TEST_CASE("at most max_in_flight batches per partition are unacknowledged", "[client][sequencer]") {
  auto s = with_identity();
  for (int i = 0; i < 5; ++i) s.next(p0, 1);
  CHECK(s.free_slots(p0, 5) == 0);
  s.acknowledged(p0, {42, 0, 2});
  CHECK(s.free_slots(p0, 5) == 1);
}

TEST_CASE("undecided errors are retried with the same stamp, and hold back new batches",
          "[client][sequencer]") {
  auto s = with_identity();
  const auto a = s.next(p0, 1);
  const auto b = s.next(p0, 1);
  for (auto code : {errc::request_timed_out, errc::network_exception, errc::not_leader_or_follower,
                    errc::not_enough_replicas_after_append}) {
    CHECK(s.failed(p0, a, code, true) == failure_verdict::retry);
    CHECK(s.free_slots(p0, 5) == 0);
    s.resent(p0);
    CHECK(s.free_slots(p0, 5) == 3);
  }
  s.acknowledged(p0, a);
  s.acknowledged(p0, b);
  CHECK(s.in_flight(p0) == 0);
  CHECK(s.next(p0, 1) == batch_stamp{42, 0, 2});
}

TEST_CASE("OUT_OF_ORDER_SEQUENCE_NUMBER is retried only while an earlier batch is unacknowledged",
          "[client][sequencer]") {
  auto s = with_identity();
  const auto a = s.next(p0, 1);
  const auto b = s.next(p0, 1);
  // b reached a new leader before a's retry: a may still land and close the gap.
  CHECK(s.failed(p0, b, errc::out_of_order_sequence_number, true) == failure_verdict::retry);
  s.resent(p0);
  s.acknowledged(p0, a);
  // Now nothing before b is outstanding: the gap is real.
  CHECK(s.failed(p0, b, errc::out_of_order_sequence_number, true) == failure_verdict::fail);
}

TEST_CASE("no retry once the delivery timeout passed", "[client][sequencer]") {
  auto s = with_identity();
  const auto a = s.next(p0, 1);
  CHECK(s.failed(p0, a, errc::request_timed_out, false) == failure_verdict::fail);
}

TEST_CASE("after a batch fails for good its partition drains, then restarts at sequence 0 "
          "under the next epoch",
          "[client][sequencer]") {
  auto s = with_identity(42, 0);
  const auto a = s.next(p0, 2);
  const auto b = s.next(p0, 2);
  const auto other = s.next(p1, 1);
  CHECK(s.failed(p0, a, errc::message_too_large, true) == failure_verdict::fail);
  // b is still in flight: the partition sends nothing new until it is settled.
  CHECK(s.free_slots(p0, 5) == 0);
  CHECK(s.failed(p0, b, errc::out_of_order_sequence_number, true) == failure_verdict::fail);
  CHECK(s.free_slots(p0, 5) == 5);
  CHECK(s.next(p0, 1) == batch_stamp{42, 1, 0});
  // Other partitions keep their epoch and sequences.
  s.acknowledged(p1, other);
  CHECK(s.next(p1, 1) == batch_stamp{42, 0, 1});
}

TEST_CASE("a partition whose epoch is exhausted waits for a new producer id",
          "[client][sequencer]") {
  auto s = with_identity(42, std::numeric_limits<int16_t>::max());
  const auto a = s.next(p0, 1);
  CHECK(s.failed(p0, a, errc::invalid_producer_epoch, true) == failure_verdict::fail);
  CHECK(s.free_slots(p0, 5) == 0);
  CHECK(s.wants_identity());
  s.set_identity({43, 0});
  CHECK_FALSE(s.wants_identity());
  CHECK(s.free_slots(p0, 5) == 5);
  CHECK(s.next(p0, 1) == batch_stamp{43, 0, 0});
}

TEST_CASE("a response for a stamp of an earlier epoch changes nothing", "[client][sequencer]") {
  auto s = with_identity();
  const auto a = s.next(p0, 1);
  CHECK(s.failed(p0, a, errc::corrupt_message, true) == failure_verdict::fail);
  CHECK(s.free_slots(p0, 5) == 5); // restarted under epoch 1
  const auto b = s.next(p0, 1);
  s.acknowledged(p0, a);
  CHECK(s.failed(p0, a, errc::request_timed_out, true) == failure_verdict::fail);
  CHECK(s.in_flight(p0) == 1);
  s.acknowledged(p0, b);
  CHECK(s.in_flight(p0) == 0);
}

TEST_CASE("a batch still in flight when a later batch of its partition is acknowledged is in the "
          "log, so its failure reports it appended whatever the error",
          "[client][sequencer]") {
  // The chaos test's case: batch 0 hangs at an old leader that appended it before it stalled; the
  // new leader has it, takes the later batches and evicts it from the five it remembers, so a
  // resend of batch 0 gets OUT_OF_ORDER_SEQUENCE_NUMBER although it is in the log.
  auto s = with_identity();
  const auto first = s.next(p0, 1);
  const auto second = s.next(p0, 1);
  const auto third = s.next(p0, 1);
  s.acknowledged(p0, second);
  CHECK(s.failed(p0, first, errc::out_of_order_sequence_number, true) == failure_verdict::appended);
  CHECK(s.in_flight(p0) == 1);
  // Not a failure: the partition goes on with its sequences, no restart.
  CHECK(s.free_slots(p0, 5) == 4);
  CHECK(s.peek(p0) == batch_stamp{42, 0, 3});

  // A timeout of such a batch needs no resend either, also once the time is up.
  s.acknowledged(p0, s.next(p0, 1));
  CHECK(s.failed(p0, third, errc::request_timed_out, false) == failure_verdict::appended);
  CHECK(s.in_flight(p0) == 0);
}

TEST_CASE("a batch resent before a later one was acknowledged is known appended once it is",
          "[client][sequencer]") {
  auto s = with_identity();
  const auto first = s.next(p0, 1);
  const auto second = s.next(p0, 1);
  REQUIRE(s.failed(p0, first, errc::request_timed_out, true) == failure_verdict::retry);
  s.resent(p0);
  s.acknowledged(p0, second);
  CHECK(s.failed(p0, first, errc::out_of_order_sequence_number, true) == failure_verdict::appended);
  CHECK(s.free_slots(p0, 5) == 5);
}

TEST_CASE("an acknowledgement marks only earlier batches of its own partition and epoch",
          "[client][sequencer]") {
  auto s = with_identity();
  const auto a0 = s.next(p0, 1);
  const auto b0 = s.next(p1, 1);
  s.acknowledged(p1, b0);
  CHECK(s.failed(p0, a0, errc::request_timed_out, true) == failure_verdict::retry);
}

TEST_CASE(
    "OUT_OF_ORDER_SEQUENCE_NUMBER fails a batch whose earlier batches in flight are all known "
    "appended",
    "[client][sequencer]") {
  auto s = with_identity();
  const auto a = s.next(p0, 1);
  const auto m = s.next(p0, 1);
  const auto b = s.next(p0, 1);
  s.acknowledged(p0, m);
  // a is in the log and cannot close a gap before b: the gap is real.
  CHECK(s.failed(p0, b, errc::out_of_order_sequence_number, true) == failure_verdict::fail);
  CHECK(s.failed(p0, a, errc::request_timed_out, true) == failure_verdict::appended);
}
