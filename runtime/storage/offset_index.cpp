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
  auto exists = file_exists(path);
  if (!exists) return exists.err();
  return offset_index(path, *exists);
}

status offset_index::load(uint64_t log_size) {
  auto content = file_.read_all();
  if (!content) {
    file_.reset();
    return content.err();
  }
  auto decoded = decode(*content, log_size);
  if (!decoded) {
    file_.reset();
    return decoded.err();
  }
  file_.loaded(std::move(*decoded));
  return {};
}

status offset_index::append(const offset_index_entry& entry) { return file_.append(entry); }

void offset_index::reset() { file_.reset(); }

status offset_index::truncate(size_t count) { return file_.truncate(count); }

std::optional<offset_index_entry> offset_index::floor(uint32_t relative_offset) const {
  const auto& e = entries();
  auto it = std::upper_bound(
      e.begin(), e.end(), relative_offset,
      [](uint32_t r, const offset_index_entry& x) { return r < x.relative_offset; });
  if (it == e.begin()) return std::nullopt;
  return *std::prev(it);
}

size_t offset_index::count_below_position(uint64_t position) const {
  const auto& e = entries();
  auto it = std::lower_bound(e.begin(), e.end(), position,
                             [](const offset_index_entry& x, uint64_t p) { return x.position < p; });
  return static_cast<size_t>(it - e.begin());
}

status offset_index::write_pending() { return file_.write_pending(); }

status offset_index::sync() { return file_.sync(); }

status offset_index::remove() { return file_.remove(); }

} // namespace capstan
