#include "actors/controller/raft/raft_storage_records.hpp"

#include <algorithm>

#include "actors/controller/raft/raft_storage_format.hpp"
#include "actors/controller/raft/voter_set.hpp"
#include "runtime/batch/crc32c.hpp"

namespace capstan::raft {

namespace sf = storage_format;

namespace {

void put32(bytes& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put64(bytes& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_directory(bytes& out, const directory_id& d) {
  out.insert(out.end(), d.begin(), d.end());
}
uint32_t get32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
uint64_t get64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
directory_id get_directory(const uint8_t* p) {
  directory_id d{};
  std::copy(p, p + d.size(), d.begin());
  return d;
}

// Fills the CRC field (bytes 0-3) of a record that starts at `start`.
void seal(bytes& out, size_t start) {
  const uint32_t crc = crc32c(bytes_view(out).subspan(start + 4));
  for (int i = 0; i < 4; ++i) out[start + i] = static_cast<uint8_t>(crc >> (8 * i));
}

bool crc_ok(bytes_view record) {
  return record.size() >= 4 && get32(record.data()) == crc32c(record.subspan(4));
}

error damaged(const std::string& what) {
  return make_error(errc::corrupt_message, what);
}

// The checks every whole-file record shares: long enough, CRC, version.
status check_record(bytes_view b, size_t header, uint32_t version) {
  if (b.size() < header) return damaged("shorter than its header");
  if (!crc_ok(b)) return damaged("crc mismatch");
  if (get32(b.data() + 4) != version) return damaged("unknown version");
  return {};
}

} // namespace

bool is_version_one_hard_state(bytes_view b) {
  return b.size() == 24 && crc_ok(b) && get32(b.data() + 4) == 1;
}

bytes encode_identity(const directory_identity& id) {
  bytes b;
  put32(b, 0);
  put32(b, sf::identity_version);
  put32(b, static_cast<uint32_t>(id.node.value()));
  put_directory(b, id.directory);
  put32(b, static_cast<uint32_t>(id.cluster_id.size()));
  b.insert(b.end(), id.cluster_id.begin(), id.cluster_id.end());
  put32(b, static_cast<uint32_t>(id.voters.size()));
  for (node_id v : id.voters) put32(b, static_cast<uint32_t>(v.value()));
  seal(b, 0);
  return b;
}

result<directory_identity> decode_identity(bytes_view b) {
  if (auto s = check_record(b, sf::identity_header_size, sf::identity_version); !s) return s.err();
  const uint64_t cluster_end = sf::identity_header_size + uint64_t{get32(b.data() + 28)};
  if (cluster_end + 4 > b.size()) return damaged("cluster id runs past the file");
  const uint64_t voters = get32(b.data() + cluster_end);
  if (b.size() - (cluster_end + 4) != 4 * voters)
    return damaged("voter count does not match the file");
  directory_identity id;
  id.node = node_id{static_cast<int32_t>(get32(b.data() + 8))};
  id.directory = get_directory(b.data() + 12);
  id.cluster_id.assign(b.begin() + sf::identity_header_size,
                       b.begin() + static_cast<ptrdiff_t>(cluster_end));
  for (uint64_t k = 0; k < voters; ++k)
    id.voters.push_back(node_id{static_cast<int32_t>(get32(b.data() + cluster_end + 4 + 4 * k))});
  if (id.directory == directory_id{}) return damaged("directory id is all zeros");
  return id;
}

bytes encode_hard_state(const hard_state& hs) {
  bytes b;
  put32(b, 0);
  put32(b, sf::hard_state_version);
  put64(b, hs.term.value());
  put32(b, static_cast<uint32_t>(hs.voted_for ? hs.voted_for->value() : sf::no_vote));
  put32(b, hs.catching_up ? sf::flag_catching_up : 0);
  put_directory(b, hs.voted_for_directory);
  seal(b, 0);
  return b;
}

result<hard_state> decode_hard_state(bytes_view b) {
  if (auto s = check_record(b, sf::hard_state_size, sf::hard_state_version); !s) return s.err();
  if (b.size() != sf::hard_state_size) return damaged("wrong size " + std::to_string(b.size()));
  const uint32_t flags = get32(b.data() + 20);
  if ((flags & ~sf::flag_catching_up) != 0) return damaged("unknown flags");
  hard_state hs;
  hs.term = raft_term{get64(b.data() + 8)};
  const auto vote = static_cast<int32_t>(get32(b.data() + 16));
  if (vote != sf::no_vote) hs.voted_for = node_id{vote};
  hs.catching_up = (flags & sf::flag_catching_up) != 0;
  hs.voted_for_directory = get_directory(b.data() + 24);
  return hs;
}

bytes encode_snapshot(const snapshot& s) {
  bytes b;
  put32(b, 0);
  put32(b, sf::snapshot_version);
  put64(b, s.meta.index.value());
  put64(b, s.meta.term.value());
  put64(b, s.data.size());
  b.insert(b.end(), s.data.begin(), s.data.end());
  const bytes voters = s.voters.empty() ? bytes{} : encode_voter_set(s.voters);
  put32(b, static_cast<uint32_t>(voters.size()));
  b.insert(b.end(), voters.begin(), voters.end());
  seal(b, 0);
  return b;
}

result<snapshot> decode_snapshot(bytes_view b) {
  const bool with_voters =
      b.size() >= 8 && get32(b.data() + 4) != sf::snapshot_version_without_voters;
  if (auto s = check_record(b, sf::snapshot_header_size,
                            with_voters ? sf::snapshot_version : sf::snapshot_version_without_voters);
      !s)
    return s.err();
  const uint64_t data_length = get64(b.data() + 24);
  const uint64_t room = b.size() - sf::snapshot_header_size;
  if (with_voters ? data_length > room || room - data_length < 4 : data_length != room)
    return damaged("data length does not match the file");
  snapshot s;
  s.meta = snapshot_meta{log_index{get64(b.data() + 8)}, raft_term{get64(b.data() + 16)}};
  const auto data_begin = b.begin() + sf::snapshot_header_size;
  const auto data_end = data_begin + static_cast<ptrdiff_t>(data_length);
  s.data.assign(data_begin, data_end);
  if (with_voters) {
    const size_t voters_length = get32(&*data_end);
    const auto voters = b.subspan(sf::snapshot_header_size + data_length + 4);
    if (voters.size() != voters_length) return damaged("voter set length does not match the file");
    if (voters_length > 0) {
      auto set = decode_voter_set(voters);
      if (!set) return damaged(set.err().message);
      s.voters = std::move(*set);
    }
  }
  if (s.meta.index == log_index{} || s.meta.term == raft_term{})
    return damaged("snapshot index or term 0");
  return s;
}

void put_frame(bytes& out, const entry& e, log_index append_first) {
  const size_t start = out.size();
  put32(out, 0);
  put32(out, static_cast<uint32_t>(e.data.size()) |
                 (e.kind == entry_kind::voters ? sf::frame_voters_flag : 0));
  put64(out, e.term.value());
  put64(out, e.index.value());
  put64(out, append_first.value());
  out.insert(out.end(), e.data.begin(), e.data.end());
  seal(out, start);
}

result<log_frame> read_frame(bytes_view b) {
  if (b.size() < sf::frame_header_size) return damaged("torn frame header");
  const uint8_t* h = b.data();
  const uint32_t length_field = get32(h + 4);
  const uint32_t length = length_field & ~sf::frame_voters_flag;
  if (length > sf::max_entry_bytes || b.size() - sf::frame_header_size < length)
    return damaged("torn or oversized frame");
  const uint64_t term = get64(h + 8);
  const uint64_t index = get64(h + 16);
  const uint64_t first = get64(h + 24);
  if (term == 0 || index == 0 || first == 0 || first > index)
    return damaged("frame header out of range");
  const size_t size = sf::frame_header_size + length;
  if (!crc_ok(b.first(size))) return damaged("crc mismatch");
  entry e{raft_term{term}, log_index{index}, bytes(h + sf::frame_header_size, h + size)};
  if ((length_field & sf::frame_voters_flag) != 0) {
    // A frame that passes its CRC but holds no voter set is damage all the same: the core
    // must never be handed one.
    if (auto set = decode_voter_set(e.data); !set) return damaged(set.err().message);
    e.kind = entry_kind::voters;
  }
  return log_frame{std::move(e), log_index{first}, size};
}

} // namespace capstan::raft
