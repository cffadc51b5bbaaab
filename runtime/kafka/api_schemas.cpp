#include "runtime/kafka/api_schemas.hpp"

#include <array>

namespace capstan::kafka {
namespace {

const std::array<const api_schema*, 21> all = {
    &produce_api,          &fetch_api,
    &list_offsets_api,     &metadata_api,
    &offset_commit_api,    &offset_fetch_api,
    &find_coordinator_api, &join_group_api,
    &heartbeat_api,        &leave_group_api,
    &sync_group_api,       &describe_groups_api,
    &list_groups_api,      &api_versions_api,
    &create_topics_api,    &delete_topics_api,
    &init_producer_id_api, &offset_for_leader_epoch_api,
    &describe_configs_api, &create_partitions_api,
    &delete_groups_api,
};

} // namespace

std::span<const api_schema* const> described_apis() { return all; }

const api_schema* find_api(int16_t key) {
  for (const api_schema* api : all)
    if (api->key == key) return api;
  return nullptr;
}

} // namespace capstan::kafka
