#include "actors/controller/metadata/metadata_types.hpp"

namespace capstan::controller {

std::string to_string(const std::vector<node_id>& nodes) {
  std::string out = "[";
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (i != 0) out += ',';
    out += std::to_string(nodes[i].value());
  }
  out += ']';
  return out;
}

} // namespace capstan::controller
