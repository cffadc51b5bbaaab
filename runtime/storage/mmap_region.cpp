#include "runtime/storage/mmap_region.hpp"

#include <cerrno>

#include <sys/mman.h>

namespace capstan {

result<std::shared_ptr<const mmap_region>> mmap_region::map(const file_handle& file, size_t size) {
  if (size == 0) return std::shared_ptr<const mmap_region>(new mmap_region(nullptr, 0));
  void* addr = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, file.fd(), 0);
  if (addr == MAP_FAILED) return storage_error("mmap", file.path(), errno);
  return std::shared_ptr<const mmap_region>(
      new mmap_region(static_cast<const uint8_t*>(addr), size));
}

mmap_region::~mmap_region() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

} // namespace capstan
