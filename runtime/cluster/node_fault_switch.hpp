#pragma once

// One node's fault switch as a client drives it (schema/client.capnp, injectFault; `capstan
// debug fault`): cut this node off from peers both ways or one way, drop its next produce
// responses, lose or delay its controller's control messages, fill its disk, or clear all of
// it. Only a node
// started with fault.injection.enable = true has one (docs/operations.md, "Fault injection").
// Cutting off sets link_faults for the links between this node and a peer; since senders and
// receivers both ask link_faults, that alone cuts a real process off from the others, whose own
// switches stay clear. Filling the disk sets rules of the storage env the node installed
// (runtime/storage/fault_injection_env.hpp) for the paths under its data dir.
//
// Thread-safe: the RPC thread sets it, the RPC thread asks it on every produce answer.

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/result.hpp"
#include "runtime/types.hpp"

namespace capstan {

class fault_injection_env;

// How the disk under a node's data dir fails (node_fault_switch::fail_disk).
enum class disk_failure {
  full,      // ENOSPC
  read_only, // EROFS: the file system was remounted read-only
  io_error   // EIO: the disk fails every write
};

class node_fault_switch {
public:
  explicit node_fault_switch(node_id self) : self_(self) {}
  // With the storage env the node's files go through and the data dir they are under: fail_disk
  // can then fail it. `storage` outlives the switch.
  node_fault_switch(node_id self, fault_injection_env& storage, std::string data_dir)
      : self_(self), storage_(&storage), data_dir_(std::move(data_dir)) {}
  node_fault_switch(const node_fault_switch&) = delete;
  node_fault_switch& operator=(const node_fault_switch&) = delete;

  // Drops every message between this node and each of `peers` until clear(); adds to the peers
  // cut off before. INVALID_REQUEST (and nothing set) for no peers, a negative id or this node's.
  status isolate(const std::vector<int32_t>& peers);
  // One way: drops what this node sends to each of `peers` (outgoing), or what it receives from
  // them (incoming), until clear(); the same refusals as isolate.
  status drop_outgoing(const std::vector<int32_t>& peers);
  status drop_incoming(const std::vector<int32_t>& peers);
  // This node's controller loses its next `count` control messages, then each with
  // `probability`, until clear() (replacing what was left, keeping a delay). INVALID_REQUEST
  // for a negative count or a probability outside [0, 1].
  status drop_control(int32_t count, double probability);
  // This node's controller sends each control message `delay_ms` late until clear() (keeping the
  // drops). INVALID_REQUEST for a delay below 1 ms.
  status delay_control(int32_t delay_ms);
  // The next `count` produce responses are dropped (replacing what was left). INVALID_REQUEST
  // for a negative count.
  status drop_produce_responses(int32_t count);
  // Every write, fsync and creation under the node's data dir fails with `how`'s errno until
  // clear() (fault_injection_env::fill_disk), replacing an earlier disk fault. INVALID_REQUEST
  // (and nothing set) for a switch without a storage env.
  status fail_disk(disk_failure how);
  // Undoes all: every link of this node passes, no produce response or control message is
  // dropped or delayed, its disk has room again.
  void clear();

  // True iff this produce response is to be dropped (and counts it). One relaxed atomic load
  // while nothing is to be dropped.
  bool take_produce_response();

private:
  // `peers` as node ids, or INVALID_REQUEST for none, a negative id or this node's.
  result<std::vector<node_id>> peer_ids(const std::vector<int32_t>& peers) const;

  node_id self_;
  fault_injection_env* storage_ = nullptr;
  std::string data_dir_;
  std::atomic<int32_t> produce_drops_{0};
};

} // namespace capstan
