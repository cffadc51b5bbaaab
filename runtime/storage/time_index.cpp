#include "runtime/storage/time_index.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "runtime/batch/record_batch_format.hpp"

namespace capstan {

namespace bf = batch_format;

result<std::vector<time_index_entry>> time_index::decode(bytes_view bytes) {
  if (bytes.size() % entry_size != 0)
    return make_error(
        errc::corrupt_message,
        fmt::format("time index size {} is not a multiple of {}", bytes.size(), entry_size));
  std::vector<time_index_entry> entries;
  entries.reserve(bytes.size() / entry_size);
  for (size_t at = 0; at < bytes.size(); at += entry_size) {
    time_index_entry e{bf::load_be<int64_t>(bytes.data() + at),
                       bf::load_be<uint32_t>(bytes.data() + at + 8)};
    const size_t i = entries.size();
    if (!entries.empty() && (e.timestamp <= entries.back().timestamp ||
                             e.relative_offset <= entries.back().relative_offset))
      return make_error(errc::corrupt_message,
                        fmt::format("time index entry {} ({} -> {}) does not increase over entry "
                                    "{} ({} -> {})",
                                    i, e.timestamp, e.relative_offset, i - 1,
                                    entries.back().timestamp, entries.back().relative_offset));
    entries.push_back(e);
  }
  return entries;
}

void time_index::encode(const time_index_entry& entry, uint8_t* out) {
  bf::store_be<int64_t>(out, entry.timestamp);
  bf::store_be<uint32_t>(out + 8, entry.relative_offset);
}

result<time_index> time_index::open(const std::filesystem::path& path) {
  auto file = file_handle::open(path, file_mode::open_or_create);
  if (!file) return file.err();
  return time_index(std::move(*file));
}

status time_index::load() {
  entries_.clear();
  written_ = 0;
  auto size = file_.size();
  if (!size) return size.err();
  bytes content(*size);
  if (auto s = file_.pread_all(content, 0); !s) return s;
  auto decoded = decode(content);
  if (!decoded) {
    stale_tail_ = true;
    return decoded.err();
  }
  entries_ = std::move(*decoded);
  written_ = entries_.size();
  stale_tail_ = false;
  return {};
}

void time_index::reset() {
  entries_.clear();
  written_ = 0;
  stale_tail_ = true;
}

status time_index::maybe_append(const time_index_entry& entry) {
  const time_index_entry floor_entry =
      entries_.empty() ? time_index_entry{no_timestamp, 0} : entries_.back();
  if (entry.timestamp <= floor_entry.timestamp) return {};
  if (!entries_.empty() && entry.relative_offset <= floor_entry.relative_offset) return {};
  entries_.push_back(entry);
  if (entries_.size() - written_ >= write_batch) return write_buffered();
  return {};
}

status time_index::truncate(size_t count) {
  if (count >= entries_.size()) return {};
  entries_.resize(count);
  if (written_ > count) {
    written_ = count;
    return file_.truncate(count * entry_size);
  }
  return {};
}

std::optional<time_index_entry> time_index::floor(timestamp_ms timestamp) const {
  auto it =
      std::upper_bound(entries_.begin(), entries_.end(), timestamp,
                       [](timestamp_ms t, const time_index_entry& e) { return t < e.timestamp; });
  if (it == entries_.begin()) return std::nullopt;
  return *std::prev(it);
}

size_t time_index::count_below_offset(uint32_t relative_offset) const {
  auto it =
      std::lower_bound(entries_.begin(), entries_.end(), relative_offset,
                       [](const time_index_entry& e, uint32_t r) { return e.relative_offset < r; });
  return static_cast<size_t>(it - entries_.begin());
}

status time_index::write_buffered() {
  if (written_ == entries_.size()) return {};
  bytes buffer((entries_.size() - written_) * entry_size);
  for (size_t i = written_; i < entries_.size(); ++i)
    encode(entries_[i], buffer.data() + (i - written_) * entry_size);
  if (auto s = file_.pwrite_all(buffer, written_ * entry_size); !s) return s;
  written_ = entries_.size();
  return {};
}

status time_index::write_pending() {
  if (auto s = write_buffered(); !s) return s;
  if (!stale_tail_) return {};
  auto size = file_.size();
  if (!size) return size.err();
  if (*size > written_ * entry_size)
    if (auto s = file_.truncate(written_ * entry_size); !s) return s;
  stale_tail_ = false;
  return {};
}

status time_index::sync() {
  if (auto s = write_pending(); !s) return s;
  return file_.sync();
}

status time_index::remove() {
  auto path = file_.path();
  if (auto s = file_.close(); !s) return s;
  return remove_file(path);
}

} // namespace capstan
