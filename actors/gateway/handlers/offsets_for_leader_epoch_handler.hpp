#pragma once

// OffsetsForLeaderEpoch for a consumer (KIP-320): where `requested` ends in the leader-epoch
// cache of the partition's leader replica on this node. The replica checks `current` as for a
// follower: FENCED_LEADER_EPOCH if older than its epoch, UNKNOWN_LEADER_EPOCH if newer,
// NOT_LEADER_OR_FOLLOWER unless it leads. `current` -1 skips that check, as in Kafka: the
// replica's own epoch is asked first and checked against.

#include <cstdint>
#include <string>

#include "actors/gateway/handlers/handler_support.hpp"
#include "runtime/storage/leader_epoch_cache.hpp"

namespace capstan {

// A `requested` epoch newer than every one the replica knows answers epoch_end{-1, -1} with no
// error, as Kafka's UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET
// (leader_epoch_cache::end_offset_for).
kj::Promise<answer<epoch_end>>
handle_offsets_for_leader_epoch(const client_session& s, const std::string& topic,
                                int32_t partition, leader_epoch current, leader_epoch requested);

} // namespace capstan
