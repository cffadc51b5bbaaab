#pragma once

// `capstan produce TOPIC`: one record per stdin line, as kafka-console-producer.sh.

#include <cstdint>
#include <optional>
#include <string>

#include <CLI/App.hpp>

namespace capstan::cli {

void add_produce_command(CLI::App& app);

// "0" -> 0, "1" -> 1, "all" or "-1" -> -1; nullopt otherwise.
std::optional<int16_t> parse_acks(const std::string& text);

} // namespace capstan::cli
