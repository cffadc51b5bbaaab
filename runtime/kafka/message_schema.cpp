#include "runtime/kafka/message_schema.hpp"

namespace capstan::kafka {

std::string_view to_string(field_type type) {
  switch (type) {
    case field_type::boolean: return "bool";
    case field_type::int8: return "int8";
    case field_type::int16: return "int16";
    case field_type::int32: return "int32";
    case field_type::int64: return "int64";
    case field_type::uint16: return "uint16";
    case field_type::uint32: return "uint32";
    case field_type::float64: return "float64";
    case field_type::uuid: return "uuid";
    case field_type::string: return "string";
    case field_type::bytes: return "bytes";
    case field_type::records: return "records";
    case field_type::structure: return "struct";
  }
  return "?";
}

} // namespace capstan::kafka
