#include "runtime/storage/offset_checkpoint.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace capstan {

namespace {

error storage_error(const std::filesystem::path& file, const std::string& what) {
  return make_error(errc::kafka_storage_error, file.string() + ": " + what);
}

status fsync_path(const std::filesystem::path& path, int flags) {
  int fd = ::open(path.c_str(), flags);
  if (fd < 0) return storage_error(path, std::strerror(errno));
  int rc = ::fsync(fd);
  int saved = errno;
  ::close(fd);
  if (rc != 0) return storage_error(path, std::string("fsync: ") + std::strerror(saved));
  return {};
}

} // namespace

result<offset_map> read_offset_checkpoint(const std::filesystem::path& file) {
  offset_map out;
  std::ifstream in(file);
  if (!in) {
    if (!std::filesystem::exists(file)) return out;
    return storage_error(file, "cannot open");
  }
  std::string line;
  int line_no = 0;
  auto bad = [&](const std::string& why) {
    return storage_error(file, "line " + std::to_string(line_no) + ": " + why);
  };
  ++line_no;
  if (!std::getline(in, line) || line != "0") return bad("expected version 0");
  ++line_no;
  if (!std::getline(in, line)) return bad("missing entry count");
  size_t count = 0;
  try {
    count = std::stoul(line);
  } catch (const std::exception&) {
    return bad("bad entry count '" + line + "'");
  }
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
  auto tmp = file;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return storage_error(tmp, "cannot create");
    out << "0\n" << offsets.size() << "\n";
    for (const auto& [tp, off] : offsets) out << tp.first << ' ' << tp.second << ' ' << off.value() << '\n';
    out.flush();
    if (!out) return storage_error(tmp, "write failed");
  }
  if (auto s = fsync_path(tmp, O_RDONLY); !s) return s;
  std::error_code ec;
  std::filesystem::rename(tmp, file, ec);
  if (ec) return storage_error(file, "rename: " + ec.message());
  return fsync_path(file.parent_path().empty() ? "." : file.parent_path(), O_RDONLY | O_DIRECTORY);
}

} // namespace capstan
