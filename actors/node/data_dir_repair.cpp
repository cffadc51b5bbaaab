#include "actors/node/data_dir_repair.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include <spdlog/spdlog.h>

#include "actors/node/data_dir.hpp"
#include "runtime/cluster/metadata_store.hpp"
#include "runtime/storage/partition_metadata.hpp"
#include "runtime/storage/offset_checkpoint.hpp"

namespace capstan {

namespace fs = std::filesystem;

namespace {

std::optional<offset> entry(const offset_map& m, const topic_partition& tp) {
  auto it = m.find(tp);
  if (it == m.end()) return std::nullopt;
  return it->second;
}

// The partitions this node holds, with the topic id each should have (nullopt: unknown). The
// store names a single node's topics with their ids; a replica a controller placed here is named
// only by the checkpoints and its directory, whose partition.metadata holds its id.
result<std::map<topic_partition, std::optional<topic_id>>> held_partitions(
  const fs::path& data_dir, int32_t node, const cluster_metadata& stored, const offset_map& recovery_points,
  const offset_map& high_watermarks) {
  std::map<topic_partition, std::optional<topic_id>> out;
  for (const auto& [tp, o] : recovery_points) out.emplace(tp, std::nullopt);
  for (const auto& [tp, o] : high_watermarks) out.emplace(tp, std::nullopt);
  std::error_code ec;
  fs::directory_iterator it(data_dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const auto name = it->path().filename().string();
    const auto dash = name.rfind('-');
    std::error_code type_ec;
    if (dash == std::string::npos || dash + 1 == name.size() || name.size() - dash > 10 ||
        !it->is_directory(type_ec))
      continue;
    if (!std::all_of(name.begin() + static_cast<std::ptrdiff_t>(dash) + 1, name.end(),
                     [](char c) { return c >= '0' && c <= '9'; }) ||
        !validate_topic_name(name.substr(0, dash)))
      continue;
    auto id = read_partition_metadata(it->path());
    // Torn by a crash soon after its creation: no id, as if missing (survey_log judges it).
    if (!id && partition_metadata_torn(it->path())) continue;
    if (!id) return id.err();
    if (*id) out[topic_partition{name.substr(0, dash), std::stoi(name.substr(dash + 1))}] = **id;
  }
  if (ec)
    return make_error(errc::kafka_storage_error,
                      "cannot list " + data_dir.string() + ": " + ec.message());
  for (const auto& [name, topic] : stored.topics)
    for (const auto& a : topic.partitions)
      if (std::find(a.replicas.begin(), a.replicas.end(), node) != a.replicas.end())
        out[topic_partition{name, a.partition}] = topic.id;
  return out;
}

} // namespace

result<data_dir_repair> find_repairs(const fs::path& data_dir, const std::vector<std::string>& only) {
  auto meta = read_meta_properties(data_dir);
  if (!meta) return meta.err();
  if (!*meta)
    return make_error(errc::kafka_storage_error,
                      (data_dir / meta_properties_file).string() +
                        " is missing: restore it first (capstan node says what to write)");
  auto metadata = read_metadata_store(data_dir / metadata_store_file);
  if (!metadata) return metadata.err();
  auto recovery_points = read_offset_checkpoint(data_dir / recovery_point_checkpoint_name);
  if (!recovery_points) return recovery_points.err();
  auto high_watermarks = read_offset_checkpoint(data_dir / high_watermark_checkpoint_name);
  if (!high_watermarks) return high_watermarks.err();

  data_dir_repair out;
  out.node_id = (*meta)->node_id;
  auto held = held_partitions(data_dir, out.node_id, *metadata, *recovery_points, *high_watermarks);
  if (!held) return held.err();
  std::set<std::string> wanted(only.begin(), only.end());
  std::set<std::string> seen;
  for (const auto& [tp, id] : *held) {
    partition_repair r;
    r.tp = tp;
    r.partition = tp.first + "-" + std::to_string(tp.second);
    seen.insert(r.partition);
    if (!wanted.empty() && wanted.count(r.partition) == 0) continue;
    r.dir = data_dir / r.partition;
    r.checkpoints = checkpointed_offsets{entry(*recovery_points, tp), entry(*high_watermarks, tp)};
    const offset known_end = r.checkpoints.known_end();
    // No batch size limit: the node's max.message.bytes may be above the default, and a
    // repair must never cut a batch the node would keep.
    auto survey = survey_log(r.dir, r.checkpoints.recovery_point.value_or(offset{0}),
                             std::numeric_limits<size_t>::max());
    if (!survey) return survey.err();
    // A directory of an earlier topic of this name is the node's business (it moves it aside).
    if (survey->exists && survey->topic_id && id && *survey->topic_id != *id) continue;
    if (!survey->exists) {
      if (known_end == offset{0}) continue;
      r.damage = "the directory is missing, but the checkpoints say offsets up to " +
                 std::to_string(known_end.value() - 1) + " were handed out";
    } else {
      auto report = find_damage(*survey, known_end);
      if (!report.damaged()) continue;
      r.damage = report.describe();
    }
    // Unknown (a lost directory of a replica the controller placed): the node writes the id when
    // it opens the replica.
    r.plan = plan_repair(*survey, known_end, id.value_or(topic_id{}));
    out.partitions.push_back(std::move(r));
  }
  for (const auto& name : wanted)
    if (seen.count(name) == 0)
      return make_error(errc::invalid_config, "'" + name + "' is not a partition of node " +
                                                std::to_string(out.node_id) + " in " +
                                                data_dir.string());
  return out;
}

status apply_repairs(const fs::path& data_dir, const data_dir_repair& repairs) {
  if (repairs.partitions.empty()) return {};
  auto recovery_points = read_offset_checkpoint(data_dir / recovery_point_checkpoint_name);
  if (!recovery_points) return recovery_points.err();
  auto high_watermarks = read_offset_checkpoint(data_dir / high_watermark_checkpoint_name);
  if (!high_watermarks) return high_watermarks.err();
  for (const auto& r : repairs.partitions) {
    if (auto s = apply_repair(r.dir, r.plan, data_dir / repair_moved_dir / r.partition); !s) return s;
    (*recovery_points)[r.tp] = offset{0};
    (*high_watermarks)[r.tp] = r.checkpoints.known_end();
    spdlog::info("{}: repaired", r.partition);
  }
  if (auto s = write_offset_checkpoint(data_dir / recovery_point_checkpoint_name, *recovery_points); !s)
    return s;
  return write_offset_checkpoint(data_dir / high_watermark_checkpoint_name, *high_watermarks);
}

} // namespace capstan
