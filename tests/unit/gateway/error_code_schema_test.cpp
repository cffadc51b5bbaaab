// schema/client.capnp's ErrorCode is the native API's published list of error codes: it must name
// every errc, in errc's order (the ordinal is what crosses the wire), and give Kafka's number for
// each, which the Kafka listener answers with.

#include <cctype>
#include <set>
#include <string>

#include <capnp/schema.h>
#include <catch2/catch.hpp>

#include "actors/gateway/kafka/kafka_error_code.hpp"
#include "schema/client.capnp.h"

using namespace capstan;

namespace {

// NOT_LEADER_OR_FOLLOWER as the schema spells it: notLeaderOrFollower.
std::string camel_case(std::string_view upper) {
  std::string out;
  bool up = false;
  for (char c : upper) {
    if (c == '_') {
      up = true;
      continue;
    }
    const auto lower = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(lower))) : lower;
    up = false;
  }
  return out;
}

} // namespace

TEST_CASE("schema/client.capnp's ErrorCode names every errc in its order", "[gateway][schema]") {
  const auto enumerants = capnp::Schema::from<rpc::ErrorCode>().getEnumerants();
  REQUIRE(enumerants.size() == static_cast<size_t>(last_errc) + 1);
  for (size_t i = 0; i < enumerants.size(); ++i) {
    const auto code = static_cast<errc>(i);
    INFO(to_string(code));
    CHECK(std::string(enumerants[static_cast<unsigned>(i)].getProto().getName().cStr()) ==
          camel_case(to_string(code)));
  }
}

TEST_CASE("the Kafka numbers of the schema's error codes are Kafka's", "[gateway][schema][kafka]") {
  // A sample across the list, from Kafka's protocol documentation.
  CHECK(kafka_error_code(errc::none) == 0);
  CHECK(kafka_error_code(errc::offset_out_of_range) == 1);
  CHECK(kafka_error_code(errc::not_leader_or_follower) == 6);
  CHECK(kafka_error_code(errc::not_controller) == 41);
  CHECK(kafka_error_code(errc::kafka_storage_error) == 56);
  CHECK(kafka_error_code(errc::fenced_leader_epoch) == 74);
  CHECK(kafka_error_code(errc::ineligible_replica) == 107);
  CHECK(kafka_error_code(errc::voter_not_found) == 127);
  CHECK(kafka_error_code(errc::unknown_topic_id) == 100);
  CHECK(kafka_error_code(errc::broker_not_available) == 8);
  CHECK(kafka_error_code(errc::unknown_server_error) == -1);
  // Every code has a number of its own: two errcs never answer as one Kafka error.
  std::set<int16_t> seen;
  for (int i = 0; i <= static_cast<int>(last_errc); ++i) {
    const auto code = static_cast<errc>(i);
    INFO(to_string(code));
    CHECK(seen.insert(kafka_error_code(code)).second);
  }
}
