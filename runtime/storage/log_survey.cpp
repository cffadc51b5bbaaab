#include "runtime/storage/log_survey.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <system_error>

#include <fmt/format.h>

#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/record_batch_view.hpp"
#include "runtime/storage/file_handle.hpp"
#include "runtime/storage/mmap_region.hpp"
#include "runtime/storage/offset_index.hpp"
#include "runtime/storage/segment.hpp"

namespace capstan {

namespace fs = std::filesystem;

namespace {

// Index entries hold positions and relative offsets as uint32 (docs/storage.md).
constexpr uint64_t max_relative = std::numeric_limits<uint32_t>::max();

std::optional<offset> parse_stem(const std::string& stem) {
  if (stem.size() != 20 || !std::all_of(stem.begin(), stem.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(stem.data(), stem.data() + stem.size(), v);
  if (ec != std::errc{} || end != stem.data() + stem.size()) return std::nullopt;
  return offset{v};
}

struct scan_result {
  uint64_t valid_end = 0;
  offset next{0};
  std::string reason; // empty: the scan reached the end of the file cleanly
};

// Validates the batches of `all` from `start` (a multiple of 8) as segment::recover does: each
// batch well-formed with a good CRC (stored mode), zero padding between batches, base offsets
// increasing from `first_base` (exactly `first_base` for the first one when `exact_first`), and
// every position and offset inside the segment's 32-bit index range.
scan_result scan(bytes_view all, uint64_t start, offset segment_base, offset first_base,
                 bool exact_first, size_t max_batch_bytes) {
  scan_result out{start, first_base, {}};
  const bytes_view tail = all.subspan(static_cast<size_t>(start));
  batch_sequence_reader batches(tail, max_batch_bytes, batch_validation::stored);
  bool first = true;
  for (;;) {
    auto b = batches.next();
    if (!b) {
      out.reason = b.err().to_string();
      return out;
    }
    if (!*b) {
      if (out.valid_end < all.size())
        out.reason = fmt::format("{} bytes of padding after the last batch", all.size() - out.valid_end);
      return out;
    }
    const record_batch_view& v = **b;
    const uint64_t pos = start + static_cast<uint64_t>(v.data().data() - tail.data());
    if (v.base_offset().value() > std::numeric_limits<int64_t>::max() - v.last_offset_delta()) {
      out.reason = fmt::format("batch at position {} has base offset {}, out of range", pos,
                               v.base_offset().value());
      return out;
    }
    if (v.base_offset() < out.next || (first && exact_first && v.base_offset() != first_base)) {
      out.reason = fmt::format("batch at position {} has base offset {}, expected {}{}", pos,
                               v.base_offset().value(), exact_first && first ? "" : "at least ",
                               out.next.value());
      return out;
    }
    if (pos > max_relative || static_cast<uint64_t>(v.last_offset() - segment_base) > max_relative) {
      out.reason = fmt::format("batch at position {} (offsets {}-{}) is beyond the 32-bit index "
                               "range of the segment",
                               pos, v.base_offset().value(), v.last_offset().value());
      return out;
    }
    first = false;
    out.valid_end = pos + v.size_bytes();
    out.next = v.last_offset() + 1;
  }
}

// The last entry of <stem>.index when it is usable as a scan start: nullopt otherwise.
std::optional<offset_index_entry> last_index_entry(const fs::path& index_file, uint64_t log_size) {
  auto file = file_handle::open(index_file, file_mode::open_existing);
  if (!file) return std::nullopt;
  auto size = file->size();
  if (!size || *size < offset_index::entry_size || *size % offset_index::entry_size != 0)
    return std::nullopt;
  uint8_t raw[offset_index::entry_size];
  if (!file->pread_all(raw, *size - offset_index::entry_size)) return std::nullopt;
  auto decoded = offset_index::decode(bytes_view(raw, sizeof raw), log_size);
  if (!decoded || decoded->empty()) return std::nullopt;
  return decoded->back();
}

result<surveyed_segment> survey_segment(const fs::path& dir, offset base, bool trusted,
                                        size_t max_batch_bytes) {
  const auto stem = segment::file_stem(base);
  const auto path = dir / (stem + ".log");
  auto file = file_handle::open(path, file_mode::open_existing);
  if (!file) return file.err();
  auto size = file->size();
  if (!size) return size.err();
  auto region = mmap_region::map(*file, static_cast<size_t>(*size));
  if (!region) return region.err();
  const bytes_view all = (*region)->bytes();

  surveyed_segment out;
  out.base = base;
  out.file_bytes = *size;
  scan_result found;
  bool scanned = false;
  if (trusted) {
    // Trusted data was fsynced: only the batches after the last index entry are new to the index.
    if (auto e = last_index_entry(dir / (stem + ".index"), *size); e && e->position > 0) {
      found = scan(all, e->position, base, base + e->relative_offset, true, max_batch_bytes);
      scanned = found.reason.empty();
    }
  }
  if (!scanned) found = scan(all, 0, base, base, false, max_batch_bytes);
  out.end = found.next;
  out.valid_bytes = found.valid_end;
  out.cut_reason = found.reason;
  return out;
}

} // namespace

bool log_survey::holds_bytes() const {
  return std::any_of(segments.begin(), segments.end(),
                     [](const surveyed_segment& s) { return s.file_bytes > 0; });
}

result<log_survey> survey_log(const fs::path& dir, offset recovery_point, size_t max_batch_bytes) {
  log_survey out;
  std::error_code ec;
  const auto st = fs::status(dir, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    return make_error(errc::kafka_storage_error, "cannot stat " + dir.string() + ": " + ec.message());
  if (!fs::exists(st)) return out;
  if (!fs::is_directory(st))
    return make_error(errc::kafka_storage_error,
                      dir.string() + " is not a directory, but the partition's log directory must be there");
  out.exists = true;

  std::map<offset, bool> bases; // base -> has .log
  fs::directory_iterator it(dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const auto& p = it->path();
    const auto ext = p.extension().string();
    if (ext != ".log" && ext != ".index" && ext != ".timeindex") continue;
    auto base = parse_stem(p.stem().string());
    if (!base) continue;
    std::error_code type_ec;
    const bool regular = it->is_regular_file(type_ec);
    if (type_ec)
      return make_error(errc::kafka_storage_error,
                        "cannot stat " + p.string() + ": " + type_ec.message());
    if (regular) bases[*base] |= ext == ".log";
  }
  if (ec) return make_error(errc::kafka_storage_error, "cannot list " + dir.string() + ": " + ec.message());

  std::vector<offset> log_bases;
  for (const auto& [base, has_log] : bases) {
    if (has_log) log_bases.push_back(base);
    else out.orphan_indexes.push_back(base);
  }
  for (size_t i = 0; i < log_bases.size(); ++i) {
    const bool trusted = i + 1 < log_bases.size() && log_bases[i + 1] <= recovery_point;
    auto seg = survey_segment(dir, log_bases[i], trusted, max_batch_bytes);
    if (!seg) return seg.err();
    out.segments.push_back(std::move(*seg));
  }

  // A new directory's partition.metadata is durable only from its first record on
  // (prepare_partition_dir): a crash before may leave its name without its content. Without a
  // byte in its segments the directory has nothing a later topic could adopt.
  auto id = read_partition_metadata(dir);
  if (id) {
    out.topic_id = *id;
  } else if (!out.holds_bytes() && partition_metadata_torn(dir)) {
    out.metadata_torn = true;
  } else {
    return id.err();
  }
  auto gaps = read_offset_gaps(dir);
  if (!gaps) return gaps.err();
  out.gaps = std::move(*gaps);
  return out;
}

} // namespace capstan
