#include "tests/fuzz/fuzz_support.hpp"

#include <cstdio>
#include <cstdlib>

#include <fcntl.h>
#include <unistd.h>

#include "runtime/batch/crc32c.hpp"
#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/record_batch_view.hpp"

// Sanitizer defaults for every target, so a binary run by hand behaves as in ctest: every
// UndefinedBehaviorSanitizer finding stops the run (libFuzzer then saves the input).
extern "C" const char* __ubsan_default_options() {
  return "halt_on_error=1:print_stacktrace=1";
}

namespace capstan::fuzz {

namespace bf = batch_format;

void fail(const char* what, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: %s\n", file, line, what);
  std::abort();
}

void fix_batch_crcs(std::span<uint8_t> sequence) {
  for (size_t pos = 0; pos < sequence.size();) {
    auto size = record_batch_view::frame_size(bytes_view(sequence).subspan(pos));
    if (!size || *size > sequence.size() - pos) return;
    auto batch = sequence.subspan(pos, *size);
    bf::store_be<uint32_t>(batch.data() + bf::crc_at,
                           crc32c(bytes_view(batch).subspan(bf::attributes_at)));
    pos = bf::align_up(pos + *size);
  }
}

int lowest_free_fd() {
  const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open /dev/null", __FILE__, __LINE__);
  ::close(fd);
  return fd;
}

} // namespace capstan::fuzz
