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

// Returns exit_ok when every batch is valid, exit_failed when a file is corrupt or unreadable,
// exit_usage when the directory holds no segment file (runtime/cli/exit_codes.hpp).
int run_log_dump(const dump_options& options);

} // namespace capstan::cli
