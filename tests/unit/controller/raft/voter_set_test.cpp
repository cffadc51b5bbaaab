// voter_set: the bytes of a voter set entry round-trip, and anything else is refused with a
// named error before the core or storage could take it for a voter set.

#include <catch2/catch.hpp>

#include "actors/controller/raft/voter_set.hpp"

namespace capstan::raft {

TEST_CASE("a voter set round-trips through its bytes", "[raft][voters]") {
  voter_set s = bootstrap_voters({node_id{3}, node_id{1}});
  CHECK(ids_of(s) == std::vector<node_id>{node_id{1}, node_id{3}});
  voter added;
  added.id = node_id{2};
  added.directory[0] = 9;
  added.endpoint = "node2.example:9093";
  s = with_voter(s, added);
  CHECK(ids_of(s) == std::vector<node_id>{node_id{1}, node_id{2}, node_id{3}});
  CHECK(contains(s, node_id{2}));
  auto back = decode_voter_set(encode_voter_set(s));
  REQUIRE(back.ok());
  CHECK(*back == s);
  CHECK(ids_of(without_voter(s, node_id{1})) == std::vector<node_id>{node_id{2}, node_id{3}});
}

TEST_CASE("bytes that are no voter set are refused", "[raft][voters]") {
  const bytes good = encode_voter_set(bootstrap_voters({node_id{1}, node_id{2}}));
  REQUIRE(decode_voter_set(good).ok());
  // Every truncation, one trailing byte, another version, no voter, ids out of order.
  for (size_t n = 0; n < good.size(); ++n) {
    INFO("first " << n << " bytes");
    CHECK(decode_voter_set(bytes_view(good).first(n)).code() == errc::corrupt_message);
  }
  bytes longer = good;
  longer.push_back(0);
  CHECK(decode_voter_set(longer).code() == errc::corrupt_message);
  bytes version = good;
  version[0] = 2;
  CHECK(decode_voter_set(version).code() == errc::corrupt_message);
  CHECK(decode_voter_set(bytes{1, 0, 0}).code() == errc::corrupt_message);
  CHECK(decode_voter_set(encode_voter_set(voter_set{voter{node_id{2}, {}, ""},
                                                    voter{node_id{1}, {}, ""}}))
            .code() == errc::corrupt_message);
  CHECK(decode_voter_set(encode_voter_set(voter_set{voter{node_id{-1}, {}, ""}})).code() ==
        errc::corrupt_message);
  bytes many{1, 0xff, 0xff};
  CHECK(decode_voter_set(many).code() == errc::corrupt_message);
}

} // namespace capstan::raft
