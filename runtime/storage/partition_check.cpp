#include "runtime/storage/partition_check.hpp"

#include <algorithm>
#include <system_error>

#include <fmt/format.h>

#include "runtime/storage/file_handle.hpp"

namespace capstan {

namespace fs = std::filesystem;

namespace {

constexpr const char* what_to_do =
  "Nothing in the directory was changed; restore what is missing, or accept the loss with "
  "`capstan log repair` on the stopped node";

std::string range_text(offset from, offset to) {
  if (to - from == 1) return fmt::format("offset {}", from.value());
  return fmt::format("offsets {}..{}", from.value(), to.value() - 1);
}

// " (index files of <stem> remain without their .log)" for the orphans inside [from, to).
std::string orphan_note(const log_survey& survey, offset from, offset to) {
  std::vector<std::string> stems;
  for (offset base : survey.orphan_indexes)
    if (base >= from && base < to) stems.push_back(segment::file_stem(base));
  if (stems.empty()) return {};
  return fmt::format(" (index files of {} remain without their .log)", fmt::join(stems, ", "));
}

} // namespace

offset checkpointed_offsets::known_end() const {
  return std::max(recovery_point.value_or(offset{0}), high_watermark.value_or(offset{0}));
}

std::string damage_report::describe() const {
  std::vector<std::string> parts;
  for (const auto& d : damages) parts.push_back(d.what);
  return fmt::format("{}", fmt::join(parts, "; "));
}

damage_report find_damage(const log_survey& survey, offset known_end) {
  damage_report out;
  std::optional<offset> end;
  const auto& segs = survey.segments;
  for (size_t i = 0; i < segs.size(); ++i) {
    const auto& seg = segs[i];
    const auto name = segment::file_stem(seg.base) + ".log";
    if (end && seg.base < *end) {
      // The loader would delete this segment and every later one.
      out.damages.push_back({seg.base, *end,
                             fmt::format("segment {} starts at offset {}, inside the offsets of the "
                                         "segment before it, which ends at {}",
                                         name, seg.base.value(), end->value())});
      break;
    }
    if (end && seg.base > *end && !survey.gaps.covers(*end, seg.base))
      out.damages.push_back(
        {*end, seg.base,
         fmt::format("{} missing: segment {} starts at {} but the segment before it ends at {}{}",
                     range_text(*end, seg.base), name, seg.base.value(), end->value(),
                     orphan_note(survey, *end, seg.base))});
    end = seg.end;
    if (seg.would_cut()) {
      const bool last = i + 1 == segs.size();
      if (seg.end < known_end)
        out.damages.push_back(
          {seg.end, known_end,
           fmt::format("segment {} has {} bytes past its last valid batch ({}); recovery would cut "
                       "them{} and lose {}, which were handed out",
                       name, seg.file_bytes - seg.valid_bytes, seg.cut_reason,
                       last ? "" : fmt::format(" and the {} segments after it", segs.size() - i - 1),
                       range_text(seg.end, known_end))});
      if (!last) break;
    }
  }
  // Torn beside no record is what a crash soon after the creation leaves, but not in a
  // directory that handed out offsets: its file was durable once.
  if (survey.metadata_torn && known_end > offset{0})
    out.damages.push_back({known_end, known_end,
                           fmt::format("partition.metadata is empty, but the checkpoints say "
                                       "offsets up to {} were handed out",
                                       known_end.value() - 1)});
  out.recovered_end = end;
  const bool tail_reported = !out.damages.empty() && out.damages.back().to >= known_end;
  if (!end && known_end > offset{0}) {
    out.damages.push_back({offset{0}, known_end,
                           fmt::format("the directory holds no segment, but the checkpoints say "
                                       "offsets up to {} were handed out{}",
                                       known_end.value() - 1,
                                       orphan_note(survey, offset{0}, known_end))});
  } else if (end && *end < known_end && !tail_reported) {
    out.damages.push_back(
      {*end, known_end,
       fmt::format("the log ends at offset {}, but the checkpoints say offsets up to {} were "
                   "handed out: {} missing{}",
                   end->value(), known_end.value() - 1, range_text(*end, known_end),
                   orphan_note(survey, *end, known_end))});
  }
  return out;
}

result<prepared_dir> prepare_partition_dir(const fs::path& dir, const std::string& partition,
                                           const uuid_bytes& topic_id,
                                           const checkpointed_offsets& checkpoints,
                                           const segment_options& options) {
  auto survey = survey_log(dir, checkpoints.recovery_point.value_or(offset{0}), options.max_batch_bytes);
  if (!survey) return survey.err();
  prepared_dir out;
  bool known = checkpoints.any();

  if (survey->exists && survey->topic_id && *survey->topic_id != topic_id) {
    // Left by a deleted topic of the same name (a crash between the metadata change and the
    // removal, or a removal that failed): never the new topic's data. Moved aside, not deleted.
    auto target = dir;
    target += "." + to_base64_uuid(*survey->topic_id) + "-stray";
    std::error_code ec;
    for (int n = 1; fs::exists(fs::symlink_status(target, ec)); ++n) {
      target = dir;
      target += "." + to_base64_uuid(*survey->topic_id) + "-stray." + std::to_string(n);
    }
    if (auto s = rename_file(dir, target); !s) return s.err();
    if (auto s = sync_parent_directory(dir); !s) return s.err();
    out.state = dir_state::replaced;
    out.moved_to = target;
    survey->exists = false;
    known = false;
  }

  if (!survey->exists) {
    if (known && checkpoints.known_end() > offset{0})
      return make_error(
        errc::kafka_storage_error,
        fmt::format("{}: its log directory {} is missing, but the checkpoints say offsets up to {} "
                    "were handed out (recovery point {}, high watermark {}): those records are "
                    "lost. {}",
                    partition, dir.string(), checkpoints.known_end().value() - 1,
                    checkpoints.recovery_point.value_or(offset{0}).value(),
                    checkpoints.high_watermark.value_or(offset{0}).value(), what_to_do));
    // Nothing here is fsynced: a new directory is made durable, partition.metadata first, before
    // its log writes a record (make_partition_dir_durable), as Kafka flushes partition.metadata
    // before the first append. Creating thousands of partitions then waits on no fsync. A crash
    // before may lose the directory or leave it without a readable partition.metadata, but it
    // holds no record then, so no later topic of the same name can adopt records of this one.
    if (auto made = make_directories(dir); !made) return made.err();
    if (auto s = write_partition_metadata(dir, topic_id, sync_mode::unsynced); !s) return s.err();
    if (out.state != dir_state::replaced) out.state = dir_state::created;
    out.unsynced = true;
    return out;
  }

  auto report = find_damage(*survey, known ? checkpoints.known_end() : offset{0});
  if (report.damaged())
    return make_error(errc::kafka_storage_error, fmt::format("{} ({}): {}. {}", partition, dir.string(),
                                                             report.describe(), what_to_do));
  if (!survey->topic_id)
    if (auto s = write_partition_metadata(dir, topic_id); !s) return s.err();
  out.recovery_point = checkpoints.recovery_point.value_or(offset{0});
  // Taken as durable only when a record was written into it (the log makes the directory durable
  // before its first) and a checkpoint knows it. A checkpoint alone proves nothing: its write
  // syncs only the data dir. Anything less costs one more sync, at the next first append.
  out.unsynced = !known || !survey->holds_bytes();
  return out;
}

} // namespace capstan
