#pragma once

// The description of a Kafka message's fields by version, from which message_codec encodes and
// decodes every version of it (docs/kafka.md, "The wire codec"). Descriptions are constexpr
// tables of `field`s built with the helpers below, one file per API (*_schema.cpp); the codec
// holds no code for any particular API.

#include <cstdint>
#include <limits>
#include <span>
#include <string_view>

namespace capstan::kafka {

using api_version = int16_t;

// Versions from..to inclusive; empty when from > to. `v(3)` is "3+", `v(1, 5)` is "1-5".
struct version_range {
  api_version from = 0;
  api_version to = -1;

  constexpr bool contains(api_version version) const { return version >= from && version <= to; }
  constexpr bool empty() const { return from > to; }
};

constexpr version_range v(api_version from,
                          api_version to = std::numeric_limits<api_version>::max()) {
  return version_range{from, to};
}
inline constexpr version_range no_versions{};

enum class field_type : uint8_t {
  boolean,
  int8,
  int16,
  int32,
  int64,
  uint16,
  uint32,
  float64,
  uuid,
  string,
  bytes,
  records, // record batches, read and written as bytes
  structure,
};

std::string_view to_string(field_type type);

// One field of a message or of a struct inside it. A field with `array` set is an array of
// `type` (of structs of `fields` for field_type::structure).
struct field {
  std::string_view name;
  field_type type = field_type::int32;
  bool array = false;
  version_range versions;
  version_range nullable = no_versions;
  // Tagged fields (KIP-482) live in the tagged-fields section of their struct in
  // `tagged_versions`, which must lie in the message's flexible versions; tag < 0: untagged.
  int32_t tag = -1;
  version_range tagged_versions = no_versions;
  // Defaults: integers (and bool as 0/1) take `default_int`, float64 `default_float`, strings
  // `default_string` unless `default_null`; bytes and arrays are empty, or null when
  // `default_null`.
  int64_t default_int = 0;
  double default_float = 0;
  std::string_view default_string;
  bool default_null = false;
  std::span<const field> fields;

  constexpr field(std::string_view n, field_type t, version_range vs)
      : name(n), type(t), versions(vs) {}

  constexpr field nullable_in(version_range vs) const {
    field f = *this;
    f.nullable = vs;
    return f;
  }
  constexpr field tagged(int32_t t, version_range vs) const {
    field f = *this;
    f.tag = t;
    f.tagged_versions = vs;
    return f;
  }
  constexpr field defaults_to(int64_t value) const {
    field f = *this;
    f.default_int = value;
    return f;
  }
  constexpr field defaults_to(std::string_view value) const {
    field f = *this;
    f.default_string = value;
    return f;
  }
  constexpr field defaults_to_null() const {
    field f = *this;
    f.default_null = true;
    return f;
  }

  constexpr bool present_in(api_version version) const { return versions.contains(version); }
  constexpr bool nullable_at(api_version version) const { return nullable.contains(version); }
  constexpr bool tagged_at(api_version version) const {
    return tag >= 0 && tagged_versions.contains(version);
  }
};

// Builders that read like Kafka's field list: `f::int32("NodeId", v(0))`,
// `f::array("Brokers", v(0), broker_fields)`, `f::array_of(field_type::int32, "IsrNodes", v(0))`.
namespace f {
#define CAPSTAN_KAFKA_FIELD(type)                                                              \
  constexpr field type(std::string_view n, version_range vs) {                                 \
    return field(n, field_type::type, vs);                                                     \
  }
CAPSTAN_KAFKA_FIELD(boolean)
CAPSTAN_KAFKA_FIELD(int8)
CAPSTAN_KAFKA_FIELD(int16)
CAPSTAN_KAFKA_FIELD(int32)
CAPSTAN_KAFKA_FIELD(int64)
CAPSTAN_KAFKA_FIELD(uint16)
CAPSTAN_KAFKA_FIELD(uint32)
CAPSTAN_KAFKA_FIELD(float64)
CAPSTAN_KAFKA_FIELD(uuid)
CAPSTAN_KAFKA_FIELD(string)
CAPSTAN_KAFKA_FIELD(bytes)
CAPSTAN_KAFKA_FIELD(records)
#undef CAPSTAN_KAFKA_FIELD
constexpr field structure(std::string_view n, version_range vs, std::span<const field> fs) {
  field out(n, field_type::structure, vs);
  out.fields = fs;
  return out;
}
constexpr field array(std::string_view n, version_range vs, std::span<const field> fs) {
  field out = structure(n, vs, fs);
  out.array = true;
  return out;
}
constexpr field array_of(field_type t, std::string_view n, version_range vs) {
  field out(n, t, vs);
  out.array = true;
  return out;
}
} // namespace f

// One API: its key, the versions described, which of them are flexible (compact types and
// tagged-field sections, KIP-482), and the fields of its request and of its response.
struct api_schema {
  int16_t key = -1;
  std::string_view name;
  version_range valid = no_versions;
  version_range flexible = no_versions;
  std::span<const field> request;
  std::span<const field> response;
};

} // namespace capstan::kafka
