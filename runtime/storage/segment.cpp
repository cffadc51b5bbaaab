#include "runtime/storage/segment.hpp"

#include <algorithm>
#include <array>
#include <limits>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/record_batch_view.hpp"
#include "runtime/storage/file_handle.hpp"
#include "runtime/storage/mmap_region.hpp"
#include "runtime/storage/offset_index.hpp"
#include "runtime/storage/time_index.hpp"

namespace capstan {

namespace bf = batch_format;

namespace {

constexpr uint64_t max_relative = std::numeric_limits<uint32_t>::max();
// Bytes a pread of batch headers fetches at once from a segment that is not mapped.
constexpr size_t header_window_bytes = 8192;
// Bytes a sealed truncation copies at once from a segment that is not mapped.
constexpr uint64_t copy_chunk_bytes = 1 << 20;

error corrupt(std::string message) {
  return make_error(errc::corrupt_message, std::move(message));
}

// The header fields a scan needs, read without checking the CRC.
struct batch_header {
  offset base{0};
  offset last{0};
  timestamp_ms max_timestamp = no_timestamp;
  size_t size = 0; // the whole frame, batch_length + 12
};

// `header` starts at a batch (at least header_size bytes of it when the log has them); `room`
// is how many log bytes there are from the batch start to the end of the log.
result<batch_header> read_header(bytes_view header, uint64_t room) {
  auto size = record_batch_view::frame_size(header);
  if (!size) return size.err();
  if (*size > room)
    return corrupt(
        fmt::format("batch of {} bytes runs past the end of the log ({} bytes left)", *size, room));
  const uint8_t* d = header.data();
  if (const auto magic = static_cast<int8_t>(d[bf::magic_at]); magic != bf::magic_v2)
    return corrupt(fmt::format("magic byte is {}, expected {}", magic, bf::magic_v2));
  const auto delta = bf::load_be<int32_t>(d + bf::last_offset_delta_at);
  if (delta < 0) return corrupt(fmt::format("last offset delta {} is negative", delta));
  const offset base{bf::load_be<int64_t>(d + bf::base_offset_at)};
  if (base.value() < 0 || base.value() > std::numeric_limits<int64_t>::max() - delta)
    return corrupt(fmt::format("base offset {} is out of range", base.value()));
  return batch_header{base, base + delta, bf::load_be<int64_t>(d + bf::max_timestamp_at), *size};
}

batch_header header_of(const record_batch_view& v) {
  return {v.base_offset(), v.last_offset(), v.max_timestamp(), v.size_bytes()};
}

bool all_zero(bytes_view b) {
  return std::all_of(b.begin(), b.end(), [](uint8_t x) { return x == 0; });
}

// Log bytes for scans: straight from a mapping, or through a pread window (the active segment,
// and a sealed one the storage env would not map).
class log_reader {
public:
  explicit log_reader(bytes_view mapped) : mapped_(mapped), size_(mapped.size()) {}
  log_reader(const file_handle& file, uint64_t size) : file_(&file), size_(size) {}

  uint64_t size() const { return size_; }

  // Bytes [pos, pos + n), clipped at the end of the log; valid until the next call.
  result<bytes_view> bytes_at(uint64_t pos, size_t n) {
    if (pos >= size_) return bytes_view{};
    n = static_cast<size_t>(std::min<uint64_t>(n, size_ - pos));
    if (file_ == nullptr) return mapped_.subspan(pos, n);
    if (pos < window_pos_ || pos + n > window_pos_ + window_.size()) {
      window_.resize(
          static_cast<size_t>(std::min<uint64_t>(std::max(n, header_window_bytes), size_ - pos)));
      window_pos_ = pos;
      if (auto s = file_->pread_all(window_, pos); !s) {
        window_.clear();
        return s.err();
      }
    }
    return bytes_view(window_).subspan(pos - window_pos_, n);
  }

  result<batch_header> header_at(uint64_t pos) {
    auto b = bytes_at(pos, bf::header_size);
    if (!b) return b.err();
    return read_header(*b, size_ - pos);
  }

private:
  bytes_view mapped_;
  const file_handle* file_ = nullptr;
  uint64_t size_;
  bytes window_;
  uint64_t window_pos_ = 0;
};

// Whole batches of `region` (which starts at a batch of `first_size` bytes ending at offset
// `first_last`) that fit in max_bytes, at least the first. Returns the end of the last one and
// its last offset. A batch cut off by the end of `region` ends the collection.
std::pair<size_t, offset> collect(bytes_view region, size_t first_size, offset first_last,
                                  size_t max_bytes) {
  size_t end = first_size;
  offset last = first_last;
  for (size_t p = bf::align_up(end); p < region.size(); p = bf::align_up(end)) {
    auto h = read_header(region.subspan(p), region.size() - p);
    if (!h || p + h->size > max_bytes) break;
    end = p + h->size;
    last = h->last;
  }
  return {end, last};
}

} // namespace

struct segment::impl {
  impl(std::filesystem::path dir, std::string stem, segment_options options, offset base,
       file_handle log, offset_index index, time_index tindex)
      : dir(std::move(dir)), stem(std::move(stem)), options(options), base(base),
        log(std::move(log)), index(std::move(index)), tindex(std::move(tindex)) {}

  std::filesystem::path dir;
  std::string stem;
  segment_options options;
  offset base;
  file_handle log;
  offset_index index;
  time_index tindex;
  // The read-only mapping of a sealed segment (exactly size_ bytes); null while active, and
  // when the storage env will not map the file (the sealed segment is then read like the active
  // one, with pread).
  std::shared_ptr<const mmap_region> map;
  // The directory entry of a created segment is not durable until the first flush; nor is that
  // of a segment recovery opens (past the recovery point: the process that created it may have
  // crashed before its first flush).
  bool dir_dirty = false;

  // Index cadence state (docs/storage.md, "When index entries are written"). The rule depends
  // only on batch positions and timestamps, so replaying it over a log yields the same entries:
  // that is what lets open repair a lagging index from its last entries.
  uint64_t last_index_position = 0;
  timestamp_ms max_so_far = no_timestamp;
  offset offset_of_max{0};

  std::filesystem::path path(std::string_view ext) const { return dir / (stem + std::string(ext)); }
  std::string log_name() const { return (dir / (stem + ".log")).string(); }
  uint32_t relative(offset o) const {
    return static_cast<uint32_t>(std::clamp<int64_t>(o - base, 0, int64_t{max_relative}));
  }

  void reset_cadence() {
    last_index_position = 0;
    max_so_far = no_timestamp;
    offset_of_max = base;
  }

  // REQUIRES: position and h.base - base fit in uint32 (checked by the callers).
  status index_batch(uint64_t position, const batch_header& h) {
    if (h.max_timestamp > max_so_far) {
      max_so_far = h.max_timestamp;
      offset_of_max = h.base;
    }
    if (position - last_index_position < options.index_interval_bytes) return {};
    last_index_position = position;
    if (index.empty() || position > index.last().position)
      if (auto s = index.append({relative(h.base), static_cast<uint32_t>(position)}); !s) return s;
    return tindex.maybe_append({max_so_far, relative(offset_of_max)});
  }

  log_reader reader(uint64_t size) const {
    if (map) return log_reader(map->bytes().first(size));
    return log_reader(log, size);
  }
};

segment::segment(offset base, std::unique_ptr<impl> impl)
    : base_(base), next_(base), impl_(std::move(impl)) {}

segment::~segment() {
  if (!impl_ || !impl_->log.is_open()) return;
  // A clean shutdown leaves complete index files; failures only cost a repair on the next open.
  for (status s : {impl_->index.write_pending(), impl_->tindex.write_pending()})
    if (!s)
      spdlog::warn("segment {}: index write on close failed: {}", impl_->log_name(),
                   s.err().to_string());
}

std::string segment::file_stem(offset base) {
  return fmt::format("{:020d}", base.value());
}

result<std::unique_ptr<segment>> segment::open(const std::filesystem::path& dir, offset base,
                                               segment_open_mode mode,
                                               const segment_options& options) {
  if (base.value() < 0)
    return make_error(errc::invalid_config,
                      fmt::format("segment base offset {} is negative", base.value()));
  const std::string stem = file_stem(base);
  const bool create = mode == segment_open_mode::create;
  if (!create) {
    // Left by a sealed truncation that crashed before its rename: the .log is still the old one.
    if (auto s = remove_file(dir / (stem + ".log.truncating")); !s) return s.err();
  }
  auto log = file_handle::open(dir / (stem + ".log"),
                               create ? file_mode::create_new : file_mode::open_existing);
  if (!log) return log.err();
  auto index = offset_index::open(dir / (stem + ".index"));
  if (!index) return index.err();
  auto tindex = time_index::open(dir / (stem + ".timeindex"));
  if (!tindex) return tindex.err();

  auto state = std::make_unique<impl>(dir, stem, options, base, std::move(*log), std::move(*index),
                                      std::move(*tindex));
  state->dir_dirty = create || mode == segment_open_mode::open_recover;
  state->reset_cadence();
  std::unique_ptr<segment> seg(new segment(base, std::move(state)));
  status s;
  switch (mode) {
  case segment_open_mode::create:
    seg->impl_->index.reset();
    seg->impl_->tindex.reset();
    if (s = seg->impl_->index.write_pending(); s) s = seg->impl_->tindex.write_pending();
    break;
  case segment_open_mode::open_trusted:
    s = seg->load_trusted();
    break;
  case segment_open_mode::open_recover:
    s = seg->recover();
    break;
  }
  if (!s) return s.err();
  return seg;
}

status segment::load_trusted() {
  auto& m = *impl_;
  auto file_size = m.log.size();
  if (!file_size) return file_size.err();
  size_ = *file_size;
  recovery_ = {};
  status checked = m.index.load(size_);
  if (checked) checked = m.tindex.load();
  const size_t entries_on_disk = m.index.entries().size() + m.tindex.entries().size();
  if (checked) checked = replay_tail();
  if (checked) {
    const auto span = static_cast<uint64_t>(next_ - base_);
    if ((!m.index.empty() && m.index.last().relative_offset >= span) ||
        (!m.tindex.empty() && m.tindex.last().relative_offset >= span))
      checked = corrupt("an index entry points past the last offset of the log");
  }
  if (!checked) {
    if (checked.code() != errc::corrupt_message) return checked;
    spdlog::warn("segment {}: rebuilding indexes: {}", m.log_name(), checked.err().message);
    if (auto s = rebuild_indexes(); !s) {
      if (s.code() != errc::corrupt_message) return s;
      return corrupt(fmt::format("segment {}: trusted data is not a well-framed batch sequence "
                                 "({}); open it with open_recover",
                                 m.log_name(), s.err().message));
    }
    recovery_.index_rebuilt = true;
  } else if (m.index.entries().size() + m.tindex.entries().size() != entries_on_disk) {
    // The files lagged the log (buffered entries lost in a crash): the replay added them.
    recovery_.index_rebuilt = true;
  }
  recovery_.valid_bytes = static_cast<size_t>(size_);
  if (auto s = m.index.write_pending(); !s) return s;
  return m.tindex.write_pending();
}

status segment::replay_tail() {
  auto& m = *impl_;
  m.reset_cadence();
  uint64_t start = 0;
  std::optional<offset> base_at_start;
  if (!m.index.empty()) {
    start = m.index.last().position;
    base_at_start = base_ + m.index.last().relative_offset;
  }
  if (!m.tindex.empty()) {
    // Entries before the last time entry's batch cannot raise the max timestamp above it, so
    // scanning from that batch (or the last offset entry, whichever is earlier) finds the max.
    const auto& t = m.tindex.last();
    m.max_so_far = t.timestamp;
    m.offset_of_max = base_ + t.relative_offset;
    if (!base_at_start || m.offset_of_max < *base_at_start) {
      auto f = m.index.floor(t.relative_offset);
      start = f ? f->position : 0;
      base_at_start = f ? std::optional<offset>(base_ + f->relative_offset) : std::nullopt;
    }
  }
  m.last_index_position = start;
  return scan_headers(start, base_at_start);
}

status segment::rebuild_indexes() {
  auto& m = *impl_;
  m.index.reset();
  m.tindex.reset();
  m.reset_cadence();
  return scan_headers(0, std::nullopt);
}

status segment::scan_headers(uint64_t start, std::optional<offset> base_at_start) {
  auto& m = *impl_;
  log_reader r = m.reader(size_);
  offset min_base = base_at_start.value_or(base_);
  offset next = base_;
  // Offset index entries at or after `start`, as they were before the scan: each must name a
  // batch the scan finds, with its base offset. (A scan that the time index starts early passes
  // over entries nothing else checks; entries the scan appends come after these.)
  size_t entry = m.index.count_below_position(start);
  const size_t entries_before = m.index.entries().size();
  for (uint64_t pos = start; pos < size_;) {
    auto h = r.header_at(pos);
    if (!h) {
      if (h.code() != errc::corrupt_message) return h.err();
      return corrupt(fmt::format("batch at position {}: {}", pos, h.err().message));
    }
    if (pos == start && base_at_start && h->base != *base_at_start)
      return corrupt(fmt::format("index entry for offset {} at position {} finds a batch with base "
                                 "offset {}",
                                 base_at_start->value(), pos, h->base.value()));
    if (h->base < min_base)
      return corrupt(fmt::format("batch at position {} has base offset {}, expected at least {}",
                                 pos, h->base.value(), min_base.value()));
    if (pos > max_relative || static_cast<uint64_t>(h->last - base_) > max_relative)
      return corrupt(fmt::format("batch at position {} (offsets {}-{}) is beyond the 32-bit index "
                                 "range of the segment",
                                 pos, h->base.value(), h->last.value()));
    if (entry < entries_before) {
      const offset_index_entry e = m.index.entries()[entry];
      if (e.position < pos || (e.position == pos && base_ + e.relative_offset != h->base))
        return corrupt(fmt::format("offset index entry {} -> {} does not match the batch at "
                                   "position {} (base offset {})",
                                   e.relative_offset, e.position, pos, h->base.value()));
      if (e.position == pos) ++entry;
    }
    if (auto s = m.index_batch(pos, *h); !s) return s;
    next = h->last + 1;
    min_base = next;
    const uint64_t end = pos + h->size;
    const uint64_t padded = bf::align_up(end);
    if (end == size_) break;
    if (padded >= size_)
      return corrupt(fmt::format("{} bytes after the batch that ends at position {} hold no batch",
                                 size_ - end, end));
    auto padding = r.bytes_at(end, static_cast<size_t>(padded - end));
    if (!padding) return padding.err();
    if (!all_zero(*padding))
      return corrupt(fmt::format("non-zero padding after the batch that ends at position {}", end));
    pos = padded;
  }
  if (entry < entries_before)
    return corrupt(fmt::format("offset index entry {} -> {} points inside the last batch",
                               m.index.entries()[entry].relative_offset,
                               m.index.entries()[entry].position));
  next_ = next;
  max_timestamp_ = m.max_so_far;
  return {};
}

status segment::recover() {
  auto& m = *impl_;
  auto file_size = m.log.size();
  if (!file_size) return file_size.err();
  size_ = *file_size;
  recovery_ = {};
  recovery_.index_rebuilt = true;
  m.index.reset();
  m.tindex.reset();
  m.reset_cadence();

  uint64_t valid_end = 0;
  offset next = base_;
  std::string reason;
  {
    auto mapped = mmap_region::map(m.log, static_cast<size_t>(size_));
    if (!mapped) return mapped.err();
    const bytes_view all = (*mapped)->bytes();
    batch_sequence_reader batches(all, m.options.max_batch_bytes, batch_validation::stored);
    for (;;) {
      auto b = batches.next();
      if (!b) {
        reason = b.err().to_string();
        break;
      }
      if (!*b) {
        if (valid_end < all.size())
          reason = fmt::format("{} bytes of padding after the last batch", all.size() - valid_end);
        break;
      }
      const record_batch_view& v = **b;
      const uint64_t pos = static_cast<uint64_t>(v.data().data() - all.data());
      // The CRC does not cover the base offset: bound it before computing the last offset.
      if (v.base_offset().value() > std::numeric_limits<int64_t>::max() - v.last_offset_delta()) {
        reason = fmt::format("batch at position {} has base offset {}, out of range", pos,
                             v.base_offset().value());
        break;
      }
      if (v.base_offset() < next) {
        reason = fmt::format("batch at position {} has base offset {}, expected at least {}", pos,
                             v.base_offset().value(), next.value());
        break;
      }
      if (pos > max_relative || static_cast<uint64_t>(v.last_offset() - base_) > max_relative) {
        reason = fmt::format("batch at position {} (offsets {}-{}) is beyond the 32-bit index "
                             "range of the segment",
                             pos, v.base_offset().value(), v.last_offset().value());
        break;
      }
      if (auto s = m.index_batch(pos, header_of(v)); !s) return s;
      valid_end = pos + v.size_bytes();
      next = v.last_offset() + 1;
    }
  }
  if (valid_end < size_) {
    if (auto s = m.log.truncate(valid_end); !s) return s;
    recovery_.truncated_bytes = static_cast<size_t>(size_ - valid_end);
    recovery_.truncated_at = next;
    recovery_.reason = reason;
    spdlog::warn("segment {}: truncated {} bytes at offset {}: {}", m.log_name(),
                 recovery_.truncated_bytes, next.value(), reason);
  }
  size_ = valid_end;
  next_ = next;
  max_timestamp_ = m.max_so_far;
  recovery_.valid_bytes = static_cast<size_t>(size_);
  if (auto s = m.index.write_pending(); !s) return s;
  return m.tindex.write_pending();
}

bool segment::can_hold(offset last_offset, size_t batch_bytes) const {
  const uint64_t position = bf::align_up(size_);
  return position <= max_relative && batch_bytes <= max_relative && last_offset >= base_ &&
         static_cast<uint64_t>(last_offset - base_) <= max_relative;
}

status segment::append(bytes_view batch) {
  auto& m = *impl_;
  if (sealed_)
    return make_error(errc::kafka_storage_error,
                      fmt::format("segment {} is sealed: append refused", m.log_name()));
  auto h = read_header(batch, batch.size());
  if (!h)
    return make_error(errc::invalid_record,
                      fmt::format("append to {}: {}", m.log_name(), h.err().message));
  if (h->size != batch.size())
    return make_error(errc::invalid_record,
                      fmt::format("append to {}: {} bytes given, the batch frames {}", m.log_name(),
                                  batch.size(), h->size));
  if (batch.size() > m.options.max_batch_bytes)
    return make_error(errc::message_too_large,
                      fmt::format("append to {}: batch of {} bytes exceeds {}", m.log_name(),
                                  batch.size(), m.options.max_batch_bytes));
  if (h->base < next_)
    return make_error(errc::invalid_record,
                      fmt::format("append to {}: base offset {} is below the next offset {}",
                                  m.log_name(), h->base.value(), next_.value()));
  if (!can_hold(h->last, batch.size()))
    return make_error(errc::kafka_storage_error,
                      fmt::format("append to {}: offsets {}-{} at position {} do not fit the "
                                  "segment's 32-bit index",
                                  m.log_name(), h->base.value(), h->last.value(), size_));
  static constexpr std::array<uint8_t, bf::alignment> zeros{};
  const uint64_t position = bf::align_up(size_);
  const bytes_view parts[] = {bytes_view(zeros).first(static_cast<size_t>(position - size_)),
                              batch};
  if (auto s = m.log.pwritev_all(parts, size_); !s) return s;
  size_ = position + batch.size();
  next_ = h->last + 1;
  max_timestamp_ = std::max(max_timestamp_, h->max_timestamp);
  return m.index_batch(position, *h);
}

result<log_slice> segment::read(offset from, size_t max_bytes) const {
  const auto& m = *impl_;
  if (from >= next_) return log_slice{nullptr, nullptr, 0, from, from};
  auto entry = m.index.floor(m.relative(from));
  uint64_t pos = entry ? entry->position : 0;
  log_reader r = m.reader(size_);
  batch_header first;
  for (;;) {
    auto h = r.header_at(pos);
    if (!h)
      return make_error(
          h.code(), fmt::format("read {} at position {}: {}", m.log_name(), pos, h.err().message));
    if (h->last >= from) {
      first = *h;
      break;
    }
    pos = bf::align_up(pos + h->size);
    if (pos >= size_)
      return make_error(errc::corrupt_message,
                        fmt::format("read {}: no batch holds offset {} below next offset {}",
                                    m.log_name(), from.value(), next_.value()));
  }
  if (m.map) {
    const bytes_view region = m.map->bytes().first(size_).subspan(pos);
    auto [end, last] = collect(region, first.size, first.last, max_bytes);
    return log_slice{m.map, region.data(), end, first.base, last + 1};
  }
  const auto len =
      static_cast<size_t>(std::min<uint64_t>(size_ - pos, std::max(max_bytes, first.size)));
  const size_t words = (len + sizeof(uint64_t) - 1) / sizeof(uint64_t);
  // 8-byte aligned. The last word is zeroed: a reader may round the slice up to whole words.
  std::shared_ptr<uint64_t[]> buffer(new uint64_t[words]);
  buffer[words - 1] = 0;
  auto* data = reinterpret_cast<uint8_t*>(buffer.get());
  if (auto s = m.log.pread_all({data, len}, pos); !s) return s.err();
  auto [end, last] = collect({data, len}, first.size, first.last, max_bytes);
  return log_slice{std::move(buffer), data, end, first.base, last + 1};
}

result<std::optional<offset>> segment::offset_for_timestamp(timestamp_ms target) const {
  const auto& m = *impl_;
  if (size_ == 0 || max_timestamp_ < target) return std::optional<offset>();
  auto t = m.tindex.floor(target);
  const offset start = t ? base_ + t->relative_offset : base_;
  auto entry = m.index.floor(m.relative(start));
  log_reader r = m.reader(size_);
  // A read that fails is the disk's failure and goes to the caller; bytes that do not validate
  // end this lookup only.
  auto fail = [&](uint64_t pos, const error& e) -> result<std::optional<offset>> {
    if (e.code == errc::kafka_storage_error) return e;
    spdlog::warn("segment {}: timestamp lookup stopped at position {}: {}", m.log_name(), pos,
                 e.to_string());
    return std::optional<offset>();
  };
  for (uint64_t pos = entry ? entry->position : 0; pos < size_;) {
    auto h = r.header_at(pos);
    if (!h) return fail(pos, h.err());
    if (h->max_timestamp >= target) {
      auto bytes = r.bytes_at(pos, h->size);
      if (!bytes) return fail(pos, bytes.err());
      auto v = record_batch_view::parse(*bytes, std::max(m.options.max_batch_bytes, h->size));
      if (!v) return fail(pos, v.err());
      std::optional<offset> found;
      v->for_each_record([&](const record_view& rec) {
        if (!found && v->timestamp_of(rec) >= target) found = v->base_offset() + rec.offset_delta;
      });
      if (found) return found;
    }
    pos = bf::align_up(pos + h->size);
  }
  return std::optional<offset>();
}

status segment::truncate_to(offset to) {
  auto& m = *impl_;
  if (to >= next_) return {};
  uint64_t cut = 0;
  offset kept_next = base_;
  if (to > base_) {
    // Index entries below `to` may point at the batch that holds `to`, which is dropped; the one
    // before the last of them points at a kept batch, a safe place to start the scan.
    const auto& entries = m.index.entries();
    const auto below =
        static_cast<size_t>(std::partition_point(entries.begin(), entries.end(),
                                                 [&](const offset_index_entry& e) {
                                                   return base_ + e.relative_offset < to;
                                                 }) -
                            entries.begin());
    uint64_t pos = below >= 2 ? entries[below - 2].position : 0;
    log_reader r = m.reader(size_);
    // Unless the log contradicts its index: a trusted open scans only the tail, so damage below
    // the recovery point can leave a batch there that holds `to`. Scan from the start then, so
    // the cut is always at the end of a kept batch (or 0) and kept_next is that batch's.
    if (pos != 0) {
      auto h = r.header_at(pos);
      if (!h || h->last >= to) pos = 0;
    }
    cut = pos;
    while (pos < size_) {
      auto h = r.header_at(pos);
      if (!h)
        return make_error(h.code(), fmt::format("truncate {} at position {}: {}", m.log_name(), pos,
                                                h.err().message));
      if (h->last >= to) break;
      cut = pos + h->size;
      kept_next = h->last + 1;
      pos = bf::align_up(cut);
    }
  }
  if (cut == size_) return {};
  // Once the log is cut, the bookkeeping below runs to the end whatever fails, so the object
  // keeps describing the file; the first error is returned.
  status first_error;
  auto keep_first = [&](status s) {
    if (first_error && !s) first_error = std::move(s);
  };
  if (sealed_) {
    if (auto s = rewrite_prefix(cut); !s) return s;
    keep_first(sync_directory(m.dir));
  } else if (auto s = m.log.truncate(cut); !s) {
    return s;
  }
  const uint64_t dropped = size_ - cut;
  size_ = cut;
  keep_first(m.index.truncate(m.index.count_below_position(cut)));
  keep_first(m.tindex.truncate(m.tindex.count_below_offset(m.relative(kept_next))));
  if (auto s = replay_tail(); !s) {
    next_ = kept_next;
    keep_first(std::move(s));
  } else if (next_ != kept_next) {
    keep_first(corrupt(fmt::format("truncate {}: rescan found next offset {}, expected {}",
                                   m.log_name(), next_.value(), kept_next.value())));
  }
  spdlog::info("segment {}: truncated {} bytes at offset {}: truncate_to({})", m.log_name(),
               dropped, kept_next.value(), to.value());
  return first_error;
}

status segment::rewrite_prefix(uint64_t size) {
  auto& m = *impl_;
  const auto tmp = m.path(".log.truncating");
  auto file = file_handle::open(tmp, file_mode::create_or_truncate);
  if (!file) return file.err();
  status s = copy_prefix(*file, size);
  if (s) s = file->sync();
  if (s) s = rename_file(tmp, m.path(".log"));
  if (!s) {
    (void)remove_file(tmp);
    return s;
  }
  m.log = std::move(*file);
  m.map.reset();
  sealed_ = false;
  return {};
}

status segment::copy_prefix(file_handle& to, uint64_t size) const {
  const auto& m = *impl_;
  if (m.map) return to.pwrite_all(m.map->bytes().first(static_cast<size_t>(size)), 0);
  bytes chunk(static_cast<size_t>(std::min<uint64_t>(size, copy_chunk_bytes)));
  for (uint64_t pos = 0; pos < size; pos += chunk.size()) {
    const auto n = static_cast<size_t>(std::min<uint64_t>(size - pos, chunk.size()));
    const std::span<uint8_t> part(chunk.data(), n);
    if (auto s = m.log.pread_all(part, pos); !s) return s;
    if (auto s = to.pwrite_all(part, pos); !s) return s;
  }
  return {};
}

status segment::sync_file_system() { return impl_->log.sync_file_system(); }

status segment::flush() {
  auto& m = *impl_;
  if (auto s = m.log.sync(); !s) return s;
  if (auto s = m.index.sync(); !s) return s;
  if (auto s = m.tindex.sync(); !s) return s;
  if (m.dir_dirty) {
    if (auto s = sync_directory(m.dir); !s) return s;
    m.dir_dirty = false;
  }
  return {};
}

status segment::seal() {
  auto& m = *impl_;
  if (sealed_) return {};
  if (auto s = m.index.write_pending(); !s) return s;
  if (auto s = m.tindex.write_pending(); !s) return s;
  auto mapped = mmap_region::try_map(m.log, static_cast<size_t>(size_));
  if (!mapped) return mapped.err();
  m.map = std::move(*mapped);
  sealed_ = true;
  return {};
}

status segment::remove() {
  auto& m = *impl_;
  m.map.reset();
  const auto log_path = m.path(".log");
  status s = m.log.close();
  if (auto r = remove_file(log_path); s && !r) s = r;
  if (auto r = m.index.remove(); s && !r) s = r;
  if (auto r = m.tindex.remove(); s && !r) s = r;
  return s;
}

} // namespace capstan
