#include "runtime/cluster/incarnation_file.hpp"

namespace capstan {

namespace {

constexpr std::string_view id_key = "incarnation_id";

} // namespace

result<std::optional<uuid_bytes>> read_incarnation_file(const std::filesystem::path& dir) {
  return read_uuid_file(dir / incarnation_file_name, id_key);
}

status write_incarnation_file(const std::filesystem::path& dir, const uuid_bytes& incarnation) {
  return write_uuid_file(dir / incarnation_file_name, id_key, incarnation);
}

} // namespace capstan
