#pragma once

// A minimal HTTP exchange with a server on 127.0.0.1, for tests of the metrics endpoint.

#include <cstdint>
#include <string>

namespace capstan::test {

// Sends `request` to 127.0.0.1:port and reads until the server closes (each read bounded by a
// 5 s socket timeout). Returns what was read; a failed connect fails the test.
std::string http_exchange(uint16_t port, const std::string& request);

// The body of `GET /metrics` from 127.0.0.1:port ("" unless the answer is 200).
std::string scrape_metrics(uint16_t port);

} // namespace capstan::test
