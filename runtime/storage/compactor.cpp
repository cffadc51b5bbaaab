#include "runtime/storage/compactor.hpp"

#include <algorithm>
#include <cerrno>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>

#include <sys/stat.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "runtime/batch/record_batch_filter.hpp"
#include "runtime/batch/record_batch_view.hpp"
#include "runtime/storage/file_handle.hpp"
#include "runtime/storage/log_loader.hpp"
#include "runtime/storage/mmap_region.hpp"

namespace capstan {

namespace fs = std::filesystem;

namespace {

std::string_view as_chars(bytes_view b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

// Lets the key map be probed with a string_view into a mapped segment, without a copy.
struct key_hash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
// key -> offset of its latest record. Holds every distinct key of the cleaned segments in memory
// (docs/compaction.md, "Memory").
using key_map = std::unordered_map<std::string, offset, key_hash, std::equal_to<>>;

// now - retention, saturated at the int64 range.
timestamp_ms delete_horizon(timestamp_ms now, int64_t retention_ms) {
  timestamp_ms horizon = 0;
  if (__builtin_sub_overflow(now, retention_ms, &horizon))
    return retention_ms > 0 ? std::numeric_limits<timestamp_ms>::min()
                            : std::numeric_limits<timestamp_ms>::max();
  return horizon;
}

fs::path log_path(const fs::path& dir, offset base) {
  return dir / (segment::file_stem(base) + ".log");
}

// One sealed input .log, mapped read-only for both passes. The mapping pins the inode, so both
// passes read the same bytes even if the file is renamed over meanwhile (a truncation, an
// install); install then notices the replacement by the inode.
struct mapped_log {
  fs::path path;
  std::shared_ptr<const mmap_region> region;
  uint64_t device = 0;
  uint64_t inode = 0;
};

result<mapped_log> map_log(const fs::path& path) {
  auto file = file_handle::open(path, file_mode::open_existing);
  if (!file) return file.err();
  struct stat st {};
  if (::fstat(file->fd(), &st) != 0) return storage_error("fstat", path, errno);
  auto region = mmap_region::map(*file, static_cast<size_t>(st.st_size));
  if (!region) return region.err();
  return mapped_log{path, std::move(*region), static_cast<uint64_t>(st.st_dev),
                    static_cast<uint64_t>(st.st_ino)};
}

// Walks the input segments in order, batch by batch, checking what the cleaner relies on beyond
// each batch's own validity: offsets strictly increase across all inputs and every batch lies
// inside its segment's range [base, next base). The base offset is not covered by the CRC, so
// these checks are what catch a damaged one. fn(view) is called per batch and returns a status;
// the first error stops the walk.
class input_walker {
public:
  explicit input_walker(const compaction_input& input) : input_(input) {}

  template <class Fn>
  status walk_segment(size_t index, const mapped_log& log, Fn&& fn) {
    const offset base = input_.bases[index];
    const bool has_next = index + 1 < input_.bases.size();
    batch_sequence_reader reader(log.region->bytes(), input_.options.max_batch_bytes,
                                 batch_validation::stored);
    for (;;) {
      auto next = reader.next();
      if (!next)
        return make_error(next.code(),
                          fmt::format("{}: {}", log.path.string(), next.err().message));
      if (!next->has_value()) return {};
      const record_batch_view& batch = **next;
      const offset first = batch.base_offset();
      const offset min_first = std::max(base, next_expected_);
      const offset limit =
          has_next ? input_.bases[index + 1] : offset{std::numeric_limits<int64_t>::max()};
      // first + lastOffsetDelta + 1 <= limit, written so that it cannot overflow.
      if (first < min_first || first.value() > limit.value() - batch.last_offset_delta() - 1)
        return make_error(
            errc::corrupt_message,
            fmt::format("{}: batch at position {} with base offset {} and last offset delta {} "
                        "is out of order: its offsets must lie in [{}, {})",
                        log.path.string(), reader.position() - batch.size_bytes(), first.value(),
                        batch.last_offset_delta(), min_first.value(), limit.value()));
      next_expected_ = batch.last_offset() + 1;
      if (status s = fn(batch); !s) return s;
    }
  }

  void restart() { next_expected_ = offset{std::numeric_limits<int64_t>::min()}; }

private:
  const compaction_input& input_;
  offset next_expected_{std::numeric_limits<int64_t>::min()};
};

// Pass 1: the latest offset of every key. Control batches are skipped: their records' keys are
// marker types, not user keys.
status build_key_map(const std::vector<mapped_log>& logs, input_walker& walker, key_map& latest) {
  for (size_t i = 0; i < logs.size(); ++i) {
    status s = walker.walk_segment(i, logs[i], [&](const record_batch_view& batch) -> status {
      if (batch.is_control()) return {};
      const offset base = batch.base_offset();
      batch.for_each_record([&](const record_view& r) {
        if (!r.key) return;
        const offset at = base + r.offset_delta;
        if (auto it = latest.find(as_chars(*r.key)); it != latest.end())
          it->second = at;
        else
          latest.emplace(std::string(as_chars(*r.key)), at);
      });
      return {};
    });
    if (!s) return s;
  }
  return {};
}

// Pass 2 for one segment: writes its cleaned copy into `staged` and fills `out`.
status clean_segment(const compaction_input& input, size_t index, const mapped_log& log,
                     input_walker& walker, const key_map& latest, const fs::path& staged,
                     compacted_segment& out) {
  const offset base = input.bases[index];
  out.base = base;
  out.staged_dir = staged;
  out.size_before = static_cast<int64_t>(log.region->size());
  out.source_device = log.device;
  out.source_inode = log.inode;

  auto cleaned = segment::open(staged, base, segment_open_mode::create, input.options);
  if (!cleaned) return cleaned.err();
  segment& seg = **cleaned;
  const timestamp_ms horizon = delete_horizon(input.now, input.delete_retention_ms);

  status s = walker.walk_segment(index, log, [&](const record_batch_view& batch) -> status {
    if (batch.is_control()) return seg.append(batch.data());
    int32_t removed = 0;
    auto kept = filter_records(batch, [&](const record_view& r, offset at) {
      bool keep = true;
      if (r.key) {
        auto it = latest.find(as_chars(*r.key));
        keep = it != latest.end() && it->second == at &&
               (r.value || batch.timestamp_of(r) >= horizon);
      }
      if (!keep) ++removed;
      return keep;
    });
    out.records_removed += removed;
    if (!kept) return {};
    return seg.append(removed == 0 ? batch.data() : bytes_view(*kept));
  });
  if (!s) return s;
  if (s = seg.seal(); !s) return s;
  if (s = seg.flush(); !s) return s;
  out.size_after = static_cast<int64_t>(seg.size_bytes());
  out.next_after = seg.next_offset();
  return {};
}

// Checks that dir/<stem>.log is still the file compaction read.
status check_source_unchanged(const fs::path& dir, const compacted_segment& seg) {
  const fs::path live = log_path(dir, seg.base);
  struct stat st {};
  if (::stat(live.c_str(), &st) != 0)
    return storage_error("install compacted segment: stat", live, errno);
  if (static_cast<uint64_t>(st.st_dev) != seg.source_device ||
      static_cast<uint64_t>(st.st_ino) != seg.source_inode || st.st_size != seg.size_before)
    return make_error(errc::kafka_storage_error,
                      fmt::format("install of compacted segment {}: the live log was replaced or "
                                  "changed since it was compacted (inode {} size {}, compacted "
                                  "inode {} size {})",
                                  live.string(), static_cast<uint64_t>(st.st_ino),
                                  static_cast<int64_t>(st.st_size), seg.source_inode,
                                  seg.size_before));
  return {};
}

} // namespace

result<compaction_output> compact_segments(const compaction_input& input) {
  for (size_t i = 1; i < input.bases.size(); ++i)
    if (input.bases[i] <= input.bases[i - 1])
      return make_error(errc::kafka_storage_error,
                        fmt::format("compaction of {}: segment bases must ascend, got {} after {}",
                                    input.dir.string(), input.bases[i].value(),
                                    input.bases[i - 1].value()));

  // Leftovers of an earlier, interrupted compaction are useless: they were never installed.
  discard_compaction(input.dir);
  const fs::path staged = input.dir / compaction_dir_name;
  if (auto made = make_directories(staged); !made) return made.err();

  auto fail = [&](const error& e) {
    discard_compaction(input.dir);
    return e;
  };

  std::vector<mapped_log> logs;
  for (offset base : input.bases) {
    auto log = map_log(log_path(input.dir, base));
    if (!log) return fail(log.err());
    logs.push_back(std::move(*log));
  }

  key_map latest;
  input_walker walker(input);
  if (status s = build_key_map(logs, walker, latest); !s) return fail(s.err());

  compaction_output out;
  walker.restart();
  for (size_t i = 0; i < logs.size(); ++i) {
    compacted_segment seg;
    if (status s = clean_segment(input, i, logs[i], walker, latest, staged, seg); !s)
      return fail(s.err());
    out.segments.push_back(std::move(seg));
  }
  if (status s = sync_directory(staged); !s) return fail(s.err());
  return out;
}

status install_compacted_segment(const fs::path& dir, const compacted_segment& seg) {
  const std::string stem = segment::file_stem(seg.base);
  const fs::path staged_log = seg.staged_dir / (stem + ".log");
  std::error_code ec;
  if (!fs::is_regular_file(staged_log, ec))
    return make_error(errc::kafka_storage_error,
                      fmt::format("install of compacted segment {} in {}: {} is missing", stem,
                                  dir.string(), staged_log.string()));
  if (status s = check_source_unchanged(dir, seg); !s) return s;

  // 1. Old indexes go, durably, before the log changes: an old index must never describe the
  //    cleaned log, while a missing index is simply rebuilt on load.
  for (const char* ext : {".index", ".timeindex"})
    if (status s = remove_file(dir / (stem + ext)); !s) return s;
  if (status s = sync_directory(dir); !s) return s;

  // 2. The cleaned log replaces the old one atomically. Readers holding the old file (an mmap or
  //    an open descriptor) keep reading the old inode.
  if (status s = rename_file(staged_log, dir / (stem + ".log")); !s) return s;
  if (status s = sync_directory(dir); !s) return s;

  // 3. The cleaned indexes, which segment::seal wrote for exactly this log.
  for (const char* ext : {".index", ".timeindex"}) {
    const fs::path from = seg.staged_dir / (stem + ext);
    if (!fs::exists(from, ec)) continue;
    if (status s = rename_file(from, dir / (stem + ext)); !s) return s;
  }
  return sync_directory(dir);
}

void discard_compaction(const fs::path& dir) {
  // What is left is never installed, and the next compaction or load removes it again.
  if (auto removed = remove_tree(dir / compaction_dir_name); !removed)
    spdlog::warn("{}", removed.err().message);
}

} // namespace capstan
