#pragma once

// `capstan perf produce | consume | e2e`: throughput and latency against a running cluster, as
// kafka-producer-perf-test.sh (with --sync: one record in flight), kafka-consumer-perf-test.sh
// and kafka-e2e-latency.sh (produce-to-consume latency at a fixed rate).

#include <CLI/App.hpp>

namespace capstan::cli {

void add_perf_command(CLI::App& app);

} // namespace capstan::cli
