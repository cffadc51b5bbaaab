// A voter change's inputs: what addVoter and removeVoter refuse before anything is sent, with
// INVALID_REQUEST and a message that names the bad value.

#include <catch2/catch.hpp>

#include "actors/controller/voter_validation.hpp"

using namespace capstan;

TEST_CASE("a voter's node id is at least 0", "[controller][voters]") {
  CHECK(validate_voter_id(0));
  CHECK(validate_voter_id(2147483647));
  auto refused = validate_voter_id(-1);
  CHECK(refused.code() == errc::invalid_request);
  CHECK(refused.err().message.find("-1") != std::string::npos);
}

TEST_CASE("a voter's endpoint is HOST:PORT with a port in 1 to 65535", "[controller][voters]") {
  for (const char* good : {"localhost:9093", "10.0.0.4:1", "node-4.example:65535", "[::1]:9093"}) {
    INFO(good);
    CHECK(validate_voter_endpoint(good));
  }
  for (const char* bad : {"", "localhost", "localhost:", ":9093", "localhost:0",
                          "localhost:65536", "localhost:-5", "localhost:9x", "[]:9093",
                          "PLAINTEXT://localhost:9093"}) {
    INFO(bad);
    auto refused = validate_voter_endpoint(bad);
    CHECK(refused.code() == errc::invalid_request);
    CHECK(refused.err().message.find("voter endpoint '" + std::string(bad) + "'") !=
          std::string::npos);
  }
  CHECK(validate_voter_endpoint(std::string(250, 'h') + ":9093"));
  CHECK(validate_voter_endpoint(std::string(251, 'h') + ":9093").code() == errc::invalid_request);
}
