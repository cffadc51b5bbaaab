#include "runtime/storage/partition_metadata.hpp"

#include <cerrno>
#include <cstddef>
#include <fstream>
#include <sstream>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

#include "runtime/storage/file_handle.hpp"
#include "runtime/storage/storage_env.hpp"

namespace capstan {

namespace {

constexpr std::string_view alphabet =
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int sextet(char c) {
  auto at = alphabet.find(c);
  return at == std::string_view::npos ? -1 : static_cast<int>(at);
}

} // namespace

std::string to_base64_uuid(const uuid_bytes& id) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (uint8_t b : id) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(alphabet[(acc >> bits) & 0x3f]);
    }
  }
  if (bits > 0) out.push_back(alphabet[(acc << (6 - bits)) & 0x3f]);
  return out;
}

result<uuid_bytes> parse_base64_uuid(std::string_view text) {
  auto bad = [&] {
    return make_error(errc::kafka_storage_error,
                      "id '" + std::string(text) + "' is not 22 characters of URL-safe base64");
  };
  if (text.size() != 22) return bad();
  uuid_bytes id{};
  uint32_t acc = 0;
  int bits = 0;
  size_t at = 0;
  for (char c : text) {
    const int v = sextet(c);
    if (v < 0) return bad();
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      id[at++] = static_cast<uint8_t>(acc >> bits);
    }
  }
  // 22 sextets carry 132 bits: the 4 left over must be zero, or the text is not canonical.
  if ((acc & ((1u << bits) - 1)) != 0) return bad();
  return id;
}

result<std::optional<uuid_bytes>> read_uuid_file(const std::filesystem::path& file,
                                                 std::string_view key) {
  std::ifstream in(file);
  if (!in) {
    const int err = errno;
    std::error_code ec;
    if (!std::filesystem::exists(file, ec) && !ec) return std::optional<uuid_bytes>{};
    return storage_error("open", file, err);
  }
  auto bad = [&](const std::string& why) {
    return make_error(errc::kafka_storage_error, file.string() + ": " + why);
  };
  std::string line;
  if (!std::getline(in, line) || line != "version: 0")
    return bad("expected 'version: 0' on line 1");
  const std::string prefix = std::string(key) + ": ";
  if (!std::getline(in, line) || line.rfind(prefix, 0) != 0)
    return bad("expected '" + prefix + "<id>' on line 2");
  auto id = parse_base64_uuid(std::string_view(line).substr(prefix.size()));
  if (!id) return bad(id.err().message);
  return std::optional<uuid_bytes>{*id};
}

status write_uuid_file(const std::filesystem::path& file, std::string_view key,
                       const uuid_bytes& id, sync_mode mode) {
  return write_file_atomically(
      file, "version: 0\n" + std::string(key) + ": " + to_base64_uuid(id) + "\n", mode);
}

result<std::optional<uuid_bytes>> read_partition_metadata(const std::filesystem::path& dir) {
  return read_uuid_file(dir / partition_metadata_file, "topic_id");
}

status write_partition_metadata(const std::filesystem::path& dir, const uuid_bytes& id,
                                sync_mode mode) {
  return write_uuid_file(dir / partition_metadata_file, "topic_id", id, mode);
}

bool partition_metadata_torn(const std::filesystem::path& dir) {
  std::ifstream in(dir / partition_metadata_file, std::ios::binary);
  if (!in) return false;
  char c = 0;
  while (in.get(c))
    if (c != '\0') return false;
  return in.eof();
}

status make_partition_dir_durable(const std::filesystem::path& dir, bool* out_of_descriptors) {
  auto& env = storage_env::current();
  const std::filesystem::path paths[] = {
    dir / partition_metadata_file, dir,
    dir.parent_path().empty() ? std::filesystem::path(".") : dir.parent_path()};
  int fds[] = {-1, -1, -1};
  status s;
  for (size_t i = 0; i < 3 && s; ++i) {
    const int flags = O_RDONLY | O_CLOEXEC | (i == 0 ? 0 : O_DIRECTORY);
    if (int err = env.open(paths[i], flags, 0, fds[i])) {
      if (out_of_descriptors) *out_of_descriptors = err == EMFILE || err == ENFILE;
      s = storage_error("open", paths[i], err);
    }
  }
  for (size_t i = 0; i < 3 && s; ++i)
    if (int err = env.sync(paths[i], fds[i])) s = storage_error("fsync", paths[i], err);
  for (int fd : fds)
    if (fd >= 0) ::close(fd);
  return s;
}

} // namespace capstan
