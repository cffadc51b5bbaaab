#include "actors/node/controller_quorum.hpp"

#include <charconv>
#include <set>

namespace capstan {

namespace {

error bad_quorum(std::string_view text, const std::string& why) {
  return make_error(errc::invalid_config, "controller quorum '" + std::string(text) + "': " + why);
}

} // namespace

result<std::vector<quorum_voter>> parse_controller_quorum(std::string_view text) {
  if (text.empty()) return bad_quorum(text, "no voters; give ID@HOST:PORT,...");
  std::vector<quorum_voter> voters;
  std::set<int32_t> seen;
  size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    const auto entry = text.substr(start, comma == std::string_view::npos ? std::string_view::npos
                                                                          : comma - start);
    start = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    const std::string shown(entry);
    if (entry.empty()) return bad_quorum(text, "an empty entry; give ID@HOST:PORT,...");
    const auto at = entry.find('@');
    if (at == std::string_view::npos)
      return bad_quorum(text, "'" + shown + "' is not ID@HOST:PORT");
    const auto id_text = entry.substr(0, at);
    int32_t id = 0;
    auto [end, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
    if (id_text.empty() || ec != std::errc{} || end != id_text.data() + id_text.size() || id < 0)
      return bad_quorum(text, "'" + std::string(id_text) + "' in '" + shown +
                                  "' is not a node id (an integer in [0, 2147483647])");
    auto address = parse_listen_address(entry.substr(at + 1), "voter " + std::to_string(id));
    if (!address) return bad_quorum(text, address.err().message);
    if (address->port == 0)
      return bad_quorum(text, "voter " + std::to_string(id) + " needs a port other than 0");
    if (!seen.insert(id).second)
      return bad_quorum(text, "voter " + std::to_string(id) + " is given twice");
    // Only one node listens on an address: messages for the other would reach it instead.
    for (const auto& v : voters)
      if (v.address.host == address->host && v.address.port == address->port)
        return bad_quorum(text, "voters " + std::to_string(v.id) + " and " + std::to_string(id) +
                                    " are both given " + address->host + ":" +
                                    std::to_string(address->port));
    voters.push_back(quorum_voter{id, *address});
  }
  return voters;
}

result<bool> parse_process_roles(std::string_view text) {
  const auto bad = [&](const std::string& why) {
    return make_error(errc::invalid_config, "process.roles '" + std::string(text) + "': " + why);
  };
  bool broker = false;
  bool controller = false;
  size_t start = 0;
  while (start <= text.size()) {
    const auto comma = text.find(',', start);
    auto role = text.substr(start, comma == std::string_view::npos ? std::string_view::npos
                                                                   : comma - start);
    start = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    while (!role.empty() && role.front() == ' ') role.remove_prefix(1);
    while (!role.empty() && role.back() == ' ') role.remove_suffix(1);
    bool* seen = role == "broker" ? &broker : role == "controller" ? &controller : nullptr;
    if (seen == nullptr)
      return bad("'" + std::string(role) + "' is no role; give broker or broker,controller");
    if (*seen) return bad("'" + std::string(role) + "' is given twice");
    *seen = true;
  }
  if (!broker) return bad("every capstan node is a broker; give broker or broker,controller");
  return controller;
}

} // namespace capstan
