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
inline constexpr int16_t find_coordinator = 10;
inline constexpr int16_t api_versions = 18;
} // namespace api_key

extern const api_schema produce_api;
extern const api_schema fetch_api;
extern const api_schema list_offsets_api;
extern const api_schema metadata_api;
extern const api_schema find_coordinator_api;
extern const api_schema api_versions_api;

// Every described API, by ascending key.
std::span<const api_schema* const> described_apis();

// The API with that key, or nullptr when none is described.
const api_schema* find_api(int16_t key);

} // namespace capstan::kafka
