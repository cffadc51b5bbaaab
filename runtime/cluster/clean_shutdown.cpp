#include "runtime/cluster/clean_shutdown.hpp"

#include <system_error>

#include "runtime/storage/file_handle.hpp"

namespace capstan {

result<bool> take_clean_shutdown_marker(const std::filesystem::path& dir) {
  const auto file = dir / clean_shutdown_file_name;
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return false;
  if (auto s = remove_file(file); !s) return s.err();
  if (auto s = sync_directory(dir); !s) return s.err();
  return true;
}

status write_clean_shutdown_marker(const std::filesystem::path& dir) {
  return write_file_atomically(dir / clean_shutdown_file_name, "clean shutdown\n");
}

} // namespace capstan
