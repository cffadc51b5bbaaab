// capstan errors cross actor boundaries as caf::error and come back with code and text intact.

#include <string>
#include <vector>

#include <caf/atom.hpp>
#include <caf/behavior.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/exit_reason.hpp>
#include <caf/result.hpp>
#include <caf/sec.hpp>
#include <catch2/catch.hpp>

#include "runtime/actor/caf_error.hpp"
#include "tests/support/caf_fixture.hpp"

namespace capstan {
namespace {

using lookup_atom = caf::atom_constant<caf::atom("lookup")>;

constexpr errc all_codes[] = {
  errc::not_leader_or_follower, errc::unknown_topic_or_partition, errc::offset_out_of_range,
  errc::corrupt_message, errc::message_too_large, errc::not_enough_replicas,
  errc::not_enough_replicas_after_append, errc::request_timed_out, errc::fenced_leader_epoch,
  errc::unknown_leader_epoch, errc::stale_controller_epoch, errc::inconsistent_topic_id,
  errc::kafka_storage_error, errc::invalid_topic_exception, errc::topic_already_exists,
  errc::invalid_replication_factor, errc::policy_violation, errc::unsupported_compression_type,
  errc::invalid_record, errc::invalid_config, errc::unknown_server_error, errc::network_exception,
  errc::invalid_request, errc::invalid_required_acks, errc::invalid_partitions,
  errc::invalid_timestamp, errc::not_controller, errc::invalid_update_version,
  errc::ineligible_replica, errc::duplicate_broker_registration, errc::inconsistent_cluster_id,
  errc::stale_broker_epoch, errc::election_not_needed, errc::preferred_leader_not_available,
  errc::out_of_order_sequence_number, errc::invalid_producer_epoch, errc::inconsistent_voter_set,
  errc::invalid_replica_assignment, errc::no_reassignment_in_progress,
  errc::broker_id_not_registered, errc::coordinator_load_in_progress,
  errc::coordinator_not_available, errc::not_coordinator, errc::illegal_generation,
  errc::inconsistent_group_protocol, errc::unknown_member_id, errc::invalid_session_timeout,
  errc::rebalance_in_progress, errc::member_id_required, errc::group_max_size_reached,
  errc::fenced_instance_id, errc::group_not_empty, errc::group_id_not_found,
  errc::unsupported_version, errc::duplicate_voter, errc::voter_not_found,
  errc::unknown_topic_id, errc::broker_not_available,
};

} // namespace

TEST_CASE("a wire code maps to its errc, one past the last is UNKNOWN_SERVER_ERROR",
          "[actor][caf_error]") {
  for (auto code : all_codes) {
    INFO(to_string(code));
    CHECK(errc_from_code(static_cast<uint8_t>(code)) == code);
    CHECK((to_string(code) != "UNKNOWN_SERVER_ERROR" || code == errc::unknown_server_error));
  }
  CHECK(last_errc == errc::broker_not_available);
  CHECK(to_string(errc::unsupported_version) == "UNSUPPORTED_VERSION");
  CHECK(to_string(errc::duplicate_voter) == "DUPLICATE_VOTER");
  CHECK(to_string(errc::voter_not_found) == "VOTER_NOT_FOUND");
  CHECK(to_string(errc::unknown_topic_id) == "UNKNOWN_TOPIC_ID");
  CHECK(to_string(errc::broker_not_available) == "BROKER_NOT_AVAILABLE");
  CHECK(to_string(errc::not_coordinator) == "NOT_COORDINATOR");
  CHECK(to_string(errc::invalid_timestamp) == "INVALID_TIMESTAMP");
  CHECK(to_string(errc::preferred_leader_not_available) == "PREFERRED_LEADER_NOT_AVAILABLE");
  CHECK(to_string(errc::out_of_order_sequence_number) == "OUT_OF_ORDER_SEQUENCE_NUMBER");
  CHECK(to_string(errc::invalid_producer_epoch) == "INVALID_PRODUCER_EPOCH");
  CHECK(to_string(errc::inconsistent_voter_set) == "INCONSISTENT_VOTER_SET");
  CHECK(to_string(errc::no_reassignment_in_progress) == "NO_REASSIGNMENT_IN_PROGRESS");
  CHECK(to_string(errc::broker_id_not_registered) == "BROKER_ID_NOT_REGISTERED");
  CHECK(errc_from_code(static_cast<uint8_t>(last_errc) + 1) == errc::unknown_server_error);
  CHECK(errc_from_code(255) == errc::unknown_server_error);
}

TEST_CASE("every errc round trips through caf::error with its message text",
          "[actor][caf_error]") {
  for (auto code : all_codes) {
    auto e = to_caf_error(make_error(code, "partition orders-3: detail"));
    CHECK(e.category() == caf_error_category);
    CHECK(e.code() == static_cast<uint8_t>(code));
    auto back = from_caf_error(e);
    CHECK(back.code == code);
    CHECK(back.message == "partition orders-3: detail");
  }
}

TEST_CASE("an errc converts to caf::error implicitly and without text", "[actor][caf_error]") {
  caf::error e = errc::fenced_leader_epoch;
  CHECK(e.category() == caf_error_category);
  auto back = from_caf_error(e);
  CHECK(back.code == errc::fenced_leader_epoch);
  CHECK(back.message.empty());
  CHECK_FALSE(to_caf_error(error{}));
  CHECK(from_caf_error(caf::error{}).code == errc::none);
}

TEST_CASE("CAF's own errors map to REQUEST_TIMED_OUT or the generic errc",
          "[actor][caf_error]") {
  CHECK(from_caf_error(caf::make_error(caf::sec::request_timeout)).code
        == errc::request_timed_out);
  CHECK(from_caf_error(caf::make_error(caf::sec::request_receiver_down)).code
        == errc::request_timed_out);
  CHECK(from_caf_error(caf::make_error(caf::exit_reason::kill)).code == errc::request_timed_out);
  auto unexpected = from_caf_error(caf::make_error(caf::sec::unexpected_message));
  CHECK(unexpected.code == generic_caf_errc);
  CHECK(unexpected.message.find("unexpected_message") != std::string::npos);
  auto foreign = from_caf_error(caf::error{3, caf::atom("other")});
  CHECK(foreign.code == generic_caf_errc);
}

TEST_CASE_METHOD(test::caf_fixture, "a capstan caf::error survives serialization",
                 "[actor][caf_error]") {
  auto e = to_caf_error(make_error(errc::offset_out_of_range, "offset 99 > LEO 10"));
  std::vector<char> buf;
  caf::binary_serializer sink{sys(), buf};
  REQUIRE(!sink(e));
  caf::error out;
  caf::binary_deserializer source{sys(), buf};
  REQUIRE(!source(out));
  auto back = from_caf_error(out);
  CHECK(back.code == errc::offset_out_of_range);
  CHECK(back.message == "offset 99 > LEO 10");
}

TEST_CASE_METHOD(test::caf_fixture, "the actor system renders capstan errors with Kafka's names",
                 "[actor][caf_error]") {
  auto text = sys().render(to_caf_error(make_error(errc::not_leader_or_follower, "node 2 leads")));
  CHECK(text.find("NOT_LEADER_OR_FOLLOWER") != std::string::npos);
  CHECK(text.find("node 2 leads") != std::string::npos);
}

TEST_CASE_METHOD(test::caf_fixture, "an actor's errc reply reaches the requester as that errc",
                 "[actor][caf_error]") {
  auto lookup = spawn([](caf::event_based_actor*) -> caf::behavior {
    return {[](lookup_atom, int partition) -> caf::result<int> {
      if (partition < 0)
        return to_caf_error(make_error(errc::unknown_topic_or_partition, "no partition"));
      return partition * 2;
    }};
  });
  auto ok = request<int>(lookup, lookup_atom::value, 21);
  REQUIRE(ok);
  CHECK(*ok == 42);
  auto bad = request<int>(lookup, lookup_atom::value, -1);
  REQUIRE_FALSE(bad);
  auto back = from_caf_error(bad.error());
  CHECK(back.code == errc::unknown_topic_or_partition);
  CHECK(back.message == "no partition");
}

} // namespace capstan
