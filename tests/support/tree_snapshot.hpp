#pragma once

// What a directory tree holds, to prove that something left it exactly as it was: every entry
// below `root` by relative path, with its type and, for regular files, size and a hash of the
// content.

#include <filesystem>
#include <map>
#include <string>

namespace capstan::test {

using tree_snapshot = std::map<std::string, std::string>;

tree_snapshot snapshot_tree(const std::filesystem::path& root);

} // namespace capstan::test
