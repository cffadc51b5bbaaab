#include "runtime/storage/log_repair.hpp"

#include <algorithm>
#include <system_error>

#include <fmt/format.h>

#include "runtime/storage/file_handle.hpp"
#include "runtime/storage/partition_metadata.hpp"
#include "runtime/storage/segment.hpp"

namespace capstan {

namespace fs = std::filesystem;

namespace {

using kind = repair_step::kind;

std::string range_text(offset from, offset to) {
  if (to - from == 1) return fmt::format("offset {}", from.value());
  return fmt::format("offsets {}..{}", from.value(), to.value() - 1);
}

void move_segment_aside(std::vector<repair_step>& steps, offset base, const std::string& why) {
  const auto stem = segment::file_stem(base);
  steps.push_back({kind::move_aside, stem, base, base, 0, fmt::format("move segment {} aside: {}", stem, why)});
}

void record_gap(std::vector<repair_step>& steps, offset from, offset to, const std::string& why) {
  steps.push_back({kind::record_gap, {}, from, to, 0,
                   fmt::format("record {} as a gap ({})", range_text(from, to), why)});
}

fs::path free_name(const fs::path& aside_dir, const std::string& name) {
  auto target = aside_dir / name;
  std::error_code ec;
  for (int n = 1; fs::exists(fs::symlink_status(target, ec)); ++n)
    target = aside_dir / (name + "." + std::to_string(n));
  return target;
}


status sync_file(const fs::path& path) {
  auto f = file_handle::open(path, file_mode::open_existing);
  if (!f) return f.err();
  return f->sync();
}

} // namespace

repair_plan plan_repair(const log_survey& survey, offset known_end, const uuid_bytes& topic_id) {
  repair_plan plan;
  plan.topic_id = topic_id;
  auto& steps = plan.steps;
  std::vector<repair_step> late; // new segments and records, after every move and cut
  if (!survey.exists) {
    steps.push_back({kind::create_directory, {}, {}, {}, 0, "create the missing directory"});
    if (topic_id != uuid_bytes{})
      steps.push_back({kind::write_partition_metadata, partition_metadata_file, {}, {}, 0,
                       "write partition.metadata"});
    if (known_end > offset{0})
      steps.push_back({kind::create_segment, segment::file_stem(known_end) + ".log", known_end, known_end, 0,
                       fmt::format("start the log empty at offset {} ({} lost)", known_end.value(),
                                   range_text(offset{0}, known_end))});
    return plan;
  }

  std::optional<offset> end;
  const auto& segs = survey.segments;
  for (size_t i = 0; i < segs.size(); ++i) {
    const auto& seg = segs[i];
    const auto name = segment::file_stem(seg.base) + ".log";
    if (end && seg.base < *end) {
      move_segment_aside(steps, seg.base,
                         fmt::format("it starts at {}, inside the segment before it, which ends at {}",
                                     seg.base.value(), end->value()));
      continue;
    }
    const bool continues = !end || seg.base == *end || survey.gaps.covers(*end, seg.base);
    if (seg.end == seg.base && (end ? !continues : seg.file_bytes > 0)) {
      move_segment_aside(steps, seg.base,
                         end ? fmt::format("it holds no valid batch and does not continue the "
                                           "segment before it, which ends at {}",
                                           end->value())
                             : std::string("it holds no valid batch"));
      continue;
    }
    if (!continues) record_gap(late, *end, seg.base, "missing between two segments");
    end = seg.end;
    if (seg.would_cut()) {
      // Past what was handed out, start-up recovery cuts it as after any crash (and drops what
      // follows); below it, the operator's acceptance is needed and what follows is kept.
      if (seg.end >= known_end) break;
      steps.push_back({kind::copy_aside_and_cut, name, seg.end, seg.end, seg.valid_bytes,
                       fmt::format("copy {} aside, then cut it after its last valid batch "
                                   "({} bytes kept, {} cut: {})",
                                   name, seg.valid_bytes, seg.file_bytes - seg.valid_bytes,
                                   seg.cut_reason)});
    }
  }

  for (offset base : survey.orphan_indexes)
    move_segment_aside(steps, base, "its .log is missing");
  if (!end) {
    if (known_end > offset{0})
      late.push_back({kind::create_segment, segment::file_stem(known_end) + ".log", known_end, known_end, 0,
                      fmt::format("start the log empty at offset {}", known_end.value())});
  } else if (*end < known_end) {
    late.push_back({kind::create_segment, segment::file_stem(known_end) + ".log", known_end, known_end, 0,
                    fmt::format("continue the log at offset {}", known_end.value())});
    record_gap(late, *end, known_end, "lost at the end of the log");
  }
  if (!survey.topic_id && topic_id != uuid_bytes{})
    late.push_back({kind::write_partition_metadata, partition_metadata_file, {}, {}, 0,
                    "write partition.metadata"});
  else if (survey.metadata_torn)
    late.push_back({kind::remove_partition_metadata, partition_metadata_file, {}, {}, 0,
                    "remove the empty partition.metadata (the node writes the topic id it opens "
                    "the partition for)"});
  steps.insert(steps.end(), late.begin(), late.end());
  return plan;
}

status apply_repair(const fs::path& dir, const repair_plan& plan, const fs::path& aside_dir) {
  offset_gaps gaps;
  bool gaps_changed = false;
  bool aside_used = false;
  for (const auto& step : plan.steps) {
    switch (step.what) {
    case kind::create_directory: {
      if (auto s = make_directories(dir); !s) return s;
      if (auto s = sync_parent_directory(dir); !s) return s;
      break;
    }
    case kind::write_partition_metadata:
      if (auto s = write_partition_metadata(dir, plan.topic_id); !s) return s;
      break;
    case kind::remove_partition_metadata:
      if (auto s = remove_file(dir / partition_metadata_file); !s) return s;
      if (auto s = sync_directory(dir); !s) return s;
      break;
    case kind::move_aside:
      for (const char* ext : {".log", ".index", ".timeindex"}) {
        const auto from = dir / (step.file + ext);
        std::error_code ec;
        if (!fs::exists(fs::symlink_status(from, ec))) continue;
        if (auto s = make_directories(aside_dir); !s) return s;
        if (auto s = rename_file(from, free_name(aside_dir, step.file + ext)); !s) return s;
        aside_used = true;
      }
      break;
    case kind::copy_aside_and_cut: {
      if (auto s = make_directories(aside_dir); !s) return s;
      const auto from = dir / step.file;
      const auto copy = free_name(aside_dir, step.file);
      std::error_code ec;
      fs::copy_file(from, copy, ec);
      if (ec)
        return make_error(errc::kafka_storage_error,
                          fmt::format("cannot copy {} to {}: {}", from.string(), copy.string(), ec.message()));
      if (auto s = sync_file(copy); !s) return s;
      aside_used = true;
      auto f = file_handle::open(from, file_mode::open_existing);
      if (!f) return f.err();
      if (auto s = f->truncate(step.keep_bytes); !s) return s;
      if (auto s = f->sync(); !s) return s;
      break;
    }
    case kind::create_segment: {
      auto seg = segment::open(dir, step.from, segment_open_mode::create, {});
      if (!seg) return seg.err();
      if (auto s = (*seg)->flush(); !s) return s;
      break;
    }
    case kind::record_gap:
      if (!gaps_changed) {
        auto existing = read_offset_gaps(dir);
        if (!existing) return existing.err();
        gaps = std::move(*existing);
        gaps_changed = true;
      }
      gaps.add(step.from, step.to);
      break;
    }
  }
  if (gaps_changed)
    if (auto s = write_offset_gaps(dir, gaps); !s) return s;
  if (aside_used) {
    if (auto s = sync_directory(aside_dir); !s) return s;
    if (auto s = sync_parent_directory(aside_dir); !s) return s;
  }
  return sync_directory(dir);
}

} // namespace capstan
