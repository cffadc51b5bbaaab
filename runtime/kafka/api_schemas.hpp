#pragma once

// The APIs whose messages are described (one *_schema.cpp each), and the lookup by API key.
// Field names are Kafka's, as its protocol documentation spells them, so a description reads
// side by side with it. Adding an API: write its description in a new file and list it in
// api_schemas.cpp.

#include <cstdint>
#include <span>

#include "runtime/kafka/message_schema.hpp"

namespace capstan::kafka {

namespace api_key {
inline constexpr int16_t produce = 0;
inline constexpr int16_t fetch = 1;
inline constexpr int16_t list_offsets = 2;
inline constexpr int16_t metadata = 3;
inline constexpr int16_t offset_commit = 8;
inline constexpr int16_t offset_fetch = 9;
inline constexpr int16_t find_coordinator = 10;
inline constexpr int16_t join_group = 11;
inline constexpr int16_t heartbeat = 12;
inline constexpr int16_t leave_group = 13;
inline constexpr int16_t sync_group = 14;
inline constexpr int16_t describe_groups = 15;
inline constexpr int16_t list_groups = 16;
inline constexpr int16_t api_versions = 18;
inline constexpr int16_t create_topics = 19;
inline constexpr int16_t delete_topics = 20;
inline constexpr int16_t init_producer_id = 22;
inline constexpr int16_t offset_for_leader_epoch = 23;
inline constexpr int16_t describe_configs = 32;
inline constexpr int16_t create_partitions = 37;
inline constexpr int16_t delete_groups = 42;
} // namespace api_key

extern const api_schema produce_api;
extern const api_schema fetch_api;
extern const api_schema list_offsets_api;
extern const api_schema metadata_api;
extern const api_schema offset_commit_api;
extern const api_schema offset_fetch_api;
extern const api_schema find_coordinator_api;
extern const api_schema join_group_api;
extern const api_schema heartbeat_api;
extern const api_schema leave_group_api;
extern const api_schema sync_group_api;
extern const api_schema describe_groups_api;
extern const api_schema list_groups_api;
extern const api_schema api_versions_api;
extern const api_schema create_topics_api;
extern const api_schema delete_topics_api;
extern const api_schema init_producer_id_api;
extern const api_schema offset_for_leader_epoch_api;
extern const api_schema describe_configs_api;
extern const api_schema create_partitions_api;
extern const api_schema delete_groups_api;

// Every described API, by ascending key.
std::span<const api_schema* const> described_apis();

// The API with that key, or nullptr when none is described.
const api_schema* find_api(int16_t key);

} // namespace capstan::kafka
