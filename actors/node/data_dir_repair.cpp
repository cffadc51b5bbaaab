#include "actors/node/data_dir_repair.hpp"

#include <algorithm>
#include <limits>
#include <set>

#include <spdlog/spdlog.h>

#include "actors/node/data_dir.hpp"
#include "runtime/cluster/metadata_store.hpp"
#include "runtime/storage/offset_checkpoint.hpp"

namespace capstan {

namespace fs = std::filesystem;

namespace {

std::optional<offset> entry(const offset_map& m, const topic_partition& tp) {
  auto it = m.find(tp);
  if (it == m.end()) return std::nullopt;
  return it->second;
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
  std::set<std::string> wanted(only.begin(), only.end());
  std::set<std::string> seen;
  for (const auto& [name, topic] : metadata->topics) {
    for (const auto& a : topic.partitions) {
      if (std::find(a.replicas.begin(), a.replicas.end(), out.node_id) == a.replicas.end()) continue;
      const topic_partition tp{name, a.partition};
      partition_repair r;
      r.tp = tp;
      r.partition = name + "-" + std::to_string(a.partition);
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
      if (survey->exists && survey->topic_id && *survey->topic_id != topic.id) continue;
      if (!survey->exists) {
        if (known_end == offset{0}) continue;
        r.damage = "the directory is missing, but the checkpoints say offsets up to " +
                   std::to_string(known_end.value() - 1) + " were handed out";
      } else {
        auto report = find_damage(*survey, known_end);
        if (!report.damaged()) continue;
        r.damage = report.describe();
      }
      r.plan = plan_repair(*survey, known_end, topic.id);
      out.partitions.push_back(std::move(r));
    }
  }
  for (const auto& name : wanted)
    if (seen.count(name) == 0)
      return make_error(errc::invalid_config, "'" + name + "' is not a partition of node " +
                                                std::to_string(out.node_id) + " in " +
                                                (data_dir / metadata_store_file).string());
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
