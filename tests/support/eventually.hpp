#pragma once

// The one bounded wait the tests poll with: every wait loop in a test must end.

#include <chrono>
#include <functional>

namespace capstan::test {

// Checks `pred` every 20 ms until it holds (true) or `limit` passes (false, after a last check).
bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds limit);

} // namespace capstan::test
