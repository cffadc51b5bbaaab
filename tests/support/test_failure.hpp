#pragma once

// How the process-level support (child processes, `capstan node` processes, clusters of them,
// workloads) fails: it throws test_failure rather than using Catch2's assertions, so that it also
// serves executables that are not Catch2 tests (tests/safety). A Catch2 test that meets one fails
// with the exception's message.

#include <stdexcept>
#include <string>

namespace capstan::test {

class test_failure : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// Throws test_failure(`what`) unless `ok`.
void require(bool ok, const std::string& what);

// The last `max` characters of `text` (a node's log can be long; its end says why it failed).
std::string tail_of(const std::string& text, size_t max = 4000);

} // namespace capstan::test
