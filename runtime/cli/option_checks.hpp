#pragma once

// CLI11 checks for capstan's options whose failures read as one clear line naming the allowed
// values ("--partitions: 0 is not an integer in 1..10000"). CLI11 runs a check on the text as
// given, before converting it, so a number too large for the option's type is reported as such
// instead of being clamped.

#include <cstdint>
#include <limits>
#include <string>

#include <CLI/App.hpp>

namespace capstan::cli {

// A decimal integer in [min, max]. Shown in --help as "INT in [min, max]", or "INT >= min" when
// max is the largest int64.
CLI::Validator integer_in(int64_t min, int64_t max = std::numeric_limits<int64_t>::max());

// Any text but the empty string; `allowed` says what is expected instead ("one or more
// characters").
CLI::Validator non_empty(const std::string& allowed);

// A listen address HOST:PORT (optionally NAME://HOST:PORT) with a port in 0..65535.
CLI::Validator listen_address_check();

} // namespace capstan::cli
