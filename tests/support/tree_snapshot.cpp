#include "tests/support/tree_snapshot.hpp"

#include <fstream>
#include <functional>
#include <iterator>
#include <string_view>

namespace capstan::test {

tree_snapshot snapshot_tree(const std::filesystem::path& root) {
  namespace fs = std::filesystem;
  tree_snapshot out;
  std::error_code ec;
  if (!fs::exists(root, ec)) return out;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const auto rel = fs::relative(it->path(), root).string();
    const auto st = it->symlink_status();
    if (fs::is_symlink(st)) {
      out[rel] = "symlink";
    } else if (fs::is_directory(st)) {
      out[rel] = "dir";
    } else {
      std::ifstream in(it->path(), std::ios::binary);
      std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      out[rel] = "file " + std::to_string(content.size()) + " " +
                 std::to_string(std::hash<std::string_view>{}(content));
    }
  }
  return out;
}

} // namespace capstan::test
