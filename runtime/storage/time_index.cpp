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
  auto exists = file_exists(path);
  if (!exists) return exists.err();
  return time_index(path, *exists);
}

status time_index::load() {
  auto content = file_.read_all();
  if (!content) {
    file_.reset();
    return content.err();
  }
  auto decoded = decode(*content);
  if (!decoded) {
    file_.reset();
    return decoded.err();
  }
  file_.loaded(std::move(*decoded));
  return {};
}

status time_index::maybe_append(const time_index_entry& entry) {
  const time_index_entry floor_entry = empty() ? time_index_entry{no_timestamp, 0} : last();
  if (entry.timestamp <= floor_entry.timestamp) return {};
  if (!empty() && entry.relative_offset <= floor_entry.relative_offset) return {};
  return file_.append(entry);
}

void time_index::reset() { file_.reset(); }

status time_index::truncate(size_t count) { return file_.truncate(count); }

std::optional<time_index_entry> time_index::floor(timestamp_ms timestamp) const {
  const auto& e = entries();
  auto it = std::upper_bound(e.begin(), e.end(), timestamp,
                             [](timestamp_ms t, const time_index_entry& x) { return t < x.timestamp; });
  if (it == e.begin()) return std::nullopt;
  return *std::prev(it);
}

size_t time_index::count_below_offset(uint32_t relative_offset) const {
  const auto& e = entries();
  auto it = std::lower_bound(e.begin(), e.end(), relative_offset, [](const time_index_entry& x, uint32_t r) {
    return x.relative_offset < r;
  });
  return static_cast<size_t>(it - e.begin());
}

status time_index::write_pending() { return file_.write_pending(); }

status time_index::sync() { return file_.sync(); }

status time_index::remove() { return file_.remove(); }

} // namespace capstan
