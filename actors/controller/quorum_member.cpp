#include "actors/controller/quorum_member.hpp"

#include <span>

#include <spdlog/spdlog.h>

#include "actors/controller/metadata/metadata_image_snapshot.hpp"
#include "actors/controller/metadata/metadata_record_codec.hpp"
#include "actors/controller/raft/raft_codec.hpp"
#include "actors/controller/raft/voter_set.hpp"
#include "runtime/cluster/metadata_store.hpp"

namespace capstan::controller {

namespace {

std::string num(uint64_t v) {
  return std::to_string(v);
}

// The controller's name for "not the leader": callers redirect on it.
raft::proposal as_controller(raft::proposal p) {
  if (p.code == errc::not_leader_or_follower) p.code = errc::not_controller;
  return p;
}

} // namespace

result<quorum_member> quorum_member::open(quorum_member_config config) {
  auto files = raft::open_raft_directory(config.dir);
  if (!files) return files.err();
  return open(std::move(config), std::move(*files));
}

result<quorum_member> quorum_member::open(quorum_member_config config,
                                          std::unique_ptr<raft::raft_files> files) {
  const auto where = files->where();
  auto storage = raft::raft_storage::open(
      std::move(files),
      raft::directory_identity{config.cluster_id, config.raft.id, config.new_directory,
                               raft::sorted_voters(config.raft.voters)});
  if (!storage) return storage.err();
  const auto node = config.raft.id.value();
  const auto& rec = storage->recovery();
  const auto directory = to_hex(storage->identity().directory);
  if (rec.created)
    spdlog::info("controller {}: new Raft directory {} in {}", node, directory, where);
  if (!rec.lost.empty())
    spdlog::error("controller {}: Raft state in {} was lost or damaged ({}): it continues as "
                  "directory {}, catching up, and does not vote until it has caught up from the "
                  "leader",
                  node, where, rec.lost, directory);
  else if (!rec.reason.empty())
    spdlog::warn("controller {}: cut {} bytes of a torn last append off the raft log: {}", node,
                 rec.truncated_bytes, rec.reason);
  if (!rec.identity_lost.empty())
    spdlog::warn("controller {}: Raft directory {} has a new id {} ({})", node, where, directory,
                 rec.identity_lost);
  config.raft.directory = storage->identity().directory;
  const auto& durable = storage->state();
  metadata_image image(config.cluster_id);
  if (durable.snap.meta.index.value() > 0) {
    auto restored = read_image_snapshot(durable.snap.data);
    if (!restored) return restored.err();
    if (restored->cluster_id() != config.cluster_id)
      return make_error(errc::inconsistent_cluster_id,
                        "the raft snapshot in " + config.dir.string() + " is of cluster '" +
                            restored->cluster_id() + "', not '" + config.cluster_id + "'");
    image = std::move(*restored);
  }
  raft::raft_core core(config.raft, durable);
  return quorum_member(std::move(config), std::move(*storage), std::move(core), std::move(image));
}

void quorum_member::tick() {
  core_.tick();
}

status quorum_member::receive(const capnp_frame& frame) {
  auto f = raft::decode(frame);
  if (!f) return f.err();
  if (auto s = raft::check_frame(f->msg, f->quorum, quorum_, core_.id(), core_.directory()); !s) {
    // Of this quorum and for this node, it was refused only for naming an earlier directory id
    // of this node: the core learns from it who sent it (and ignores the rest), so that this
    // node's next messages name the sender's current directory id.
    if (f->quorum == quorum_ && f->msg.to == core_.id()) core_.step(f->msg);
    return s;
  }
  core_.step(f->msg);
  return {};
}

raft::proposal quorum_member::propose(uint64_t token, const std::vector<metadata_record>& records) {
  if (records.empty()) return raft::proposal{errc::invalid_request, {}, core_.leader()};
  auto p = as_controller(core_.propose(encode_batch(records)));
  if (!p.ok()) return p;
  // An index this member proposed at in an older term was truncated away since.
  if (auto it = pending_.find(p.index); it != pending_.end())
    settled_.push_back(
        proposal_outcome{it->second.token, errc::not_controller, p.index,
                         "lost leadership before entry " + num(p.index.value()) + " committed"});
  pending_[p.index] = pending{token, core_.term()};
  return p;
}

raft::proposal quorum_member::add_voter(uint64_t token, raft::voter v) {
  auto p = as_controller(core_.add_voter(std::move(v)));
  if (p.ok()) voter_change_ = token;
  return p;
}

raft::proposal quorum_member::remove_voter(uint64_t token, node_id id) {
  auto p = as_controller(core_.remove_voter(id));
  if (p.ok()) voter_change_ = token;
  return p;
}

result<std::vector<proposal_outcome>> quorum_member::drain(const send_fn& send) {
  std::vector<proposal_outcome> outcomes = std::move(settled_);
  settled_.clear();
  while (core_.has_ready()) {
    raft::ready rd = core_.take_ready();
    // 1. Durable first: the messages below promise what this made durable (a vote, an
    // acknowledged entry). On failure nothing is sent or applied.
    if (auto s = persist(rd); !s) return s.err();
    // 2. Send.
    for (const auto& m : rd.messages) {
      if (observer_.sent) observer_.sent(m);
      send(m.to, raft::encode(m, quorum_));
    }
    // 3. Apply.
    apply(rd, outcomes);
    // 4. Advance.
    core_.advance();
    if (rd.snapshot_due && core_.applied_index() > core_.log().snapshot_index()) {
      auto s = core_.compact(core_.applied_index(), write_image_snapshot(image_));
      if (!s)
        spdlog::warn("controller {}: no snapshot: {}", core_.id().value(), s.err().to_string());
    }
  }
  return outcomes;
}

status quorum_member::persist(const raft::ready& rd) {
  if (rd.hard_state)
    if (auto s = storage_.save_hard_state(*rd.hard_state); !s) return s;
  if (rd.truncate_from)
    if (auto s = storage_.truncate_from(*rd.truncate_from); !s) return s;
  if (rd.snapshot)
    if (auto s = storage_.save_snapshot(*rd.snapshot); !s) return s;
  if (!rd.entries.empty())
    if (auto s = storage_.append(std::span<const raft::entry>(rd.entries)); !s) return s;
  return {};
}

void quorum_member::apply(const raft::ready& rd, std::vector<proposal_outcome>& outcomes) {
  if (rd.apply_snapshot) {
    const auto& snap = *rd.snapshot;
    auto restored = read_image_snapshot(snap.data);
    if (restored) {
      image_ = std::move(*restored);
    } else {
      // The leader's image failed to rebuild here; every member reads a snapshot with the same
      // code, so the leader's own would fail too. Keep the old image and say so loudly.
      spdlog::error("controller {}: the snapshot at {} does not load: {}", core_.id().value(),
                    snap.meta.index.value(), restored.err().to_string());
    }
    if (observer_.snapshot) observer_.snapshot(snap.meta);
    // What this member proposed up to the snapshot is decided, but not knowable from here.
    for (auto it = pending_.begin(); it != pending_.end() && it->first <= snap.meta.index;) {
      outcomes.push_back(proposal_outcome{it->second.token, errc::request_timed_out, it->first,
                                          "replaced by the leader's snapshot at " +
                                              num(snap.meta.index.value()) + ": outcome unknown"});
      it = pending_.erase(it);
    }
  }
  for (const auto& e : rd.committed) apply_entry(e, outcomes);
  if (rd.voter_change && voter_change_) {
    const auto& end = *rd.voter_change;
    std::string why;
    if (end.code == errc::request_timed_out)
      why = "node " + num(static_cast<uint64_t>(end.node.value())) +
            " did not catch up with the leader in time";
    else if (end.code != errc::none)
      why = "lost leadership before the voter change committed";
    outcomes.push_back(proposal_outcome{*voter_change_,
                                        end.code == errc::not_leader_or_follower
                                            ? errc::not_controller
                                            : end.code,
                                        end.index, why});
    voter_change_.reset();
  }
}

void quorum_member::apply_entry(const raft::entry& e, std::vector<proposal_outcome>& outcomes) {
  status applied;
  // A voter set entry is Raft's own (docs/controller.md, "Voter changes"): no metadata.
  if (e.kind == raft::entry_kind::data && !e.data.empty()) {
    // A committed entry that fails to decode or apply fails the same way on every member (the
    // image is deterministic, a batch applies all or nothing), so skipping it whole keeps the
    // members in step (docs/controller.md, "The active controller").
    auto records = decode_batch(e.data);
    applied = records ? image_.apply(*records) : status(records.err());
    if (!applied)
      spdlog::error("controller {}: skipped entry {}: {}", core_.id().value(), e.index.value(),
                    applied.err().to_string());
  }
  if (observer_.entry) observer_.entry(e, applied);
  auto it = pending_.find(e.index);
  if (it == pending_.end()) return;
  if (it->second.term != e.term)
    outcomes.push_back(
        proposal_outcome{it->second.token, errc::not_controller, e.index,
                         "lost leadership before entry " + num(e.index.value()) + " committed"});
  else
    outcomes.push_back(proposal_outcome{it->second.token, applied.code(), e.index,
                                        applied ? std::string{} : applied.err().message});
  pending_.erase(it);
}

quorum_status quorum_member::status_now() const {
  return quorum_status{core_.id(),
                       core_.role(),
                       core_.term(),
                       core_.voted_for(),
                       core_.leader(),
                       core_.commit_index(),
                       core_.last_index(),
                       core_.applied_index(),
                       core_.log().snapshot_index(),
                       core_.transferee().has_value(),
                       core_.catching_up(),
                       raft::ids_of(core_.voters())};
}

} // namespace capstan::controller
