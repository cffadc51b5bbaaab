#include "tests/support/kafka_sample.hpp"

#include <string>

namespace capstan::kafka {
namespace {

struct sampler {
  api_version version;
  uint32_t seed;
  uint32_t counter = 0;

  int64_t next_int(const field& f) {
    ++counter;
    const int64_t n = static_cast<int64_t>(seed * 31 + counter) % 100 + 1;
    return n == f.default_int ? n + 1 : n;
  }

  value element(const field& f) {
    switch (f.type) {
      case field_type::boolean: return f.default_int == 0;
      case field_type::float64: return static_cast<double>(next_int(f)) + 0.5;
      case field_type::uuid: {
        uuid_bytes u{};
        u[0] = static_cast<uint8_t>(next_int(f));
        u[15] = static_cast<uint8_t>(seed);
        return u;
      }
      case field_type::string:
        return std::string(f.name) + "-" + std::to_string(next_int(f));
      case field_type::bytes:
      case field_type::records: {
        bytes b(static_cast<size_t>(next_int(f) % 7 + 1), static_cast<uint8_t>(seed));
        return b;
      }
      case field_type::structure: return structure(f.fields);
      default: return next_int(f);
    }
  }

  value fill(const field& f) {
    if (seed % 2 == 1 && f.nullable_at(version)) return null_value{};
    if (!f.array) return element(f);
    value::array_type a;
    a.push_back(element(f));
    a.push_back(element(f));
    return a;
  }

  struct_value structure(std::span<const field> fields) {
    struct_value out(fields);
    for (size_t i = 0; i < fields.size(); ++i)
      if (fields[i].present_in(version)) out.values()[i] = fill(fields[i]);
    return out;
  }
};

} // namespace

struct_value sample_message(const api_schema& api, message_kind kind, api_version version,
                            uint32_t seed) {
  sampler s{version, seed, 0};
  return s.structure(fields_of(api, kind));
}

} // namespace capstan::kafka
