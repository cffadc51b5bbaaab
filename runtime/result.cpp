#include "runtime/result.hpp"

namespace capstan {

std::string error::to_string() const {
  std::string out(capstan::to_string(code));
  if (!message.empty()) {
    out += ": ";
    out += message;
  }
  return out;
}

} // namespace capstan
