#pragma once

// `capstan topic create | list | describe | delete`, as kafka-topics.sh.

#include <CLI/App.hpp>

namespace capstan::cli {

void add_topic_command(CLI::App& app);

} // namespace capstan::cli
