#include "actors/node/data_dir.hpp"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <random>
#include <sys/file.h>
#include <unistd.h>
#include <utility>

#include "runtime/cluster/metadata_store.hpp"

namespace capstan {

namespace fs = std::filesystem;

result<data_dir_lock> data_dir_lock::acquire(const fs::path& dir) {
  const auto file = dir / data_dir_lock_file;
  int fd = ::open(file.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  if (fd < 0)
    return make_error(errc::kafka_storage_error,
                      "cannot open lock file " + file.string() + ": " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK)
      return make_error(errc::kafka_storage_error,
                        "data dir " + dir.string() + " is in use by another capstan node (lock " +
                          file.string() + " is held)");
    return make_error(errc::kafka_storage_error,
                      "cannot lock " + file.string() + ": " + std::strerror(err));
  }
  return data_dir_lock(fd);
}

data_dir_lock::data_dir_lock(data_dir_lock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

data_dir_lock::~data_dir_lock() {
  if (fd_ >= 0) ::close(fd_);
}

result<std::optional<meta_properties>> read_meta_properties(const fs::path& dir) {
  const auto file = dir / meta_properties_file;
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    if (ec) return make_error(errc::kafka_storage_error, file.string() + ": " + ec.message());
    return std::optional<meta_properties>{};
  }
  std::ifstream in(file);
  if (!in) return make_error(errc::kafka_storage_error, file.string() + ": cannot open");
  std::map<std::string, std::string> props;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line[0] == '!') continue;
    auto eq = line.find('=');
    if (eq == std::string::npos)
      return make_error(errc::kafka_storage_error, file.string() + ": malformed line '" + line + "'");
    props[line.substr(0, eq)] = line.substr(eq + 1);
  }
  auto bad = [&](const std::string& why) {
    return make_error(errc::kafka_storage_error, file.string() + ": " + why);
  };
  if (props["version"] != "1") return bad("unsupported version '" + props["version"] + "'");
  meta_properties meta;
  const auto& id = props["node.id"];
  auto [end, perr] = std::from_chars(id.data(), id.data() + id.size(), meta.node_id);
  if (perr != std::errc{} || end != id.data() + id.size() || meta.node_id < 0)
    return bad("bad node.id '" + id + "'");
  meta.cluster_id = props["cluster.id"];
  if (meta.cluster_id.empty()) return bad("missing cluster.id");
  return std::optional<meta_properties>{meta};
}

status write_meta_properties(const fs::path& dir, const meta_properties& meta) {
  std::string text = "#capstan node data dir: do not edit\nversion=1\nnode.id=" +
                     std::to_string(meta.node_id) + "\ncluster.id=" + meta.cluster_id + "\n";
  return write_file_atomically(dir / meta_properties_file, text);
}

result<meta_properties> claim_data_dir(const fs::path& dir, int32_t node_id,
                                       const std::string& cluster_id) {
  auto existing = read_meta_properties(dir);
  if (!existing) return existing.err();
  if (*existing) {
    const auto& meta = **existing;
    if (meta.node_id != node_id)
      return make_error(errc::invalid_config,
                        "data dir " + dir.string() + " belongs to node " +
                          std::to_string(meta.node_id) + ", not node " + std::to_string(node_id) +
                          " (see its meta.properties)");
    if (!cluster_id.empty() && meta.cluster_id != cluster_id)
      return make_error(errc::invalid_config,
                        "data dir " + dir.string() + " belongs to cluster " + meta.cluster_id +
                          ", not cluster " + cluster_id + " (see its meta.properties)");
    return meta;
  }
  meta_properties meta{node_id, cluster_id.empty() ? new_cluster_id() : cluster_id};
  if (auto s = write_meta_properties(dir, meta); !s) return s.err();
  return meta;
}

std::string new_cluster_id() {
  static constexpr char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::random_device rd;
  uint8_t bytes[16];
  for (auto& b : bytes) b = static_cast<uint8_t>(rd());
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (uint8_t b : bytes) {
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

} // namespace capstan
