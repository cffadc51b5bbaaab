#pragma once

// The APIs and versions the Kafka listener answers (docs/kafka.md, "The listener"), and the
// ApiVersions response that offers them. An API is listed only once the listener handles it:
// a client picks its versions from this list alone.

#include <cstdint>
#include <optional>
#include <span>

#include "runtime/kafka/message_value.hpp"
#include "runtime/errc.hpp"

namespace capstan {

struct offered_api {
  int16_t key = -1;
  int16_t min_version = 0;
  int16_t max_version = 0;

  bool offers(int16_t version) const { return version >= min_version && version <= max_version; }
};

// By ascending key.
std::span<const offered_api> offered_apis();

// The API with that key, if offered.
std::optional<offered_api> find_offered_api(int16_t key);

// The body of an ApiVersions response listing every offered API, with `error`: none, or
// UNSUPPORTED_VERSION when it answers a version the listener does not know (sent in v0 form,
// KIP-511).
kafka::struct_value api_versions_response(errc error);

} // namespace capstan
