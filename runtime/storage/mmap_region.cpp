#include "runtime/storage/mmap_region.hpp"

#include <cerrno>

#include <sys/mman.h>

#include "runtime/storage/storage_env.hpp"

namespace capstan {

result<std::shared_ptr<const mmap_region>> mmap_region::try_map(const file_handle& file,
                                                                size_t size) {
  if (size == 0) return std::shared_ptr<const mmap_region>(new mmap_region(nullptr, 0, nullptr));
  const void* addr = nullptr;
  const int err = storage_env::current().map(file.path(), file.fd(), size, addr);
  if (err == ENODEV) return std::shared_ptr<const mmap_region>();
  if (err != 0) return storage_error("mmap", file.path(), err);
  return std::shared_ptr<const mmap_region>(
      new mmap_region(static_cast<const uint8_t*>(addr), size, nullptr));
}

result<std::shared_ptr<const mmap_region>> mmap_region::map(const file_handle& file, size_t size) {
  auto mapped = try_map(file, size);
  if (!mapped || *mapped) return mapped;
  const size_t words = (size + sizeof(uint64_t) - 1) / sizeof(uint64_t);
  std::unique_ptr<uint64_t[]> copy(new uint64_t[words]);
  copy[words - 1] = 0;
  auto* data = reinterpret_cast<uint8_t*>(copy.get());
  if (auto s = file.pread_all({data, size}, 0); !s) return s.err();
  return std::shared_ptr<const mmap_region>(new mmap_region(data, size, std::move(copy)));
}

mmap_region::~mmap_region() {
  if (data_ != nullptr && !copy_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

} // namespace capstan
