#include "runtime/storage/offset_checkpoint.hpp"

#include <cerrno>
#include <charconv>
#include <fstream>
#include <limits>
#include <sstream>
#include <system_error>

#include "runtime/storage/file_handle.hpp"

namespace capstan {

namespace {

error checkpoint_error(const std::filesystem::path& file, const std::string& what) {
  return make_error(errc::kafka_storage_error, file.string() + ": " + what);
}

} // namespace

result<offset_map> read_offset_checkpoint(const std::filesystem::path& file) {
  offset_map out;
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
    return checkpoint_error(file, "line " + std::to_string(line_no) + ": " + why);
  };
  ++line_no;
  if (!std::getline(in, line) || line != "0") return bad("expected version 0");
  ++line_no;
  if (!std::getline(in, line)) return bad("missing entry count");
  size_t count = 0;
  auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), count);
  if (line.empty() || ec != std::errc{} || end != line.data() + line.size())
    return bad("bad entry count '" + line + "'");
  for (size_t i = 0; i < count; ++i) {
    ++line_no;
    if (!std::getline(in, line)) return bad("missing entry");
    std::istringstream fields(line);
    std::string topic;
    int64_t partition = -1;
    int64_t off = -1;
    std::string rest;
    if (!(fields >> topic >> partition >> off) || (fields >> rest) || partition < 0 ||
        partition > std::numeric_limits<int32_t>::max() || off < 0)
      return bad("bad entry '" + line + "'");
    out[{topic, static_cast<int32_t>(partition)}] = offset{off};
  }
  return out;
}

status write_offset_checkpoint(const std::filesystem::path& file, const offset_map& offsets) {
  std::ostringstream text;
  text << "0\n" << offsets.size() << "\n";
  for (const auto& [tp, off] : offsets) text << tp.first << ' ' << tp.second << ' ' << off.value() << '\n';
  return write_file_atomically(file, text.str());
}

} // namespace capstan
