#include "runtime/storage/offset_index.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "runtime/batch/record_batch_format.hpp"

namespace capstan {

namespace bf = batch_format;

result<std::vector<offset_index_entry>> offset_index::decode(bytes_view bytes, uint64_t log_size) {
  if (bytes.size() % entry_size != 0)
    return make_error(
        errc::corrupt_message,
        fmt::format("offset index size {} is not a multiple of {}", bytes.size(), entry_size));
  std::vector<offset_index_entry> entries;
  entries.reserve(bytes.size() / entry_size);
  for (size_t at = 0; at < bytes.size(); at += entry_size) {
    offset_index_entry e{bf::load_be<uint32_t>(bytes.data() + at),
                         bf::load_be<uint32_t>(bytes.data() + at + 4)};
    const size_t i = entries.size();
    if (!entries.empty() && (e.relative_offset <= entries.back().relative_offset ||
                             e.position <= entries.back().position))
      return make_error(errc::corrupt_message,
                        fmt::format("offset index entry {} ({} -> {}) does not increase over "
                                    "entry {} ({} -> {})",
                                    i, e.relative_offset, e.position, i - 1,
                                    entries.back().relative_offset, entries.back().position));
    if (e.position % bf::alignment != 0 || e.position >= log_size)
      return make_error(errc::corrupt_message,
                        fmt::format("offset index entry {} points at position {}: not an aligned "
                                    "position inside the {}-byte log",
                                    i, e.position, log_size));
    entries.push_back(e);
  }
  return entries;
}

void offset_index::encode(const offset_index_entry& entry, uint8_t* out) {
  bf::store_be<uint32_t>(out, entry.relative_offset);
  bf::store_be<uint32_t>(out + 4, entry.position);
}

result<offset_index> offset_index::open(const std::filesystem::path& path) {
  auto file = file_handle::open(path, file_mode::open_or_create);
  if (!file) return file.err();
  return offset_index(std::move(*file));
}

status offset_index::load(uint64_t log_size) {
  entries_.clear();
  written_ = 0;
  auto size = file_.size();
  if (!size) return size.err();
  bytes content(*size);
  if (auto s = file_.pread_all(content, 0); !s) return s;
  auto decoded = decode(content, log_size);
  if (!decoded) {
    stale_tail_ = true;
    return decoded.err();
  }
  entries_ = std::move(*decoded);
  written_ = entries_.size();
  stale_tail_ = false;
  return {};
}

void offset_index::reset() {
  entries_.clear();
  written_ = 0;
  stale_tail_ = true;
}

status offset_index::append(const offset_index_entry& entry) {
  entries_.push_back(entry);
  if (entries_.size() - written_ >= write_batch) return write_buffered();
  return {};
}

status offset_index::truncate(size_t count) {
  if (count >= entries_.size()) return {};
  entries_.resize(count);
  if (written_ > count) {
    written_ = count;
    return file_.truncate(count * entry_size);
  }
  return {};
}

std::optional<offset_index_entry> offset_index::floor(uint32_t relative_offset) const {
  auto it = std::upper_bound(
      entries_.begin(), entries_.end(), relative_offset,
      [](uint32_t r, const offset_index_entry& e) { return r < e.relative_offset; });
  if (it == entries_.begin()) return std::nullopt;
  return *std::prev(it);
}

size_t offset_index::count_below_position(uint64_t position) const {
  auto it =
      std::lower_bound(entries_.begin(), entries_.end(), position,
                       [](const offset_index_entry& e, uint64_t p) { return e.position < p; });
  return static_cast<size_t>(it - entries_.begin());
}

status offset_index::write_buffered() {
  if (written_ == entries_.size()) return {};
  bytes buffer((entries_.size() - written_) * entry_size);
  for (size_t i = written_; i < entries_.size(); ++i)
    encode(entries_[i], buffer.data() + (i - written_) * entry_size);
  if (auto s = file_.pwrite_all(buffer, written_ * entry_size); !s) return s;
  written_ = entries_.size();
  return {};
}

status offset_index::write_pending() {
  if (auto s = write_buffered(); !s) return s;
  if (!stale_tail_) return {};
  auto size = file_.size();
  if (!size) return size.err();
  if (*size > written_ * entry_size)
    if (auto s = file_.truncate(written_ * entry_size); !s) return s;
  stale_tail_ = false;
  return {};
}

status offset_index::sync() {
  if (auto s = write_pending(); !s) return s;
  return file_.sync();
}

status offset_index::remove() {
  auto path = file_.path();
  if (auto s = file_.close(); !s) return s;
  return remove_file(path);
}

} // namespace capstan
