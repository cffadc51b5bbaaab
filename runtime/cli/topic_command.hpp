#pragma once

// `capstan topic create | list | describe | alter-config | add-partitions | delete`, as
// kafka-topics.sh, and `topic reassign` (reassign_command.hpp).

#include <CLI/App.hpp>

namespace capstan::cli {

void add_topic_command(CLI::App& app);

} // namespace capstan::cli
