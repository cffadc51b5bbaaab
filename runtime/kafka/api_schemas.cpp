#include "runtime/kafka/api_schemas.hpp"

#include <array>

namespace capstan::kafka {
namespace {

const std::array<const api_schema*, 6> all = {
    &produce_api, &fetch_api, &list_offsets_api, &metadata_api, &find_coordinator_api,
    &api_versions_api,
};

} // namespace

std::span<const api_schema* const> described_apis() { return all; }

const api_schema* find_api(int16_t key) {
  for (const api_schema* api : all)
    if (api->key == key) return api;
  return nullptr;
}

} // namespace capstan::kafka
