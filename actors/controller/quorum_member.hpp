#pragma once

// One controller's member of the controller quorum, as a plain class: the Raft core, its durable
// storage and the metadata image the committed log builds (docs/controller.md, "The quorum
// actor"). The quorum actor is a thin shell around it that feeds it ticks, peers' frames and
// proposals and hands its outgoing frames to the peers.
//
// drain() handles every ready the core has in the order raft_ready.hpp makes part of Raft's
// safety: persist (raft_storage, fsync), then send, then apply to the image, then advance; and
// takes a snapshot of the image when the core says one is due.
//
// Blocks on fsync: the owner calls it off CAF's shared scheduler threads. Not thread-safe.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "actors/controller/metadata/metadata_image.hpp"
#include "actors/controller/metadata/metadata_records.hpp"
#include "actors/controller/raft/quorum_identity.hpp"
#include "actors/controller/raft/raft_config.hpp"
#include "actors/controller/raft/raft_core.hpp"
#include "actors/controller/raft/raft_files.hpp"
#include "actors/controller/raft/raft_storage.hpp"
#include "runtime/messages/capnp_frame.hpp"
#include "runtime/result.hpp"

namespace capstan::controller {

struct quorum_member_config {
  // raft.directory is set from the storage's identity.
  raft::raft_config raft;
  // Holds this member's Raft files (raft_storage).
  std::filesystem::path dir;
  // The cluster's id: the image's, the Raft directory's and every Raft frame's.
  std::string cluster_id;
  // The directory id the Raft directory takes if it is new or its stored state was lost or
  // damaged (raft_storage::open): random, non-zero.
  raft::directory_id new_directory{};
};

// A proposal that reached the end of its life on this member: it committed (code none) or not.
struct proposal_outcome {
  uint64_t token = 0;
  errc code = errc::none;
  raft::log_index index;
  std::string message;
};

// Where a member stands, for `cluster describe` and tests.
struct quorum_status {
  node_id node{0};
  raft::role role = raft::role::follower;
  raft::raft_term term;
  std::optional<node_id> voted_for;
  std::optional<node_id> leader;
  raft::log_index commit_index;
  raft::log_index last_index;
  raft::log_index applied_index;
  raft::log_index snapshot_index;
  // A leader handing its leadership over: it refuses proposals until it is done or gives up.
  bool handing_over = false;
  // Its stored state was lost or damaged (or is new): it does not vote until it caught up.
  bool catching_up = false;
  // The voters in effect in its log (docs/controller.md, "Voter changes"); it may be none of them.
  std::vector<node_id> voters;
};

class quorum_member {
public:
  // Sends one encoded message (schema/raft.capnp) to a peer; it may be lost.
  using send_fn = std::function<void(node_id to, capnp_frame frame)>;

  // Opens the storage in config.dir and restarts from what it holds: the core from its hard
  // state, snapshot and log; the image from the snapshot (the entries after it apply again once a
  // leader says they are committed). raft_storage::open's errors (KAFKA_STORAGE_ERROR, a
  // directory of another cluster or node), and the snapshot's if it does not rebuild an image.
  static result<quorum_member> open(quorum_member_config config);
  // The same over `files` instead of config.dir.
  static result<quorum_member> open(quorum_member_config config,
                                    std::unique_ptr<raft::raft_files> files);

  quorum_member(const quorum_member&) = delete;
  quorum_member& operator=(const quorum_member&) = delete;
  quorum_member(quorum_member&&) = default;
  quorum_member& operator=(quorum_member&&) = default;
  ~quorum_member() = default;

  // Inputs; call drain() after each.
  void tick();
  // A peer's frame. CORRUPT_MESSAGE if it does not decode, INCONSISTENT_CLUSTER_ID or
  // INCONSISTENT_VOTER_SET if it is of another quorum or for another incarnation of this member
  // (raft::check_frame); then nothing happens.
  status receive(const capnp_frame& frame);
  // Proposes the records as one entry; `token` names it in a later proposal_outcome.
  // NOT_CONTROLLER with the known leader (if any) unless this member leads; INVALID_REQUEST for
  // no records.
  raft::proposal propose(uint64_t token, const std::vector<metadata_record>& records);
  // Starts adding `v` to the voters, or removing voter `id` (raft::raft_core::add_voter,
  // remove_voter); `token` names the change in a later proposal_outcome: NONE once its voter set
  // entry committed, else why it ended. Refused at once as the core refuses it, with
  // NOT_CONTROLLER for NOT_LEADER_OR_FOLLOWER.
  raft::proposal add_voter(uint64_t token, raft::voter v);
  raft::proposal remove_voter(uint64_t token, node_id id);
  // Hands the quorum's leadership to another voter if this member leads
  // (raft::raft_core::transfer_leadership); a clean stop does, so the others need not wait out
  // an election timeout.
  void transfer_leadership() { core_.transfer_leadership(); }

  // Handles every ready (see the top of this file). Returns the proposals that committed or can
  // no longer commit as proposed (their index now holds another term's entry: NOT_CONTROLLER;
  // the batch did not apply to the image: its error). KAFKA_STORAGE_ERROR if persisting failed:
  // then nothing of that ready was sent or applied, and the member must stop.
  result<std::vector<proposal_outcome>> drain(const send_fn& send);

  const metadata_image& image() const { return image_; }
  quorum_status status_now() const;
  const raft::raft_core& core() const { return core_; }

  // What drain() does, for the controller simulation to check after every step: each message it
  // sends, each committed entry with what applying it to the image gave, and each leader's
  // snapshot loaded.
  struct drain_observer {
    std::function<void(const raft::message&)> sent;
    std::function<void(const raft::entry&, const status&)> entry;
    std::function<void(const raft::snapshot_meta&)> snapshot;
  };
  void observe(drain_observer observer) { observer_ = std::move(observer); }

private:
  struct pending {
    uint64_t token = 0;
    raft::raft_term term;
  };

  quorum_member(quorum_member_config config, raft::raft_storage storage, raft::raft_core core,
                metadata_image image)
      : config_(std::move(config)), quorum_{config_.cluster_id,
                                            raft::sorted_voters(config_.raft.voters)},
        storage_(std::move(storage)), core_(std::move(core)), image_(std::move(image)) {}

  status persist(const raft::ready& rd);
  void apply(const raft::ready& rd, std::vector<proposal_outcome>& outcomes);
  void apply_entry(const raft::entry& e, std::vector<proposal_outcome>& outcomes);

  quorum_member_config config_;
  raft::quorum_identity quorum_;
  raft::raft_storage storage_;
  raft::raft_core core_;
  metadata_image image_;
  std::map<raft::log_index, pending> pending_;
  // The voter change this member started as leader, until the core says how it ended.
  std::optional<uint64_t> voter_change_;
  std::vector<proposal_outcome> settled_; // decided outside drain(), reported by the next one
  drain_observer observer_;
};

} // namespace capstan::controller
