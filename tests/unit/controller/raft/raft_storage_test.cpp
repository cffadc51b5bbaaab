// raft_storage: each persistence step of a ready is durable once it returns, and a reopened
// storage holds exactly what was made durable.

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "actors/controller/raft/raft_storage.hpp"
#include "actors/controller/raft/raft_storage_format.hpp"
#include "actors/controller/raft/raft_storage_records.hpp"
#include "actors/controller/raft/voter_set.hpp"
#include "runtime/batch/crc32c.hpp"
#include "tests/support/temp_dir.hpp"

namespace capstan::raft {
namespace {

namespace fs = std::filesystem;

bytes b(const std::string& s) {
  return bytes(s.begin(), s.end());
}

std::vector<entry> make_entries(uint64_t from, uint64_t to, uint64_t term) {
  std::vector<entry> out;
  for (uint64_t i = from; i <= to; ++i)
    out.push_back(entry{raft_term{term}, log_index{i}, b("record-" + std::to_string(i))});
  return out;
}

const directory_identity opener{"storage-test",
                                node_id{1},
                                directory_id{7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7},
                                {node_id{1}, node_id{2}, node_id{3}}};

raft_storage open_ok(const fs::path& dir) {
  auto s = raft_storage::open(dir, opener);
  INFO((s.ok() ? std::string() : s.err().to_string()));
  REQUIRE(s.ok());
  return std::move(*s);
}

} // namespace

TEST_CASE("a new raft storage is empty, catching up, with the opener's identity",
          "[raft][storage]") {
  test::temp_dir dir("raft-storage");
  {
    auto st = open_ok(dir.path());
    CHECK(st.state().hard == hard_state{raft_term{}, std::nullopt, {}, true});
    CHECK(st.state().snap.meta.index == log_index{0});
    CHECK(st.state().entries.empty());
    CHECK(st.recovery().truncated_bytes == 0);
    CHECK(st.recovery().created);
    CHECK(st.recovery().lost.empty());
    CHECK(st.identity() == opener);
  }
  // Reopened with another id to take, it keeps the one it has and is still catching up.
  auto other = opener;
  other.directory[0] = 9;
  auto st = raft_storage::open(dir.path(), other);
  REQUIRE(st.ok());
  CHECK(st->identity() == opener);
  CHECK_FALSE(st->recovery().created);
  CHECK(st->state().hard.catching_up);
}

TEST_CASE("a raft directory of another cluster, node or voter set does not open",
          "[raft][storage]") {
  test::temp_dir dir("raft-storage");
  open_ok(dir.path());
  auto cluster = opener;
  cluster.cluster_id = "another";
  CHECK(raft_storage::open(dir.path(), cluster).code() == errc::inconsistent_cluster_id);
  auto node = opener;
  node.node = node_id{2};
  CHECK(raft_storage::open(dir.path(), node).code() == errc::inconsistent_voter_set);
  auto voters = opener;
  voters.voters = {node_id{1}, node_id{2}};
  CHECK(raft_storage::open(dir.path(), voters).code() == errc::inconsistent_voter_set);
  CHECK(raft_storage::open(dir.path(), opener).ok());
}

TEST_CASE("raft storage keeps hard state, entries and truncation across a reopen",
          "[raft][storage]") {
  test::temp_dir dir("raft-storage");
  {
    auto st = open_ok(dir.path());
    REQUIRE(st.save_hard_state(hard_state{raft_term{3}, node_id{2}}).ok());
    REQUIRE(st.append(make_entries(1, 5, 2)).ok());
    REQUIRE(st.truncate_from(log_index{4}).ok());
    REQUIRE(st.append(make_entries(4, 6, 3)).ok());
    CHECK(st.state().last_index() == log_index{6});
  }
  auto st = open_ok(dir.path());
  CHECK(st.state().hard == hard_state{raft_term{3}, node_id{2}});
  REQUIRE(st.state().entries.size() == 6);
  CHECK(st.state().entries[2].term == raft_term{2});
  CHECK(st.state().entries[3].term == raft_term{3});
  CHECK(st.state().entries[5] == make_entries(6, 6, 3)[0]);
  CHECK(st.recovery().truncated_bytes == 0);
}

TEST_CASE("the hard state keeps the voted-for directory and the catching-up mark",
          "[raft][storage]") {
  test::temp_dir dir("raft-storage");
  const hard_state hs{raft_term{4}, node_id{3}, directory_id{3, 1, 4, 1, 5}, true};
  REQUIRE(open_ok(dir.path()).save_hard_state(hs).ok());
  CHECK(open_ok(dir.path()).state().hard == hs);
}

TEST_CASE("a vote for nobody reads back as none", "[raft][storage]") {
  test::temp_dir dir("raft-storage");
  REQUIRE(open_ok(dir.path()).save_hard_state(hard_state{raft_term{7}, std::nullopt}).ok());
  auto st = open_ok(dir.path());
  CHECK(st.state().hard.term == raft_term{7});
  CHECK_FALSE(st.state().hard.voted_for);
}

TEST_CASE("a snapshot drops the log prefix it covers", "[raft][storage]") {
  test::temp_dir dir("raft-storage");
  {
    auto st = open_ok(dir.path());
    REQUIRE(st.save_hard_state(hard_state{raft_term{2}, std::nullopt}).ok());
    REQUIRE(st.append(make_entries(1, 10, 2)).ok());
    REQUIRE(st.save_snapshot(snapshot{snapshot_meta{log_index{6}, raft_term{2}}, b("image")}).ok());
    CHECK(st.state().entries.size() == 4);
    REQUIRE(st.append(make_entries(11, 12, 2)).ok());
    REQUIRE(st.truncate_from(log_index{12}).ok());
  }
  auto st = open_ok(dir.path());
  CHECK(st.state().snap.meta == snapshot_meta{log_index{6}, raft_term{2}});
  CHECK(st.state().snap.data == b("image"));
  REQUIRE(st.state().entries.size() == 5);
  CHECK(st.state().entries.front().index == log_index{7});
  CHECK(st.state().last_index() == log_index{11});
}

TEST_CASE("voter set entries and a snapshot's voters are kept across a reopen",
          "[raft][storage][voters]") {
  test::temp_dir dir("raft-storage");
  voter_set voters{voter{node_id{1}, {}, ""}, voter{node_id{4}, directory_id{4}, "h4:9093"}};
  {
    auto st = open_ok(dir.path());
    REQUIRE(st.save_hard_state(hard_state{raft_term{2}, std::nullopt}).ok());
    auto es = make_entries(1, 3, 2);
    es.push_back(entry{raft_term{2}, log_index{4}, encode_voter_set(voters), entry_kind::voters});
    REQUIRE(st.append(es).ok());
    REQUIRE(st.save_snapshot(
                  snapshot{snapshot_meta{log_index{2}, raft_term{2}}, b("image"), voters})
                .ok());
  }
  auto st = open_ok(dir.path());
  CHECK(st.state().snap.voters == voters);
  REQUIRE(st.state().entries.size() == 2);
  CHECK(st.state().entries[0].kind == entry_kind::data);
  CHECK(st.state().entries[1].kind == entry_kind::voters);
  CHECK(decode_voter_set(st.state().entries[1].data).value() == voters);
}

TEST_CASE("a snapshot written before voter changes existed reads as the bootstrap voters",
          "[raft][storage][voters]") {
  // Version 1: the header and the data, nothing after.
  snapshot old{snapshot_meta{log_index{6}, raft_term{2}}, b("image")};
  bytes file = encode_snapshot(old);
  file.resize(file.size() - 4); // the empty voter set's length
  file[4] = 1;
  const uint32_t crc = crc32c(bytes_view(file).subspan(4));
  for (int i = 0; i < 4; ++i) file[i] = static_cast<uint8_t>(crc >> (8 * i));
  auto back = decode_snapshot(file);
  REQUIRE(back.ok());
  CHECK(back->data == b("image"));
  CHECK(back->voters.empty());

  // Version 2 with a voter set that does not decode, sealed with a valid CRC: damage.
  bytes bad = encode_snapshot(old);
  bad[bad.size() - 4] = 1;
  bad.push_back(7);
  const uint32_t crc2 = crc32c(bytes_view(bad).subspan(4));
  for (int i = 0; i < 4; ++i) bad[i] = static_cast<uint8_t>(crc2 >> (8 * i));
  CHECK(decode_snapshot(bad).code() == errc::corrupt_message);
}

TEST_CASE("a snapshot beyond the log leaves no entries", "[raft][storage]") {
  test::temp_dir dir("raft-storage");
  {
    auto st = open_ok(dir.path());
    REQUIRE(st.save_hard_state(hard_state{raft_term{4}, std::nullopt}).ok());
    REQUIRE(st.append(make_entries(1, 3, 1)).ok());
    // As a ready orders it: drop the diverged log, then take the leader's snapshot.
    REQUIRE(st.truncate_from(log_index{1}).ok());
    REQUIRE(st.save_snapshot(snapshot{snapshot_meta{log_index{50}, raft_term{4}}, b("s")}).ok());
    REQUIRE(st.append(make_entries(51, 52, 4)).ok());
  }
  auto st = open_ok(dir.path());
  CHECK(st.state().snap.meta.index == log_index{50});
  REQUIRE(st.state().entries.size() == 2);
  CHECK(st.state().entries.front().index == log_index{51});
}

TEST_CASE("raft storage refuses out-of-order requests", "[raft][storage]") {
  test::temp_dir dir("raft-storage");
  auto st = open_ok(dir.path());
  REQUIRE(st.save_hard_state(hard_state{raft_term{2}, std::nullopt}).ok());
  REQUIRE(st.append(make_entries(1, 3, 1)).ok());
  CHECK(st.append(make_entries(5, 5, 1)).code() == errc::invalid_request);
  REQUIRE(st.save_snapshot(snapshot{snapshot_meta{log_index{2}, raft_term{1}}, {}}).ok());
  CHECK(st.save_snapshot(snapshot{snapshot_meta{log_index{2}, raft_term{1}}, {}}).code() ==
        errc::invalid_request);
  CHECK(st.truncate_from(log_index{2}).code() == errc::invalid_request);
  // None of these changed anything.
  CHECK(st.state().last_index() == log_index{3});
}

TEST_CASE("leftover temporary files from a crash are ignored and removed", "[raft][storage]") {
  test::temp_dir dir("raft-storage");
  {
    auto st = open_ok(dir.path());
    REQUIRE(st.save_hard_state(hard_state{raft_term{1}, node_id{1}}).ok());
  }
  const auto tmp = dir / (std::string(storage_format::hard_state_file) + ".tmp");
  std::ofstream(tmp) << "half-written";
  auto st = open_ok(dir.path());
  CHECK(st.state().hard == hard_state{raft_term{1}, node_id{1}});
  CHECK_FALSE(fs::exists(tmp));
}

} // namespace capstan::raft
