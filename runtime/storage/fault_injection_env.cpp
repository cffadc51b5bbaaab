#include "runtime/storage/fault_injection_env.hpp"

#include <algorithm>

#include <fcntl.h>

namespace capstan {

fault_injection_env::fault_injection_env(storage_env& base) : base_(base) {}

fault_injection_env::~fault_injection_env() {
  std::unique_lock lock(mutex_);
  rules_.clear();
  ++release_generation_;
  changed_.notify_all();
  changed_.wait(lock, [this] { return inside_ == 0; });
}

void fault_injection_env::fail(std::string path_part, storage_op op, int err) {
  std::lock_guard lock(mutex_);
  rules_.push_back(rule{std::move(path_part), op, err});
}

void fault_injection_env::stall(std::string path_part, storage_op op) {
  std::lock_guard lock(mutex_);
  rules_.push_back(rule{std::move(path_part), op, 0});
}

void fault_injection_env::flip(std::string path_part, uint64_t position, uint8_t mask) {
  std::lock_guard lock(mutex_);
  flips_.push_back(flip_rule{std::move(path_part), position, mask});
}

void fault_injection_env::fill_disk(std::string path_part, int err) {
  std::lock_guard lock(mutex_);
  for (auto op : {storage_op::write, storage_op::sync, storage_op::mkdir})
    rules_.push_back(rule{path_part, op, err});
  rules_.push_back(rule{std::move(path_part), storage_op::open, err, O_CREAT});
}

void fault_injection_env::release() {
  std::lock_guard lock(mutex_);
  std::erase_if(rules_, [](const rule& r) { return r.err == 0; });
  ++release_generation_;
  changed_.notify_all();
}

void fault_injection_env::clear() {
  std::lock_guard lock(mutex_);
  rules_.clear();
  flips_.clear();
  ++release_generation_;
  changed_.notify_all();
}

void fault_injection_env::clear(const std::string& path_part) {
  std::lock_guard lock(mutex_);
  const bool stalls = std::any_of(rules_.begin(), rules_.end(), [&](const rule& r) {
    return r.err == 0 && r.path_part == path_part;
  });
  std::erase_if(rules_, [&](const rule& r) { return r.path_part == path_part; });
  std::erase_if(flips_, [&](const flip_rule& f) { return f.path_part == path_part; });
  if (!stalls) return;
  ++release_generation_;
  changed_.notify_all();
}

bool fault_injection_env::wait_stalled(size_t n, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  return changed_.wait_for(lock, timeout, [&] { return stalled_ >= n; });
}

size_t fault_injection_env::stalled() const {
  std::lock_guard lock(mutex_);
  return stalled_;
}

size_t fault_injection_env::injected() const {
  std::lock_guard lock(mutex_);
  return injected_;
}

int fault_injection_env::check(const std::filesystem::path& path, storage_op op, int open_flags) {
  const auto& name = path.native();
  std::unique_lock lock(mutex_);
  auto match = [&](const rule& r) {
    return r.op == op && (open_flags & r.open_flags) == r.open_flags &&
           name.find(r.path_part) != std::string::npos;
  };
  auto failing = std::find_if(rules_.begin(), rules_.end(),
                              [&](const rule& r) { return r.err != 0 && match(r); });
  if (failing != rules_.end()) {
    ++injected_;
    return failing->err;
  }
  if (std::none_of(rules_.begin(), rules_.end(), match)) return 0;
  ++injected_;
  ++stalled_;
  changed_.notify_all();
  const auto generation = release_generation_;
  changed_.wait_for(lock, stall_limit, [&] { return release_generation_ != generation; });
  --stalled_;
  return 0;
}

void fault_injection_env::flip_read(const std::filesystem::path& path, uint8_t* data, size_t size,
                                    uint64_t position) {
  const auto& name = path.native();
  std::lock_guard lock(mutex_);
  for (const auto& f : flips_) {
    if (f.position < position || f.position - position >= size ||
        name.find(f.path_part) == std::string::npos)
      continue;
    data[f.position - position] ^= f.mask;
    ++injected_;
  }
}

namespace {

// Counts a call as inside the env from before its check to after its base call, so the
// destructor can wait for it.
class inside_guard {
public:
  inside_guard(std::mutex& m, std::condition_variable& cv, size_t& inside)
      : m_(m), cv_(cv), inside_(inside) {
    std::lock_guard lock(m_);
    ++inside_;
  }
  ~inside_guard() {
    std::lock_guard lock(m_);
    --inside_;
    cv_.notify_all();
  }
  inside_guard(const inside_guard&) = delete;
  inside_guard& operator=(const inside_guard&) = delete;

private:
  std::mutex& m_;
  std::condition_variable& cv_;
  size_t& inside_;
};

} // namespace

int fault_injection_env::open(const std::filesystem::path& path, int flags, mode_t mode, int& fd) {
  inside_guard g(mutex_, changed_, inside_);
  if (int err = check(path, storage_op::open, flags)) return err;
  return base_.open(path, flags, mode, fd);
}

int fault_injection_env::pread(const std::filesystem::path& path, int fd, void* out, size_t size,
                               off_t position, size_t& read) {
  inside_guard g(mutex_, changed_, inside_);
  if (int err = check(path, storage_op::read)) return err;
  if (int err = base_.pread(path, fd, out, size, position, read)) return err;
  flip_read(path, static_cast<uint8_t*>(out), read, static_cast<uint64_t>(position));
  return 0;
}

int fault_injection_env::map(const std::filesystem::path& path, int fd, size_t size,
                             const void*& addr) {
  inside_guard g(mutex_, changed_, inside_);
  if (int err = check(path, storage_op::map)) return err;
  return base_.map(path, fd, size, addr);
}

int fault_injection_env::pwritev(const std::filesystem::path& path, int fd, const iovec* iov,
                                 int count, off_t position, size_t& written) {
  inside_guard g(mutex_, changed_, inside_);
  if (int err = check(path, storage_op::write)) return err;
  return base_.pwritev(path, fd, iov, count, position, written);
}

int fault_injection_env::sync(const std::filesystem::path& path, int fd) {
  inside_guard g(mutex_, changed_, inside_);
  if (int err = check(path, storage_op::sync)) return err;
  return base_.sync(path, fd);
}

int fault_injection_env::sync_file_system(const std::filesystem::path& path, int fd) {
  inside_guard g(mutex_, changed_, inside_);
  if (int err = check(path, storage_op::sync)) return err;
  return base_.sync_file_system(path, fd);
}

int fault_injection_env::truncate(const std::filesystem::path& path, int fd, off_t size) {
  inside_guard g(mutex_, changed_, inside_);
  if (int err = check(path, storage_op::truncate)) return err;
  return base_.truncate(path, fd, size);
}

int fault_injection_env::rename(const std::filesystem::path& from, const std::filesystem::path& to) {
  inside_guard g(mutex_, changed_, inside_);
  if (int err = check(from, storage_op::rename)) return err;
  return base_.rename(from, to);
}

int fault_injection_env::remove(const std::filesystem::path& path) {
  inside_guard g(mutex_, changed_, inside_);
  if (int err = check(path, storage_op::remove)) return err;
  return base_.remove(path);
}

int fault_injection_env::make_directory(const std::filesystem::path& path, mode_t mode) {
  inside_guard g(mutex_, changed_, inside_);
  if (int err = check(path, storage_op::mkdir)) return err;
  return base_.make_directory(path, mode);
}

int fault_injection_env::remove_directory(const std::filesystem::path& path) {
  inside_guard g(mutex_, changed_, inside_);
  if (int err = check(path, storage_op::rmdir)) return err;
  return base_.remove_directory(path);
}

} // namespace capstan
