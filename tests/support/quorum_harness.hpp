#pragma once

// A controller quorum in one process: each member is its own actor system with a node endpoint
// published on 127.0.0.1, a peer directory and a quorum actor, so every Raft message crosses
// CAF's middleman as a capnp_frame, as between real nodes. Members can be stopped (their whole
// actor system torn down) and started again from their data dirs; links are cut with
// link_faults. Every wait is bounded.

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <vector>

#include "actors/controller/quorum_actor.hpp"
#include "actors/replica/node_endpoint_actor.hpp"
#include "tests/support/caf_fixture.hpp"
#include "tests/support/temp_dir.hpp"

namespace capstan::test {

struct quorum_harness_options {
  int members = 3;
  // The bootstrap voters are members 1..voters (0: all); the others start as learners.
  int voters = 0;
  // Short, so elections and catch-up take a fraction of a second; the tests never depend on them.
  std::chrono::milliseconds tick_interval{20};
  std::chrono::milliseconds election_timeout{400};
  std::chrono::milliseconds heartbeat_interval{100};
  uint64_t snapshot_entries = 1024;
  // As real nodes: each member knows the addresses of the bootstrap voters alone (its
  // --controller-quorum); anyone else it finds through its voter set or by locating it through
  // its peers. Otherwise every member is told every member's address. Either way a member keeps
  // its port across restarts.
  bool bootstrap_addresses_only = false;
};

struct quorum_member_node {
  node_id id{0};
  std::filesystem::path dir;
  std::unique_ptr<threaded_system> system;
  peer_directory_actor directory;
  quorum_actor quorum;
  node_endpoint_actor endpoint;
  uint16_t port = 0;
};

class quorum_harness {
public:
  static constexpr const char* cluster_id = "quorum-harness";

  explicit quorum_harness(quorum_harness_options options);
  ~quorum_harness();
  quorum_harness(const quorum_harness&) = delete;
  quorum_harness& operator=(const quorum_harness&) = delete;

  // Starts member `id` (again) from its data dir, on the port it had (a free one the first
  // time), which the others are told of.
  void start(int id);
  // Tears member `id`'s actor system down: every actor of it exits.
  void stop(int id);
  bool running(int id) const;

  quorum_member_node& member(int id) { return *members_.at(static_cast<size_t>(id - 1)); }

  caf::expected<propose_reply> propose(int id, std::vector<controller::metadata_record> records);
  caf::expected<controller::quorum_status> status(int id);
  caf::expected<controller::metadata_image> image(int id);
  // Asks member `id` to hand the quorum's leadership over (resign_atom): the voter it told.
  caf::expected<int32_t> resign(int id);
  // Asks member `at` to add member `id` as a voter (with its address) or to remove it.
  caf::expected<propose_reply> add_voter(int at, int id);
  caf::expected<propose_reply> remove_voter(int at, int id);

  // The member that leads in the highest term among the running ones, 0 if none does.
  int leader();
  // Proposes at the leader until it commits, following NOT_CONTROLLER to the next leader
  // (bounded); fails the test otherwise. Returns the committed index.
  uint64_t commit(std::vector<controller::metadata_record> records);

  // Waits (bounded) until `pred` holds; false on timeout.
  bool eventually(const std::function<bool()>& pred,
                  std::chrono::milliseconds limit = std::chrono::seconds(20));

private:
  quorum_harness_options opts_;
  temp_dir dir_{"quorum"};
  std::vector<std::unique_ptr<quorum_member_node>> members_;
};

} // namespace capstan::test
