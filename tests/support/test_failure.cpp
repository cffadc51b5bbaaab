#include "tests/support/test_failure.hpp"

namespace capstan::test {

void require(bool ok, const std::string& what) {
  if (!ok) throw test_failure(what);
}

std::string tail_of(const std::string& text, size_t max) {
  return text.size() > max ? "..." + text.substr(text.size() - max) : text;
}

} // namespace capstan::test
