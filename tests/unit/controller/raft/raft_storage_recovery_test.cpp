// Crash and corruption tests for raft_storage::open: whatever the log file holds, recovery keeps
// exactly the longest valid prefix of entries and never serves one it has not validated; a
// damaged hard state or snapshot is an error rather than a guess.

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include <catch2/catch.hpp>

#include "actors/controller/raft/raft_storage.hpp"
#include "actors/controller/raft/raft_storage_format.hpp"
#include "tests/support/temp_dir.hpp"

namespace capstan::raft {
namespace {

namespace fs = std::filesystem;
namespace sf = storage_format;

bytes read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return bytes(std::istreambuf_iterator<char>(in), {});
}

// Replaces the file (unlink, create): shrinking in place waits for writeback on ext4.
void write_file(const fs::path& p, bytes_view content) {
  fs::remove(p);
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(content.data()),
            static_cast<std::streamsize>(content.size()));
}

struct stored_entry {
  entry e;
  uint64_t position = 0;
  uint64_t end = 0;
};

// Seven entries of different sizes written through the storage, the last one large enough that
// cutting it at every byte crosses every header field and much data.
class crash_fixture {
public:
  crash_fixture() {
    auto st = raft_storage::open(source.path());
    REQUIRE(st.ok());
    REQUIRE(st->save_hard_state(hard_state{raft_term{3}, node_id{1}}).ok());
    uint64_t position = 0;
    for (uint64_t i = 1; i <= 7; ++i) {
      entry e{raft_term{i < 4 ? 2u : 3u}, log_index{i},
              bytes(i == 7 ? 150 : 3 * i, static_cast<uint8_t>('a' + i))};
      REQUIRE(st->append(std::span<const entry>(&e, 1)).ok());
      const uint64_t end = position + sf::frame_header_size + e.data.size();
      entries.push_back({e, position, end});
      position = end;
    }
    log = read_file(source / sf::log_file);
    hard = read_file(source / sf::hard_state_file);
    REQUIRE(log.size() == entries.back().end);
  }

  fs::path path(std::string_view name) const { return work / name; }

  // Writes `content` as the log beside the original hard state and opens the storage.
  result<raft_storage> open(bytes_view content) {
    write_file(path(sf::log_file), content);
    write_file(path(sf::hard_state_file), hard);
    return raft_storage::open(work.path());
  }

  raft_storage recover(bytes_view content) {
    auto st = open(content);
    INFO((st.ok() ? std::string() : st.err().to_string()));
    REQUIRE(st.ok());
    return std::move(*st);
  }

  // The storage holds exactly the first `kept` entries, and the file nothing past them.
  void check_prefix(const raft_storage& st, size_t kept, uint64_t damaged_size) {
    const uint64_t valid_end = kept == 0 ? 0 : entries[kept - 1].end;
    REQUIRE(st.state().entries.size() == kept);
    for (size_t k = 0; k < kept; ++k) CHECK(st.state().entries[k] == entries[k].e);
    CHECK(fs::file_size(path(sf::log_file)) == valid_end);
    CHECK(st.recovery().valid_bytes == valid_end);
    CHECK(st.recovery().truncated_bytes == damaged_size - valid_end);
    if (damaged_size > valid_end) CHECK_FALSE(st.recovery().reason.empty());
  }

  test::temp_dir source{"raft-src"};
  test::temp_dir work{"raft-crash"};
  std::vector<stored_entry> entries;
  bytes log, hard;
};

} // namespace

TEST_CASE("raft log recovery keeps an undamaged log whole", "[raft][storage][recovery]") {
  crash_fixture f;
  auto st = f.recover(f.log);
  f.check_prefix(st, 7, f.log.size());
  CHECK(st.recovery().reason.empty());
  CHECK(st.state().hard == hard_state{raft_term{3}, node_id{1}});
}

TEST_CASE("raft log recovery truncates a torn tail at every byte of the last entry",
          "[raft][storage][recovery]") {
  crash_fixture f;
  const auto& last = f.entries.back();
  for (uint64_t cut = last.position; cut < last.end; ++cut) {
    INFO("cut at " << cut);
    auto st = f.recover(bytes_view(f.log).first(cut));
    f.check_prefix(st, 6, cut);
    // The recovered log takes the lost entry again and then holds all of it.
    REQUIRE(st.append(std::span<const entry>(&last.e, 1)).ok());
    CHECK(fs::file_size(f.path(sf::log_file)) == f.log.size());
  }
}

TEST_CASE("raft log recovery never serves a last entry with a flipped byte",
          "[raft][storage][recovery]") {
  crash_fixture f;
  const auto& last = f.entries.back();
  std::mt19937 rng(20240611);
  for (uint64_t at = last.position; at < last.end; ++at) {
    bytes damaged = f.log;
    const auto flip = static_cast<uint8_t>(1 + rng() % 255);
    damaged[at] ^= flip;
    INFO("byte " << at - last.position << " of the last entry ^= " << int(flip));
    auto st = f.recover(damaged);
    // A flipped length may make the frame look longer than the file: then it is a torn tail.
    f.check_prefix(st, 6, damaged.size());
  }
}

TEST_CASE("raft log recovery cuts every entry from a damaged one in the middle",
          "[raft][storage][recovery]") {
  crash_fixture f;
  std::mt19937 rng(7);
  for (int trial = 0; trial < 60; ++trial) {
    const size_t victim = rng() % f.entries.size();
    const auto& e = f.entries[victim];
    bytes damaged = f.log;
    damaged[e.position + rng() % (e.end - e.position)] ^= 0x5a;
    INFO("trial " << trial << ": entry " << victim + 1);
    auto st = f.recover(damaged);
    f.check_prefix(st, victim, damaged.size());
  }
}

TEST_CASE("raft log recovery cuts garbage after the last entry", "[raft][storage][recovery]") {
  crash_fixture f;
  std::mt19937 rng(99);
  bytes random_tail(300);
  for (auto& x : random_tail) x = static_cast<uint8_t>(rng());
  // A whole frame copied again: valid CRC, but its index does not follow.
  bytes repeated(f.log.begin() + static_cast<ptrdiff_t>(f.entries[2].position),
                 f.log.begin() + static_cast<ptrdiff_t>(f.entries[2].end));
  for (const bytes& tail : {bytes(1, 0), bytes(23, 0), bytes(24, 0), random_tail, repeated}) {
    INFO("tail of " << tail.size() << " bytes");
    bytes damaged = f.log;
    damaged.insert(damaged.end(), tail.begin(), tail.end());
    auto st = f.recover(damaged);
    f.check_prefix(st, 7, damaged.size());
  }
}

TEST_CASE("a damaged hard state or snapshot is an error, not a guess",
          "[raft][storage][recovery]") {
  crash_fixture f;
  SECTION("hard state") {
    for (size_t at = 0; at < f.hard.size(); ++at) {
      INFO("byte " << at);
      bytes damaged = f.hard;
      damaged[at] ^= 0x01;
      write_file(f.path(sf::log_file), f.log);
      write_file(f.path(sf::hard_state_file), damaged);
      CHECK(raft_storage::open(f.work.path()).code() == errc::kafka_storage_error);
    }
    write_file(f.path(sf::hard_state_file), bytes_view(f.hard).first(10));
    CHECK(raft_storage::open(f.work.path()).code() == errc::kafka_storage_error);
  }
  SECTION("snapshot") {
    {
      auto st = f.recover(f.log);
      REQUIRE(
          st.save_snapshot(snapshot{snapshot_meta{log_index{4}, raft_term{3}}, bytes(40, 7)}).ok());
    }
    const bytes snap = read_file(f.path(sf::snapshot_file));
    for (size_t at = 0; at < snap.size(); at += 3) {
      INFO("byte " << at);
      bytes damaged = snap;
      damaged[at] ^= 0x10;
      write_file(f.path(sf::snapshot_file), damaged);
      CHECK(raft_storage::open(f.work.path()).code() == errc::kafka_storage_error);
    }
  }
}

TEST_CASE("a crash between writing a snapshot and rewriting the log loses nothing",
          "[raft][storage][recovery]") {
  crash_fixture f;
  {
    auto st = f.recover(f.log);
    REQUIRE(
        st.save_snapshot(snapshot{snapshot_meta{log_index{5}, raft_term{3}}, bytes(8, 1)}).ok());
  }
  // Put the old, whole log back as if the rewrite never happened.
  write_file(f.path(sf::log_file), f.log);
  auto st = raft_storage::open(f.work.path());
  REQUIRE(st.ok());
  CHECK(st->state().snap.meta.index == log_index{5});
  REQUIRE(st->state().entries.size() == 2);
  CHECK(st->state().entries[0] == f.entries[5].e);
  CHECK(st->state().entries[1] == f.entries[6].e);
  // Truncation still finds the right place in the file that holds the old prefix.
  REQUIRE(st->truncate_from(log_index{7}).ok());
  CHECK(fs::file_size(f.path(sf::log_file)) == f.entries[5].end);
}

} // namespace capstan::raft
