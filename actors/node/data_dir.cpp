#include "actors/node/data_dir.hpp"

#include <algorithm>
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
#include <vector>

#include "runtime/cluster/metadata_store.hpp"
#include "runtime/storage/offset_checkpoint.hpp"
#include "runtime/storage/partition_metadata.hpp"

namespace capstan {

namespace fs = std::filesystem;

result<data_dir_lock> data_dir_lock::acquire(const fs::path& dir) {
  const auto file = dir / data_dir_lock_file;
  bool created = true;
  int fd = ::open(file.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EEXIST) {
    created = false;
    fd = ::open(file.c_str(), O_RDWR | O_CLOEXEC);
  }
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
  return data_dir_lock(fd, created);
}

data_dir_lock::data_dir_lock(data_dir_lock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), created_(other.created_) {}

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

namespace {

// What in `dir` shows that a node has used it: its metadata, checkpoints and partition
// directories (<topic>-<partition>), named for a message. Empty for a new data dir.
std::vector<std::string> node_state_in(const fs::path& dir) {
  std::vector<std::string> found;
  size_t partitions = 0;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (name == metadata_store_file || name == recovery_point_checkpoint_name ||
        name == high_watermark_checkpoint_name) {
      found.push_back(name);
      continue;
    }
    std::error_code type_ec;
    const auto dash = name.rfind('-');
    if (dash == std::string::npos || dash + 1 == name.size() || !it->is_directory(type_ec)) continue;
    const bool numbered = std::all_of(name.begin() + static_cast<std::ptrdiff_t>(dash) + 1,
                                      name.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (numbered && validate_topic_name(name.substr(0, dash))) ++partitions;
  }
  if (ec) found.push_back("an unlistable directory (" + ec.message() + ")");
  if (partitions > 0) found.push_back(std::to_string(partitions) + " partition directories");
  return found;
}

error missing_meta_properties(const fs::path& dir, int32_t node_id,
                              const std::vector<std::string>& found) {
  std::string cluster_id = "<the cluster_id in " + std::string(metadata_store_file) + ">";
  if (auto stored = read_metadata_store(dir / metadata_store_file); stored && !stored->cluster_id.empty())
    cluster_id = stored->cluster_id;
  std::string what;
  for (const auto& f : found) what += (what.empty() ? "" : ", ") + f;
  return make_error(
    errc::kafka_storage_error,
    "data dir " + dir.string() + " has no " + meta_properties_file + ", but it holds a node's data (" +
      what + "): " + meta_properties_file + " was removed or lost, and the node will not start "
      "without it (a new one would give the data a new cluster id). Restore it from a backup, or "
      "write " + (dir / meta_properties_file).string() + " with the lines: version=1, node.id=" +
      std::to_string(node_id) + " (if this data is node " + std::to_string(node_id) +
      "'s), cluster.id=" + cluster_id);
}

} // namespace

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
  if (auto found = node_state_in(dir); !found.empty())
    return missing_meta_properties(dir, node_id, found);
  meta_properties meta{node_id, cluster_id.empty() ? new_cluster_id() : cluster_id};
  if (auto s = write_meta_properties(dir, meta); !s) return s.err();
  return meta;
}

std::string new_cluster_id() {
  std::random_device rd;
  uuid_bytes bytes;
  for (auto& b : bytes) b = static_cast<uint8_t>(rd());
  return to_base64_uuid(bytes);
}

} // namespace capstan
