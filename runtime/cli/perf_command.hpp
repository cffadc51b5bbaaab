#pragma once

// `capstan perf produce | consume`: throughput and latency against a running cluster, as
// kafka-producer-perf-test.sh and kafka-consumer-perf-test.sh.

#include <CLI/App.hpp>

namespace capstan::cli {

void add_perf_command(CLI::App& app);

} // namespace capstan::cli
