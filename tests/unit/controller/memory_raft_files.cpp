#include "tests/unit/controller/memory_raft_files.hpp"

#include <algorithm>

namespace capstan::controller::test {

namespace {

error crashed(const std::string& where) {
  return make_error(errc::kafka_storage_error, where + ": the node crashed (simulated)");
}

class memory_raft_files final : public raft::raft_files {
public:
  memory_raft_files(memory_disk& disk, std::string where) : disk_(disk), where_(std::move(where)) {}

  result<std::optional<bytes>> read(std::string_view name) override {
    if (disk_.crashed()) return crashed(where_);
    auto it = disk_.files.find(name);
    if (it == disk_.files.end()) return std::optional<bytes>{};
    return std::optional<bytes>(it->second);
  }

  status replace(std::string_view name, bytes_view content) override {
    if (disk_.crashed()) return crashed(where_);
    const bool whole = disk_.may_change();
    if (whole || disk_.tear_rng()() % 2 == 0)
      disk_.files[std::string(name)] = bytes(content.begin(), content.end());
    return whole ? status{} : status(crashed(where_));
  }

  status write(std::string_view name, uint64_t position, bytes_view data) override {
    if (disk_.crashed()) return crashed(where_);
    const bool whole = disk_.may_change();
    auto& file = disk_.files[std::string(name)];
    size_t n = data.size();
    if (!whole) n = static_cast<size_t>(disk_.tear_rng()() % (data.size() + 1));
    if (file.size() < position + n) file.resize(position + n);
    std::copy_n(data.begin(), n, file.begin() + static_cast<ptrdiff_t>(position));
    if (!whole && n < data.size() && disk_.tear_rng()() % 2 == 0) {
      // The file grew, but the rest of the data never reached it.
      file.resize(std::max<size_t>(file.size(), position + data.size()));
      for (size_t k = position + n; k < position + data.size(); ++k)
        file[k] = static_cast<uint8_t>(disk_.tear_rng()());
    }
    return whole ? status{} : status(crashed(where_));
  }

  status truncate(std::string_view name, uint64_t size) override {
    if (disk_.crashed()) return crashed(where_);
    const bool whole = disk_.may_change();
    if (whole || disk_.tear_rng()() % 2 == 0) disk_.files[std::string(name)].resize(size);
    return whole ? status{} : status(crashed(where_));
  }

  status remove(std::string_view name) override {
    if (disk_.crashed()) return crashed(where_);
    const bool whole = disk_.may_change();
    if (whole || disk_.tear_rng()() % 2 == 0) {
      auto it = disk_.files.find(name);
      if (it != disk_.files.end()) disk_.files.erase(it);
    }
    return whole ? status{} : status(crashed(where_));
  }

  std::string where() const override { return where_; }

private:
  memory_disk& disk_;
  std::string where_;
};

} // namespace

void memory_disk::arm_crash(uint64_t calls, uint64_t seed) {
  crash_in_ = calls;
  tear_.seed(seed);
}

void memory_disk::reopen() {
  crash_in_.reset();
  crashed_ = false;
}

std::unique_ptr<raft::raft_files> memory_disk::open(std::string where) {
  return std::make_unique<memory_raft_files>(*this, std::move(where));
}

bool memory_disk::may_change() {
  if (!crash_in_) return true;
  if (*crash_in_ > 0) {
    --*crash_in_;
    return true;
  }
  crash_in_.reset();
  crashed_ = true;
  return false;
}

} // namespace capstan::controller::test
