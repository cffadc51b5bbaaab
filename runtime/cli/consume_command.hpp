#pragma once

// `capstan consume TOPIC`: record values to stdout, one per line, as kafka-console-consumer.sh.

#include <CLI/App.hpp>

namespace capstan::cli {

void add_consume_command(CLI::App& app);

} // namespace capstan::cli
