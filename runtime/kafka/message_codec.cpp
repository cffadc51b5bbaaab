#include "runtime/kafka/message_codec.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace capstan::kafka {
namespace {

error bad_value(const field& f, std::string_view why) {
  return make_error(errc::invalid_request,
                    "field " + std::string(f.name) + ": " + std::string(why));
}

// Writes n as a T if it fits one.
template <class T>
bool write_if_fits(int64_t n, void (wire_writer::*write)(T), wire_writer& w) {
  if (n < int64_t{std::numeric_limits<T>::min()} || n > int64_t{std::numeric_limits<T>::max()})
    return false;
  (w.*write)(static_cast<T>(n));
  return true;
}

status encode_int(const field& f, int64_t n, wire_writer& w) {
  bool fits = true;
  switch (f.type) {
    case field_type::int8: fits = write_if_fits(n, &wire_writer::write_int8, w); break;
    case field_type::int16: fits = write_if_fits(n, &wire_writer::write_int16, w); break;
    case field_type::int32: fits = write_if_fits(n, &wire_writer::write_int32, w); break;
    case field_type::uint16: fits = write_if_fits(n, &wire_writer::write_uint16, w); break;
    case field_type::uint32: fits = write_if_fits(n, &wire_writer::write_uint32, w); break;
    default: w.write_int64(n); break;
  }
  if (fits) return {};
  return bad_value(f, std::to_string(n) + " is out of range for " +
                          std::string(to_string(f.type)));
}

// Strings, bytes and records: a length prefix and the bytes, or null.
template <class Text>
status encode_sized(const field& f, const value& x, bool nullable, bool flexible,
                    wire_writer& w) {
  const bool is_string = f.type == field_type::string;
  if (x.is_null()) {
    if (!nullable) return bad_value(f, "is null but not nullable in this version");
    if (is_string) w.write_string_length(flexible, std::nullopt);
    else w.write_bytes_length(flexible, std::nullopt);
    return {};
  }
  const auto* data = std::get_if<Text>(&x.v);
  if (!data) return bad_value(f, "holds the wrong kind of value");
  const size_t limit = is_string && !flexible ? size_t{std::numeric_limits<int16_t>::max()}
                                              : size_t{std::numeric_limits<int32_t>::max() - 1};
  if (data->size() > limit) return bad_value(f, "is too long for its length prefix");
  if (is_string) w.write_string_length(flexible, data->size());
  else w.write_bytes_length(flexible, data->size());
  w.write_raw(bytes_view(reinterpret_cast<const uint8_t*>(data->data()), data->size()));
  return {};
}

// One value of f's type (one element of an array field).
status encode_one(const field& f, const value& x, api_version version, bool flexible,
                  bool nullable, wire_writer& w) {
  switch (f.type) {
    case field_type::boolean:
      if (const auto* b = std::get_if<bool>(&x.v)) {
        w.write_bool(*b);
        return {};
      }
      break;
    case field_type::float64:
      if (const auto* d = std::get_if<double>(&x.v)) {
        w.write_float64(*d);
        return {};
      }
      break;
    case field_type::uuid:
      if (const auto* u = std::get_if<uuid_bytes>(&x.v)) {
        w.write_raw(*u);
        return {};
      }
      break;
    case field_type::string: return encode_sized<std::string>(f, x, nullable, flexible, w);
    case field_type::bytes:
    case field_type::records: return encode_sized<bytes>(f, x, nullable, flexible, w);
    case field_type::structure:
      if (const auto* s = std::get_if<struct_value>(&x.v))
        return encode_struct(f.fields, *s, version, flexible, w);
      break;
    default:
      if (const auto* i = std::get_if<int64_t>(&x.v)) return encode_int(f, *i, w);
      break;
  }
  return bad_value(f, "holds the wrong kind of value for " + std::string(to_string(f.type)));
}

status encode_field(const field& f, const value& x, api_version version, bool flexible,
                    wire_writer& w) {
  if (!f.array) return encode_one(f, x, version, flexible, f.nullable_at(version), w);
  if (x.is_null()) {
    if (!f.nullable_at(version)) return bad_value(f, "is null but not nullable in this version");
    w.write_bytes_length(flexible, std::nullopt);
    return {};
  }
  const auto* elements = std::get_if<value::array_type>(&x.v);
  if (!elements) return bad_value(f, "holds no array");
  if (elements->size() > size_t{std::numeric_limits<int32_t>::max() - 1})
    return bad_value(f, "has too many elements");
  w.write_bytes_length(flexible, elements->size());
  for (const auto& e : *elements)
    if (auto s = encode_one(f, e, version, flexible, false, w); !s) return s;
  return {};
}

status encode_tagged_section(std::span<const field> fields, const struct_value& x,
                             api_version version, wire_writer& w) {
  std::vector<unknown_tag> tagged;
  for (size_t i = 0; i < fields.size(); ++i) {
    const field& f = fields[i];
    if (!f.present_in(version) || !f.tagged_at(version) || is_default(f, x.values()[i]))
      continue;
    unknown_tag t{static_cast<uint32_t>(f.tag), {}};
    wire_writer tw(t.data);
    if (auto s = encode_field(f, x.values()[i], version, true, tw); !s) return s;
    tagged.push_back(std::move(t));
  }
  tagged.insert(tagged.end(), x.unknown_tags().begin(), x.unknown_tags().end());
  std::stable_sort(tagged.begin(), tagged.end(),
                   [](const unknown_tag& a, const unknown_tag& b) { return a.tag < b.tag; });
  for (size_t i = 1; i < tagged.size(); ++i)
    if (tagged[i].tag == tagged[i - 1].tag)
      return make_error(errc::invalid_request,
                        "tag " + std::to_string(tagged[i].tag) + " is written twice");
  w.write_unsigned_varint(static_cast<uint32_t>(tagged.size()));
  for (const auto& t : tagged) {
    w.write_unsigned_varint(t.tag);
    w.write_unsigned_varint(static_cast<uint32_t>(t.data.size()));
    w.write_raw(t.data);
  }
  return {};
}

template <class Text>
value decode_sized(const field& f, std::optional<size_t> length, bool nullable,
                   wire_reader& r) {
  if (!r.ok()) return {};
  if (!length) {
    if (!nullable)
      r.fail(errc::corrupt_message,
             "non-nullable field " + std::string(f.name) + " was serialized as null");
    return null_value{};
  }
  const bytes_view data = r.read_raw(*length, f.name);
  return Text(data.begin(), data.end());
}

value decode_one(const field& f, api_version version, bool flexible, bool nullable,
                 wire_reader& r) {
  switch (f.type) {
    case field_type::boolean: return r.read_bool();
    case field_type::int8: return int64_t{r.read_int8()};
    case field_type::int16: return int64_t{r.read_int16()};
    case field_type::int32: return int64_t{r.read_int32()};
    case field_type::int64: return r.read_int64();
    case field_type::uint16: return int64_t{r.read_uint16()};
    case field_type::uint32: return int64_t{r.read_uint32()};
    case field_type::float64: return r.read_float64();
    case field_type::uuid: {
      uuid_bytes u{};
      const bytes_view data = r.read_raw(u.size(), f.name);
      std::copy(data.begin(), data.end(), u.begin());
      return u;
    }
    case field_type::string:
      return decode_sized<std::string>(f, r.read_string_length(flexible, f.name), nullable, r);
    case field_type::bytes:
    case field_type::records:
      return decode_sized<bytes>(f, r.read_bytes_length(flexible, f.name), nullable, r);
    case field_type::structure: return decode_struct(f.fields, version, flexible, r);
  }
  return {};
}

value decode_field(const field& f, api_version version, bool flexible, wire_reader& r) {
  if (!f.array) return decode_one(f, version, flexible, f.nullable_at(version), r);
  // read_array_length refuses a count above the bytes left, so the reserve below is bounded
  // by the input; growth past it happens only as elements are actually read.
  const auto count = r.read_array_length(flexible, f.name);
  if (!r.ok()) return {};
  if (!count) {
    if (!f.nullable_at(version))
      r.fail(errc::corrupt_message,
             "non-nullable field " + std::string(f.name) + " was serialized as null");
    return null_value{};
  }
  value::array_type out;
  out.reserve(std::min<size_t>(*count, 1024));
  for (size_t i = 0; i < *count && r.ok(); ++i)
    out.push_back(decode_one(f, version, flexible, false, r));
  return out;
}

void decode_tagged_section(std::span<const field> fields, api_version version, struct_value& x,
                           wire_reader& r) {
  const uint32_t count = r.read_unsigned_varint();
  if (count > r.remaining()) {
    r.fail(errc::corrupt_message, std::to_string(count) + " tagged fields in " +
                                      std::to_string(r.remaining()) + " bytes");
    return;
  }
  int64_t last_tag = -1;
  for (uint32_t k = 0; k < count && r.ok(); ++k) {
    const uint32_t tag = r.read_unsigned_varint();
    const uint32_t size = r.read_unsigned_varint();
    const bytes_view data = r.read_raw(size, "tagged field");
    if (!r.ok()) return;
    if (int64_t{tag} <= last_tag) {
      r.fail(errc::corrupt_message, "tag " + std::to_string(tag) + " follows tag " +
                                        std::to_string(last_tag) + ": tags must ascend");
      return;
    }
    last_tag = tag;
    auto known = std::find_if(fields.begin(), fields.end(), [&](const field& f) {
      return f.present_in(version) && f.tagged_at(version) && f.tag == int64_t{tag};
    });
    if (known == fields.end()) {
      x.unknown_tags().push_back(unknown_tag{tag, bytes(data.begin(), data.end())});
      continue;
    }
    wire_reader sub(data);
    auto decoded = decode_field(*known, version, true, sub);
    if (!sub.ok()) {
      r.fail(sub.err().code, "tagged field " + std::string(known->name) + ": " +
                                 sub.err().message);
    } else if (sub.remaining() != 0) {
      r.fail(errc::corrupt_message, "tagged field " + std::string(known->name) + " has " +
                                        std::to_string(sub.remaining()) + " bytes left over");
    }
    x.values()[static_cast<size_t>(known - fields.begin())] = std::move(decoded);
  }
}

} // namespace

std::span<const field> fields_of(const api_schema& api, message_kind kind) {
  return kind == message_kind::request ? api.request : api.response;
}

status check_version(const api_schema& api, api_version version) {
  if (api.valid.contains(version)) return {};
  return make_error(errc::unsupported_version,
                    std::string(api.name) + " v" + std::to_string(version) + " is not one of " +
                        std::to_string(api.valid.from) + ".." + std::to_string(api.valid.to));
}

status encode_struct(std::span<const field> fields, const struct_value& x, api_version version,
                     bool flexible, wire_writer& w) {
  if (x.values().size() != fields.size())
    return make_error(errc::invalid_request,
                      "a struct of " + std::to_string(x.values().size()) + " values for " +
                          std::to_string(fields.size()) + " fields");
  for (size_t i = 0; i < fields.size(); ++i) {
    const field& f = fields[i];
    if (!f.present_in(version) || (flexible && f.tagged_at(version))) continue;
    if (auto s = encode_field(f, x.values()[i], version, flexible, w); !s) return s;
  }
  return flexible ? encode_tagged_section(fields, x, version, w) : status{};
}

struct_value decode_struct(std::span<const field> fields, api_version version, bool flexible,
                           wire_reader& r) {
  struct_value out(fields);
  for (size_t i = 0; i < fields.size() && r.ok(); ++i) {
    const field& f = fields[i];
    if (!f.present_in(version) || (flexible && f.tagged_at(version))) continue;
    out.values()[i] = decode_field(f, version, flexible, r);
  }
  if (flexible && r.ok()) decode_tagged_section(fields, version, out, r);
  return out;
}

status encode_message(const api_schema& api, message_kind kind, api_version version,
                      const struct_value& x, bytes& out) {
  if (auto s = check_version(api, version); !s) return s;
  wire_writer w(out);
  return encode_struct(fields_of(api, kind), x, version, api.flexible.contains(version), w);
}

result<struct_value> decode_message(const api_schema& api, message_kind kind,
                                    api_version version, bytes_view in) {
  if (auto s = check_version(api, version); !s) return s.err();
  wire_reader r(in);
  auto out = decode_struct(fields_of(api, kind), version, api.flexible.contains(version), r);
  if (r.ok() && r.remaining() != 0)
    r.fail(errc::corrupt_message, std::to_string(r.remaining()) + " bytes left over after " +
                                      std::string(api.name) + " v" + std::to_string(version));
  if (!r.ok()) return r.err();
  return out;
}

struct_value make_message(const api_schema& api, message_kind kind) {
  return struct_value(fields_of(api, kind));
}

} // namespace capstan::kafka
