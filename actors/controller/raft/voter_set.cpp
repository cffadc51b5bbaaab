#include "actors/controller/raft/voter_set.hpp"

#include <algorithm>
#include <utility>

namespace capstan::raft {

namespace {

constexpr uint8_t format_version = 1;

error corrupt(const std::string& why) {
  return make_error(errc::corrupt_message, "voter set entry: " + why);
}

} // namespace

bool contains(const voter_set& s, node_id id) {
  return std::any_of(s.begin(), s.end(), [id](const voter& v) { return v.id == id; });
}

voter_set with_voter(voter_set s, voter v) {
  auto at = std::lower_bound(s.begin(), s.end(), v.id,
                             [](const voter& a, node_id id) { return a.id < id; });
  s.insert(at, std::move(v));
  return s;
}

voter_set without_voter(voter_set s, node_id id) {
  std::erase_if(s, [id](const voter& v) { return v.id == id; });
  return s;
}

voter_set bootstrap_voters(const std::vector<node_id>& ids) {
  voter_set s;
  for (node_id id : ids) {
    voter v;
    v.id = id;
    s.push_back(std::move(v));
  }
  std::sort(s.begin(), s.end(), [](const voter& a, const voter& b) { return a.id < b.id; });
  return s;
}

std::vector<node_id> ids_of(const voter_set& s) {
  std::vector<node_id> ids;
  for (const auto& v : s) ids.push_back(v.id);
  return ids;
}

bytes encode_voter_set(const voter_set& s) {
  bytes out;
  out.push_back(format_version);
  out.push_back(static_cast<uint8_t>(s.size()));
  out.push_back(static_cast<uint8_t>(s.size() >> 8));
  for (const auto& v : s) {
    const auto id = static_cast<uint32_t>(v.id.value());
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(id >> (8 * i)));
    out.insert(out.end(), v.directory.begin(), v.directory.end());
    out.push_back(static_cast<uint8_t>(v.endpoint.size()));
    out.insert(out.end(), v.endpoint.begin(), v.endpoint.end());
  }
  return out;
}

result<voter_set> decode_voter_set(bytes_view b) {
  size_t pos = 0;
  auto need = [&](size_t n) { return b.size() - pos >= n; };
  if (!need(3)) return corrupt("truncated header");
  if (b[0] != format_version) return corrupt("unknown version " + std::to_string(b[0]));
  const size_t count = b[1] | (size_t{b[2]} << 8);
  pos = 3;
  if (count == 0) return corrupt("no voter");
  if (count > max_voters) return corrupt(std::to_string(count) + " voters, at most " +
                                         std::to_string(max_voters));
  voter_set s;
  for (size_t k = 0; k < count; ++k) {
    if (!need(4 + 16 + 1)) return corrupt("truncated voter " + std::to_string(k));
    uint32_t id = 0;
    for (int i = 0; i < 4; ++i) id |= uint32_t{b[pos++]} << (8 * i);
    voter v;
    v.id = node_id{static_cast<int32_t>(id)};
    std::copy_n(b.begin() + static_cast<ptrdiff_t>(pos), 16, v.directory.begin());
    pos += 16;
    const size_t len = b[pos++];
    if (!need(len)) return corrupt("truncated endpoint of voter " + std::to_string(k));
    v.endpoint.assign(b.begin() + static_cast<ptrdiff_t>(pos),
                      b.begin() + static_cast<ptrdiff_t>(pos + len));
    pos += len;
    if (v.id.value() < 0 || (!s.empty() && s.back().id >= v.id))
      return corrupt("voter ids must be ascending and >= 0");
    s.push_back(std::move(v));
  }
  if (pos != b.size()) return corrupt(std::to_string(b.size() - pos) + " trailing bytes");
  return s;
}

} // namespace capstan::raft
