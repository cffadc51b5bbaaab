#include "actors/controller/raft/raft_files.hpp"

#include <map>

#include "actors/controller/raft/raft_storage_format.hpp"
#include "runtime/storage/file_handle.hpp"

namespace capstan::raft {

namespace {

namespace fs = std::filesystem;
namespace sf = storage_format;

class disk_raft_files final : public raft_files {
public:
  explicit disk_raft_files(fs::path dir) : dir_(std::move(dir)) {}

  result<std::optional<bytes>> read(std::string_view name) override {
    const fs::path file = dir_ / name;
    std::error_code ec;
    if (!fs::exists(file, ec)) {
      if (ec) return storage_error("stat", file, ec.value());
      return std::optional<bytes>{};
    }
    auto fh = file_handle::open(file, file_mode::open_existing);
    if (!fh) return fh.err();
    auto size = fh->size();
    if (!size) return size.err();
    bytes content(*size);
    if (auto s = fh->pread_all(content, 0); !s) return s.err();
    return std::optional<bytes>(std::move(content));
  }

  status replace(std::string_view name, bytes_view content) override {
    handles_.erase(std::string(name));
    return write_file_atomically(
        dir_ / name,
        std::string_view(reinterpret_cast<const char*>(content.data()), content.size()));
  }

  status write(std::string_view name, uint64_t position, bytes_view data) override {
    auto fh = handle(name);
    if (!fh) return fh.err();
    if (auto s = (*fh)->pwrite_all(data, position); !s) return s;
    return (*fh)->sync();
  }

  status truncate(std::string_view name, uint64_t size) override {
    auto fh = handle(name);
    if (!fh) return fh.err();
    if (auto s = (*fh)->truncate(size); !s) return s;
    return (*fh)->sync();
  }

  status remove(std::string_view name) override {
    handles_.erase(std::string(name));
    if (auto s = remove_file(dir_ / name); !s) return s;
    return sync_directory(dir_);
  }

  std::string where() const override { return dir_.string(); }

private:
  // The log is written and cut in place many times: its descriptor stays open. A file created
  // here is made durable in its directory at once, so what is later written to it is too.
  result<file_handle*> handle(std::string_view name) {
    auto it = handles_.find(std::string(name));
    if (it == handles_.end()) {
      const fs::path file = dir_ / name;
      std::error_code ec;
      const bool existed = fs::exists(file, ec);
      auto fh = file_handle::open(file, file_mode::open_or_create);
      if (!fh) return fh.err();
      if (!existed)
        if (auto s = sync_directory(dir_); !s) return s.err();
      it = handles_.emplace(std::string(name), std::move(*fh)).first;
    }
    return &it->second;
  }

  fs::path dir_;
  std::map<std::string, file_handle, std::less<>> handles_;
};

} // namespace

result<std::unique_ptr<raft_files>> open_raft_directory(const fs::path& dir) {
  if (auto made = make_directories(dir); !made) return made.err();
  for (auto name : {sf::identity_file, sf::hard_state_file, sf::snapshot_file, sf::log_file}) {
    fs::path tmp = dir / name;
    tmp += std::string(sf::temp_suffix);
    if (auto s = remove_file(tmp); !s) return s.err();
  }
  return std::unique_ptr<raft_files>(std::make_unique<disk_raft_files>(dir));
}

} // namespace capstan::raft
