#include "runtime/actor/caf_error.hpp"

#include <string_view>

#include <caf/exit_reason.hpp>
#include <caf/make_message.hpp>
#include <caf/message.hpp>
#include <caf/sec.hpp>

namespace capstan {

namespace {

constexpr caf::atom_value system_category = caf::atom("system");
constexpr caf::atom_value exit_category = caf::atom("exit");

std::string context_text(const caf::message& context) {
  if (context.size() == 1 && context.match_element<std::string>(0))
    return context.get_as<std::string>(0);
  return context.empty() ? std::string{} : caf::to_string(context);
}

bool lost_or_timed_out(caf::sec code) {
  switch (code) {
    case caf::sec::request_timeout:
    case caf::sec::connection_timeout:
    case caf::sec::request_receiver_down:
    case caf::sec::no_route_to_receiving_node:
    case caf::sec::cannot_connect_to_node:
    case caf::sec::remote_lookup_failed:
    case caf::sec::disconnect_during_handshake:
    case caf::sec::socket_disconnected:
    case caf::sec::cannot_forward_to_invalid_actor:
      return true;
    default:
      return false;
  }
}

} // namespace

caf::error to_caf_error(const error& e) {
  if (e.code == errc::none)
    return caf::error{};
  auto code = static_cast<uint8_t>(e.code);
  if (e.message.empty())
    return caf::error{code, caf_error_category};
  return caf::error{code, caf_error_category, caf::make_message(e.message)};
}

caf::error make_error(errc code) {
  return to_caf_error(error{code, {}});
}

error from_caf_error(const caf::error& e) {
  if (!e)
    return error{};
  if (e.category() == caf_error_category)
    return error{errc_from_code(e.code()), context_text(e.context())};
  if (e.category() == system_category) {
    auto code = static_cast<caf::sec>(e.code());
    auto text = "CAF " + caf::to_string(code);
    if (auto ctx = context_text(e.context()); !ctx.empty())
      text += ": " + ctx;
    return error{lost_or_timed_out(code) ? errc::request_timed_out : generic_caf_errc,
                 std::move(text)};
  }
  if (e.category() == exit_category)
    return error{errc::request_timed_out,
                 "CAF actor exited: " + caf::to_string(static_cast<caf::exit_reason>(e.code()))};
  return error{generic_caf_errc, "CAF error: " + caf::to_string(e)};
}

std::string render_caf_error(uint8_t code, caf::atom_value, const caf::message& context) {
  std::string result{to_string(static_cast<errc>(code))};
  if (auto text = context_text(context); !text.empty()) {
    result += ": ";
    result += text;
  }
  return result;
}

} // namespace capstan
