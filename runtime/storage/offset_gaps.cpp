#include "runtime/storage/offset_gaps.hpp"

#include <cerrno>
#include <charconv>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

#include "runtime/storage/file_handle.hpp"

namespace capstan {

void offset_gaps::add(offset from, offset to) {
  if (to <= from) return;
  auto it = ranges_.upper_bound(from);
  if (it != ranges_.begin() && std::prev(it)->second >= from) {
    --it;
    from = it->first;
  }
  while (it != ranges_.end() && it->first <= to) {
    to = std::max(to, it->second);
    it = ranges_.erase(it);
  }
  ranges_.emplace(from, to);
}

bool offset_gaps::covers(offset from, offset to) const {
  if (to <= from) return true;
  auto it = ranges_.upper_bound(from);
  if (it == ranges_.begin()) return false;
  --it;
  return it->first <= from && to <= it->second;
}

void offset_gaps::drop_below(offset start) {
  for (auto it = ranges_.begin(); it != ranges_.end() && it->first < start;) {
    const offset to = it->second;
    it = ranges_.erase(it);
    if (to > start) {
      ranges_.emplace(start, to);
      break;
    }
  }
}

result<offset_gaps> read_offset_gaps(const std::filesystem::path& dir) {
  const auto file = dir / offset_gaps_file;
  offset_gaps out;
  std::ifstream in(file);
  if (!in) {
    const int err = errno;
    std::error_code ec;
    if (!std::filesystem::exists(file, ec) && !ec) return out;
    return storage_error("open", file, err);
  }
  std::string line;
  int line_no = 0;
  auto bad = [&](const std::string& why) {
    return make_error(errc::kafka_storage_error,
                      file.string() + ": line " + std::to_string(line_no) + ": " + why);
  };
  auto number = [](const std::string& text, int64_t& v) {
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    return !text.empty() && ec == std::errc{} && end == text.data() + text.size() && v >= 0;
  };
  ++line_no;
  if (!std::getline(in, line) || line != "0") return bad("expected version 0");
  ++line_no;
  int64_t count = 0;
  if (!std::getline(in, line) || !number(line, count)) return bad("bad range count");
  offset previous_end{0};
  for (int64_t i = 0; i < count; ++i) {
    ++line_no;
    if (!std::getline(in, line)) return bad("missing range");
    std::istringstream fields(line);
    std::string from_text, to_text, rest;
    int64_t from = 0, to = 0;
    if (!(fields >> from_text >> to_text) || (fields >> rest) || !number(from_text, from) ||
        !number(to_text, to) || to <= from || (i > 0 && offset{from} <= previous_end))
      return bad("bad range '" + line + "'");
    out.add(offset{from}, offset{to});
    previous_end = offset{to};
  }
  return out;
}

status write_offset_gaps(const std::filesystem::path& dir, const offset_gaps& gaps) {
  std::ostringstream text;
  text << "0\n" << gaps.ranges().size() << "\n";
  for (const auto& [from, to] : gaps.ranges()) text << from.value() << ' ' << to.value() << '\n';
  return write_file_atomically(dir / offset_gaps_file, text.str());
}

} // namespace capstan
