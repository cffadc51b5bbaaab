#pragma once

// How every capstan actor system is configured, for real nodes and for tests alike: the message
// type registry (every message type on every node, or a remote message arrives empty), the
// "capstan" error renderer, the middleman, and a scheduler sized for small machines.
//
// Usage on a node:
//   capstan::actor_config_options options;           // extra_types: none so far
//   capstan::actor_config cfg{options};
//   if (auto err = cfg.parse(argc, argv)) ...;      // flags and caf-application.ini override
//   caf::actor_system sys{cfg};

#include <cstddef>
#include <vector>

#include <caf/actor_system_config.hpp>

namespace capstan {

// A module's registration hook: adds the module's message types (and atoms' payload types) to a
// config. Each module that defines its own message types provides one.
using type_registrar = void (*)(caf::actor_system_config&);

// Registers the runtime's own message types: capnp_frame (and, by CAF's rule,
// std::vector<capnp_frame>).
void add_message_types(caf::actor_system_config& cfg);

struct actor_config_options {
  // Loads caf::io::middleman (remote actors). Off for deterministic single-process tests.
  bool load_middleman = true;
  // Default for `scheduler.max-threads`: CAF's own default (max(4, cores)) oversubscribes a
  // 2-core box: more workers than cores spin against each other. 0 keeps CAF's default.
  size_t max_threads = 2;
  // `scheduler.policy`: work-stealing keeps a message between two actors on the sending worker's
  // own queue, and an idle worker sleeps on its condition variable after a short poll (set by
  // prepare_actor_config); the sharing policy's workers wait on one shared queue, and every send
  // wakes one (docs/configuration.md, actor.scheduler.policy).
  enum class scheduler_policy { work_stealing, sharing };
  scheduler_policy policy = scheduler_policy::work_stealing;
  // Other modules' registrars, called after add_message_types in order.
  std::vector<type_registrar> extra_types;
};

// Applies `options` to `cfg`: message types, error renderer, middleman, thread count. Call once
// per config, before constructing the actor_system; values set here are defaults that a later
// cfg.parse() may override.
void prepare_actor_config(caf::actor_system_config& cfg, const actor_config_options& options = {});

// An actor_system_config prepared by prepare_actor_config.
class actor_config : public caf::actor_system_config {
public:
  explicit actor_config(const actor_config_options& options = {});

  actor_config(const actor_config&) = delete;
  actor_config& operator=(const actor_config&) = delete;
  actor_config(actor_config&&) = default;
  actor_config& operator=(actor_config&&) = delete;
  ~actor_config() override = default;
};

} // namespace capstan
