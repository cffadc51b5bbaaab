#include "runtime/kafka/message_value.hpp"

#include <cstdio>
#include <cstdlib>

namespace capstan::kafka {

struct_value::struct_value(std::span<const field> fields) : fields_(fields) {
  values_.reserve(fields.size());
  for (const auto& f : fields) values_.push_back(default_value(f));
}

size_t struct_value::index_of(std::string_view name) const {
  for (size_t i = 0; i < fields_.size(); ++i)
    if (fields_[i].name == name) return i;
  std::fprintf(stderr, "kafka struct_value: no field named '%.*s'\n",
               static_cast<int>(name.size()), name.data());
  std::abort();
}

value& struct_value::operator[](std::string_view name) { return values_[index_of(name)]; }
const value& struct_value::operator[](std::string_view name) const {
  return values_[index_of(name)];
}

bool struct_value::operator==(const struct_value& other) const {
  return values_ == other.values_ && unknown_ == other.unknown_;
}

value default_value(const field& f) {
  if (f.default_null) return null_value{};
  if (f.array) return value::array_type{};
  switch (f.type) {
    case field_type::boolean: return f.default_int != 0;
    case field_type::int8:
    case field_type::int16:
    case field_type::int32:
    case field_type::int64:
    case field_type::uint16:
    case field_type::uint32: return f.default_int;
    case field_type::float64: return f.default_float;
    case field_type::uuid: return uuid_bytes{};
    case field_type::string: return std::string(f.default_string);
    case field_type::bytes:
    case field_type::records: return bytes{};
    case field_type::structure: return struct_value(f.fields);
  }
  return null_value{};
}

bool is_default(const field& f, const value& x) { return x == default_value(f); }

} // namespace capstan::kafka
