// Every actor system gets capstan's message types, error renderer and scheduler defaults.

#include <typeindex>

#include <caf/actor_system.hpp>
#include <caf/settings.hpp>
#include <catch2/catch.hpp>

#include "runtime/actor/actor_system_setup.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/messages/capnp_frame.hpp"

namespace capstan {
namespace {

struct module_message {
  int value = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, module_message& x) {
  return f(caf::meta::type_name("module_message"), x.value);
}

void add_module_types(caf::actor_system_config& cfg) {
  cfg.add_message_type<module_message>("capstan::module_message");
}

bool registered(const caf::actor_system_config& cfg, const std::type_info& type) {
  return cfg.value_factories_by_rtti.count(std::type_index(type)) == 1;
}

} // namespace

TEST_CASE("the actor config registers capnp_frame and the modules' types",
          "[actor][actor_system_setup]") {
  actor_config_options options;
  options.load_middleman = false;
  options.extra_types = {&add_module_types};
  actor_config cfg{options};
  CHECK(registered(cfg, typeid(capnp_frame)));
  CHECK(registered(cfg, typeid(std::vector<capnp_frame>)));
  CHECK(registered(cfg, typeid(module_message)));
  CHECK(cfg.error_renderers.count(caf_error_category) == 1);
}

TEST_CASE("the actor config defaults to two scheduler threads", "[actor][actor_system_setup]") {
  actor_config_options options;
  options.load_middleman = false;
  actor_config cfg{options};
  CHECK(caf::get_or(cfg.content, "scheduler.max-threads", size_t{0}) == 2);
  options.max_threads = 3;
  actor_config wide{options};
  CHECK(caf::get_or(wide.content, "scheduler.max-threads", size_t{0}) == 3);
}

TEST_CASE("with the middleman, messages from other nodes skip the BASP workers",
          "[actor][actor_system_setup]") {
  actor_config_options options;
  actor_config cfg{options};
  CHECK(caf::get_or(cfg.content, "middleman.workers", size_t{1}) == 0);
}

TEST_CASE("the sharing policy is set when asked for", "[actor][actor_system_setup]") {
  actor_config_options options;
  options.load_middleman = false;
  actor_config stealing{options};
  CHECK(caf::get_or(stealing.content, "scheduler.policy", caf::atom("none")) !=
        caf::atom("sharing"));
  // Idle work-stealing workers sleep on their condition variable after a short poll instead of
  // CAF's 50 us sleeps, so a message from the RPC thread or the network wakes one at once.
  CHECK(caf::get_or(stealing.content, "work-stealing.moderate-poll-attempts", size_t{500}) == 0);
  CHECK(caf::get_or(stealing.content, "work-stealing.aggressive-poll-attempts", size_t{100}) == 10);
  options.policy = actor_config_options::scheduler_policy::sharing;
  actor_config sharing{options};
  CHECK(caf::get_or(sharing.content, "scheduler.policy", caf::atom("none")) ==
        caf::atom("sharing"));
  caf::actor_system sys{sharing};
  CHECK_FALSE(sys.has_middleman());
}

TEST_CASE("an actor system starts and stops with the capstan config",
          "[actor][actor_system_setup]") {
  actor_config cfg;
  caf::actor_system sys{cfg};
  CHECK(sys.has_middleman());
  CHECK(sys.render(to_caf_error(make_error(errc::corrupt_message, "bad crc")))
        == "CORRUPT_MESSAGE: bad crc");
}

} // namespace capstan
