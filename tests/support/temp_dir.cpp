#include "tests/support/temp_dir.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <system_error>

namespace capstan::test {

temp_dir::temp_dir(std::string_view label) {
  auto base = std::filesystem::temp_directory_path();
  std::string pattern = (base / (std::string(label) + "-XXXXXX")).string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed: " + pattern);
  path_ = pattern;
}

temp_dir::~temp_dir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

} // namespace capstan::test
