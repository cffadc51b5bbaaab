#pragma once

// A directory under $TMPDIR (or /tmp) unique to one test, removed with everything in it when the
// object goes away.

#include <filesystem>
#include <string_view>

namespace capstan::test {

class temp_dir {
public:
  explicit temp_dir(std::string_view label = "capstan");
  ~temp_dir();
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(std::string_view name) const { return path_ / name; }

private:
  std::filesystem::path path_;
};

} // namespace capstan::test
