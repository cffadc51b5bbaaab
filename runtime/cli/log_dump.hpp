#pragma once

// `capstan log dump`: prints and validates the batches of a partition directory.

#include <cstdint>
#include <string>

namespace capstan::cli {

struct dump_options {
  std::string dir;
  int64_t from = 0;
  int64_t max_batches = 1000000;
  bool print_records = false;
};

// Returns 0 when every batch is valid, 1 when a file is corrupt or unreadable.
int run_log_dump(const dump_options& options);

} // namespace capstan::cli
