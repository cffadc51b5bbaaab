#include "runtime/storage/leader_epoch_checkpoint.hpp"

#include <charconv>
#include <fstream>
#include <sstream>

#include "runtime/storage/file_handle.hpp"

namespace capstan {

namespace {

template <class T>
bool parse_number(std::string_view text, T& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc{} && end == text.data() + text.size();
}

} // namespace

std::string format_leader_epoch_checkpoint(const std::vector<epoch_entry>& entries) {
  std::string out = "0\n" + std::to_string(entries.size()) + "\n";
  for (const auto& e : entries)
    out += std::to_string(e.epoch.value()) + " " + std::to_string(e.start.value()) + "\n";
  return out;
}

result<std::vector<epoch_entry>> parse_leader_epoch_checkpoint(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    auto nl = text.find('\n');
    lines.push_back(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
  }
  auto bad = [](size_t line, const std::string& why) {
    return make_error(errc::kafka_storage_error,
                      "leader-epoch-checkpoint line " + std::to_string(line) + ": " + why);
  };
  if (lines.empty() || lines[0] != "0") return bad(1, "expected version 0");
  size_t count = 0;
  if (lines.size() < 2 || !parse_number(lines[1], count)) return bad(2, "bad entry count");
  if (lines.size() != count + 2) return bad(lines.size(), "expected " + std::to_string(count) + " entries");
  std::vector<epoch_entry> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    auto line = lines[i + 2];
    auto space = line.find(' ');
    int32_t epoch = -1;
    int64_t start = -1;
    if (space == std::string_view::npos || !parse_number(line.substr(0, space), epoch) ||
        !parse_number(line.substr(space + 1), start) || epoch < 0 || start < 0)
      return bad(i + 3, "bad entry '" + std::string(line) + "'");
    if (!out.empty() && (epoch <= out.back().epoch.value() || start <= out.back().start.value()))
      return bad(i + 3, "entries must increase");
    out.push_back(epoch_entry{leader_epoch{epoch}, offset{start}});
  }
  return out;
}

result<std::vector<epoch_entry>> read_leader_epoch_checkpoint(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return std::vector<epoch_entry>{};
  std::ifstream in(file);
  if (!in) return make_error(errc::kafka_storage_error, file.string() + ": cannot open");
  std::stringstream text;
  text << in.rdbuf();
  auto parsed = parse_leader_epoch_checkpoint(text.str());
  if (!parsed) return make_error(errc::kafka_storage_error, file.string() + ": " + parsed.err().message);
  return parsed;
}

status write_leader_epoch_checkpoint(const std::filesystem::path& file,
                                     const std::vector<epoch_entry>& entries, sync_mode mode) {
  return write_file_atomically(file, format_leader_epoch_checkpoint(entries), mode);
}

} // namespace capstan
