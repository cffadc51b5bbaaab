// raft_codec: every message kind survives the trip through a Cap'n Proto frame with the quorum
// identity every frame carries, and a peer's malformed frame becomes an error value, never an
// exception or a message the core must not see.

#include <capnp/any.h>
#include <capnp/message.h>
#include <cstring>

#include <catch2/catch.hpp>

#include "actors/controller/raft/raft_codec.hpp"
#include "actors/controller/raft/voter_set.hpp"
#include "schema/raft.capnp.h"

namespace capstan::raft {
namespace {

bytes b(const std::string& s) {
  return bytes(s.begin(), s.end());
}

const directory_id dir_1{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
const directory_id dir_2{0xa0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff};
const quorum_identity quorum{"codec-test", {node_id{1}, node_id{2}, node_id{3}}};

const voter_set two_voters{voter{node_id{1}, dir_1, "127.0.0.1:9093"},
                           voter{node_id{4}, dir_2, "10.0.0.4:9093"}};

message msg(message_body body) {
  return message{node_id{1}, node_id{2}, std::move(body), dir_1, dir_2, false};
}

// A frame of `quorum` from node 1 to node 2, whose body the caller fills.
schema::RaftMessage::Builder envelope(capnp::MallocMessageBuilder& builder) {
  auto root = builder.initRoot<schema::RaftMessage>();
  root.setFrom(1);
  root.setTo(2);
  root.setClusterId("codec-test");
  auto voters = root.initVoters(3);
  for (unsigned i = 0; i < 3; ++i) voters.set(i, static_cast<int32_t>(i + 1));
  root.setFromDirectory(kj::arrayPtr(dir_1.data(), dir_1.size()));
  return root;
}

capnp_frame append_frame(uint64_t prev, const std::vector<std::pair<uint64_t, uint64_t>>& entries,
                         uint64_t term = 5) {
  capnp::MallocMessageBuilder builder;
  auto root = envelope(builder);
  auto ae = root.initAppendEntries();
  ae.setTerm(term);
  ae.setPrevLogIndex(prev);
  ae.setPrevLogTerm(prev == 0 ? 0 : 1);
  auto list = ae.initEntries(static_cast<unsigned>(entries.size()));
  for (unsigned i = 0; i < entries.size(); ++i) {
    list[i].setIndex(entries[i].first);
    list[i].setTerm(entries[i].second);
  }
  return capnp_frame::from_builder(builder);
}

} // namespace

TEST_CASE("every raft message round-trips through a frame", "[raft][codec]") {
  const std::vector<message> all{
      msg(pre_vote{raft_term{4}, log_index{17}, raft_term{3}}),
      msg(pre_vote_response{raft_term{4}, true}),
      msg(vote{raft_term{4}, log_index{17}, raft_term{3}}),
      msg(vote{raft_term{4}, log_index{17}, raft_term{3}, true}),
      msg(vote_response{raft_term{4}, false}),
      msg(append_entries{
          raft_term{4},
          log_index{10},
          raft_term{3},
          {entry{raft_term{3}, log_index{11}, b("topic")}, entry{raft_term{4}, log_index{12}, {}},
           entry{raft_term{4}, log_index{13}, encode_voter_set(two_voters), entry_kind::voters}},
          log_index{9},
          log_index{13}}),
      msg(append_entries{raft_term{4}, log_index{}, raft_term{}, {}, log_index{}}),
      msg(append_entries_response{raft_term{4}, false, log_index{10}, log_index{8}, raft_term{2},
                                  log_index{6}}),
      msg(install_snapshot{raft_term{4},
                           snapshot{snapshot_meta{log_index{100}, raft_term{3}}, b("image")}}),
      msg(install_snapshot{
          raft_term{4}, snapshot{snapshot_meta{log_index{100}, raft_term{3}}, b("image"), two_voters}}),
      msg(install_snapshot_response{raft_term{4}, log_index{100}}),
      msg(timeout_now{raft_term{4}}),
      msg(catch_up_request{raft_term{4}}),
      msg(catch_up_response{raft_term{4}, true}),
  };
  for (const auto& m : all) {
    INFO("kind " << m.body.index());
    auto back = decode(encode(m, quorum));
    REQUIRE(back.ok());
    CHECK(back->msg == m);
    CHECK(back->quorum == quorum);
  }
}

TEST_CASE("a frame carries whether its sender is catching up and whom it knows it writes to",
          "[raft][codec]") {
  message m = msg(vote_response{raft_term{2}, false});
  m.catching_up = true;
  m.to_directory = {};
  auto back = decode(encode(m, quorum));
  REQUIRE(back.ok());
  CHECK(back->msg.catching_up);
  CHECK(back->msg.to_directory == directory_id{});
  CHECK(back->msg.from_directory == dir_1);
}

TEST_CASE("decoding refuses a frame without a sender directory or with a bad voter set",
          "[raft][codec]") {
  auto frame = [](auto&& fill) {
    capnp::MallocMessageBuilder builder;
    auto root = envelope(builder);
    root.initTimeoutNow().setTerm(1);
    fill(root);
    return capnp_frame::from_builder(builder);
  };
  CHECK(decode(frame([](auto) {})).ok());
  CHECK(decode(frame([](auto r) { r.setFromDirectory(kj::ArrayPtr<const uint8_t>()); })).code() ==
        errc::corrupt_message);
  const directory_id zeros{};
  CHECK(decode(frame([&](auto r) { r.setFromDirectory(kj::arrayPtr(zeros.data(), 16)); })).code() ==
        errc::corrupt_message);
  CHECK(decode(frame([&](auto r) { r.setToDirectory(kj::arrayPtr(dir_2.data(), 15)); })).code() ==
        errc::corrupt_message);
  CHECK(decode(frame([](auto r) { r.initVoters(0); })).code() == errc::corrupt_message);
  CHECK(decode(frame([](auto r) {
          auto v = r.initVoters(2);
          v.set(0, 3);
          v.set(1, 1);
        })).code() == errc::corrupt_message);
  CHECK(decode(frame([](auto r) {
          auto v = r.initVoters(2);
          v.set(0, -1);
          v.set(1, 1);
        })).code() == errc::corrupt_message);
}

TEST_CASE("decoding refuses a frame that is not a raft message", "[raft][codec]") {
  SECTION("the empty frame") {
    CHECK(decode(capnp_frame{}).code() == errc::corrupt_message);
  }
  SECTION("a root whose union field is out of range") {
    capnp::MallocMessageBuilder builder;
    auto root = envelope(builder);
    root.initVote().setTerm(1);
    auto frame = capnp_frame::from_builder(builder);
    // The discriminant lives in the data section after from (4 bytes) and to (4 bytes).
    // A copy by bytes: capnp::word has no copy constructor that clang's kj::heapArray can use.
    const auto original = frame.words();
    auto words = kj::heapArray<capnp::word>(original.size());
    std::memcpy(words.begin(), original.begin(), original.size() * sizeof(capnp::word));
    auto* bytes_ptr = reinterpret_cast<uint8_t*>(words.begin());
    // Segment table (8 bytes), root pointer (8 bytes), then the data section.
    bytes_ptr[16 + 8] = 0x7f;
    auto tampered = capnp_frame::from_words(kj::mv(words));
    REQUIRE(tampered.ok());
    CHECK(decode(*tampered).code() == errc::corrupt_message);
  }
  SECTION("a field of the wrong pointer kind") {
    // The appendEntries pointer slot holds a list where a struct belongs: Cap'n Proto throws
    // when it is read, and try_read turns that into CORRUPT_MESSAGE.
    capnp::MallocMessageBuilder builder;
    auto root = envelope(builder);
    root.initAppendEntries().setTerm(1);
    capnp::AnyStruct::Builder any(kj::mv(root));
    any.getPointerSection()[0].initAs<capnp::List<uint64_t>>(3);
    auto frame = capnp_frame::from_builder(builder);
    CHECK(decode(frame).code() == errc::corrupt_message);
  }
}

TEST_CASE("decoding refuses entries the core must not see", "[raft][codec]") {
  CHECK(decode(append_frame(10, {{11, 1}, {12, 2}})).ok());
  CHECK(decode(append_frame(10, {{12, 1}})).code() == errc::corrupt_message);          // gap
  CHECK(decode(append_frame(10, {{11, 1}, {11, 1}})).code() == errc::corrupt_message); // repeat
  CHECK(decode(append_frame(10, {{11, 2}, {12, 1}})).code() == errc::corrupt_message); // term back
  CHECK(decode(append_frame(10, {{11, 6}})).code() == errc::corrupt_message); // above message term
  CHECK(decode(append_frame(10, {{11, 0}})).code() == errc::corrupt_message); // term 0
  CHECK(decode(append_frame(UINT64_MAX, {{0, 1}})).code() == errc::corrupt_message); // overflow

  capnp::MallocMessageBuilder builder;
  auto root = envelope(builder);
  auto snap = root.initInstallSnapshot();
  snap.setTerm(3);
  snap.initSnapshot().setIndex(0);
  CHECK(decode(capnp_frame::from_builder(builder)).code() == errc::corrupt_message);
}

TEST_CASE("decoding refuses a voter set entry or snapshot voter set that is no voter set",
          "[raft][codec]") {
  {
    capnp::MallocMessageBuilder builder;
    auto ae = envelope(builder).initAppendEntries();
    ae.setTerm(5);
    auto e = ae.initEntries(1)[0];
    e.setIndex(1);
    e.setTerm(5);
    e.setVoters(true);
    const bytes junk{1, 1, 0};
    e.setData(kj::arrayPtr(junk.data(), junk.size()));
    CHECK(decode(capnp_frame::from_builder(builder)).code() == errc::corrupt_message);
  }
  {
    capnp::MallocMessageBuilder builder;
    auto is = envelope(builder).initInstallSnapshot();
    is.setTerm(3);
    auto s = is.initSnapshot();
    s.setIndex(9);
    s.setTerm(3);
    const bytes junk{9};
    s.setVoters(kj::arrayPtr(junk.data(), junk.size()));
    CHECK(decode(capnp_frame::from_builder(builder)).code() == errc::corrupt_message);
  }
}

TEST_CASE("decoding refuses a pre-vote that claims a leadership transfer", "[raft][codec]") {
  capnp::MallocMessageBuilder builder;
  auto pv = envelope(builder).initPreVote();
  pv.setTerm(3);
  pv.setLeadershipTransfer(true);
  CHECK(decode(capnp_frame::from_builder(builder)).code() == errc::corrupt_message);
}

} // namespace capstan::raft
