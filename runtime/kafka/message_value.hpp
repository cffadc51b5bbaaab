#pragma once

// A decoded Kafka message: a tree of field values that follows the message's description
// (message_schema.hpp). A struct_value holds one value per described field, in description
// order, whatever the version (fields absent in a version hold their defaults), plus the tagged
// fields it did not know, kept to be written back as Kafka's generated code does. Fields are
// addressed by name; the listener's handlers read a message once, so a name lookup over a
// handful of fields costs less than the copy into a per-API struct it replaces
// (docs/kafka.md, "The wire codec").

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "runtime/kafka/message_schema.hpp"
#include "runtime/types.hpp"

namespace capstan::kafka {

struct value;

// A tagged field the description does not name: its tag and raw bytes.
struct unknown_tag {
  uint32_t tag = 0;
  bytes data;
  bool operator==(const unknown_tag&) const = default;
};

class struct_value {
public:
  struct_value() = default;
  // Every field at its default.
  explicit struct_value(std::span<const field> fields);

  std::span<const field> fields() const { return fields_; }
  std::vector<value>& values() { return values_; }
  const std::vector<value>& values() const { return values_; }
  std::vector<unknown_tag>& unknown_tags() { return unknown_; }
  const std::vector<unknown_tag>& unknown_tags() const { return unknown_; }

  // The value of the field named `name`. REQUIRES: the description has such a field (an
  // assert prints the name otherwise).
  value& operator[](std::string_view name);
  const value& operator[](std::string_view name) const;

  // Values and unknown tags equal; the descriptions are not compared.
  bool operator==(const struct_value& other) const;

private:
  size_t index_of(std::string_view name) const;

  std::span<const field> fields_;
  std::vector<value> values_;
  std::vector<unknown_tag> unknown_;
};

using uuid_bytes = std::array<uint8_t, 16>;
struct null_value {
  bool operator==(const null_value&) const = default;
};

// Integers of every width are held as int64_t, bool as bool; string, bytes and records own
// their bytes.
struct value {
  using array_type = std::vector<value>;
  std::variant<null_value, bool, int64_t, double, uuid_bytes, std::string, bytes, array_type,
               struct_value>
      v;

  value() = default;
  value(null_value n) : v(n) {}
  value(bool b) : v(b) {}
  value(int64_t i) : v(i) {}
  value(int i) : v(int64_t{i}) {}
  value(double d) : v(d) {}
  value(uuid_bytes u) : v(u) {}
  value(std::string s) : v(std::move(s)) {}
  value(const char* s) : v(std::string(s)) {}
  value(bytes b) : v(std::move(b)) {}
  value(array_type a) : v(std::move(a)) {}
  value(struct_value s) : v(std::move(s)) {}

  bool is_null() const { return std::holds_alternative<null_value>(v); }
  // REQUIRES (each): the value holds that alternative.
  int64_t as_int() const { return std::get<int64_t>(v); }
  bool as_bool() const { return std::get<bool>(v); }
  const std::string& as_string() const { return std::get<std::string>(v); }
  const bytes& as_bytes() const { return std::get<bytes>(v); }
  array_type& as_array() { return std::get<array_type>(v); }
  const array_type& as_array() const { return std::get<array_type>(v); }
  struct_value& as_struct() { return std::get<struct_value>(v); }
  const struct_value& as_struct() const { return std::get<struct_value>(v); }

  bool operator==(const value&) const = default;
};

// The value a field takes in a version where it is absent, or when a tagged field is not sent.
value default_value(const field& f);

// Whether `x` equals f's default (a tagged field is written only when it does not).
bool is_default(const field& f, const value& x);

} // namespace capstan::kafka
