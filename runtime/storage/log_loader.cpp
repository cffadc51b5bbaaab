#include "runtime/storage/log_loader.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <system_error>

#include <spdlog/spdlog.h>

#include "runtime/storage/file_handle.hpp"
#include "runtime/storage/leader_epoch_checkpoint.hpp"
#include "runtime/storage/offset_gaps.hpp"
#include "runtime/storage/partition_metadata.hpp"
#include "runtime/storage/producer_snapshot.hpp"

namespace capstan {

namespace {

// "00000000000000000042" -> 42; anything else -> nullopt.
std::optional<offset> parse_stem(const std::string& stem) {
  if (stem.size() != 20 || !std::all_of(stem.begin(), stem.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(stem.data(), stem.data() + stem.size(), v);
  if (ec != std::errc{} || end != stem.data() + stem.size()) return std::nullopt;
  return offset{v};
}

} // namespace

result<loaded_log> load_log(const std::filesystem::path& dir, offset recovery_point, offset start,
                            const segment_options& options, const std::string& log_name) {
  namespace fs = std::filesystem;
  loaded_log out;
  std::map<offset, bool> bases; // base -> has .log
  std::error_code ec;

  if (auto removed = remove_tree(dir / compaction_dir_name); !removed) return removed.err();
  fs::directory_iterator it(dir, ec);
  for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const auto& path = it->path();
    const auto name = path.filename().string();
    const auto ext = path.extension().string();
    auto base = parse_stem(path.stem().string());
    if (base && (ext == ".log" || ext == ".index" || ext == ".timeindex")) {
      std::error_code type_ec;
      const bool regular = it->is_regular_file(type_ec);
      if (type_ec)
        return make_error(errc::kafka_storage_error,
                          "cannot stat " + path.string() + ": " + type_ec.message());
      if (regular) {
        bases[*base] |= ext == ".log";
        continue;
      }
    }
    // A sealed segment's interrupted truncation; segment::open of its base deletes it.
    if (ext == ".truncating" && parse_stem(path.stem().stem().string())) continue;
    if (name == partition_metadata_file || name == offset_gaps_file ||
        name == leader_epoch_checkpoint_name || parse_producer_snapshot_name(name))
      continue;
    out.unknown_files.push_back(name);
  }
  if (ec) return make_error(errc::kafka_storage_error, "cannot list " + dir.string() + ": " + ec.message());
  for (const auto& name : out.unknown_files)
    spdlog::warn("{}: unknown file {} in {} left alone", log_name, name, dir.string());

  // A leftover that cannot be removed is left for the next load; it is never read.
  auto remove_leftover = [&](const fs::path& file) {
    if (auto removed = remove_file(file); !removed)
      spdlog::warn("{}: {}", log_name, removed.err().message);
  };
  std::vector<offset> log_bases;
  for (const auto& [base, has_log] : bases) {
    if (has_log) {
      log_bases.push_back(base);
    } else {
      // Index files without their log (a crash between deleting a segment's files): useless.
      spdlog::warn("{}: index files of {} have no .log; removing them", log_name,
                   segment::file_stem(base));
      remove_leftover(dir / (segment::file_stem(base) + ".index"));
      remove_leftover(dir / (segment::file_stem(base) + ".timeindex"));
    }
  }

  // Deletes segments [from, end): they follow a cut, and the log must stay contiguous.
  auto drop_from = [&](size_t from, const char* why) {
    for (size_t j = from; j < log_bases.size(); ++j) {
      const auto stem = segment::file_stem(log_bases[j]);
      spdlog::warn("{}: deleting segment {}: {}", log_name, stem, why);
      out.dropped_segments.push_back(stem);
      for (const char* ext : {".log", ".index", ".timeindex"}) remove_leftover(dir / (stem + ext));
    }
  };

  for (size_t i = 0; i < log_bases.size(); ++i) {
    const offset base = log_bases[i];
    const bool last = i + 1 == log_bases.size();
    if (!out.segments.empty() && base < out.segments.back()->next_offset()) {
      drop_from(i, "it overlaps the previous segment");
      break;
    }
    // A segment may hold offsets >= the recovery point unless the next one starts at or below it.
    const bool trusted = !last && log_bases[i + 1] <= recovery_point;
    auto seg = segment::open(dir, base, trusted ? segment_open_mode::open_trusted
                                                : segment_open_mode::open_recover,
                             options);
    if (!seg) return seg.err();
    const auto& rec = (*seg)->recovery();
    if (rec.truncated_bytes > 0)
      spdlog::warn("{}: segment {}.log truncated {} bytes at offset {}: {}", log_name,
                   segment::file_stem(base), rec.truncated_bytes, rec.truncated_at.value(),
                   rec.reason);
    if (rec.index_rebuilt)
      spdlog::info("{}: rebuilt indexes of segment {}", log_name, segment::file_stem(base));
    const bool cut = rec.truncated_bytes > 0;
    out.segments.push_back(std::move(*seg));
    if (cut) {
      drop_from(i + 1, "it follows a truncated segment");
      break;
    }
  }

  if (out.segments.empty()) {
    auto seg = segment::open(dir, start, segment_open_mode::create, options);
    if (!seg) return seg.err();
    out.segments.push_back(std::move(*seg));
  }
  return out;
}

} // namespace capstan

