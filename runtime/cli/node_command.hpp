#pragma once

// `capstan node`: runs a node until SIGINT/SIGTERM.

#include <string>

namespace capstan::cli {

struct node_options {
  std::string data_dir = "./capstan-data";
  int node_id = 1;
  std::string log_level = "info";
};

// Returns the process exit code.
int run_node(const node_options& options);

} // namespace capstan::cli
