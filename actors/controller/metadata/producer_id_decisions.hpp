#pragma once

// The controller's producer id decision (KIP-730, KRaft's AllocateProducerIds): nodes hand out
// producer ids from blocks the active controller allocates, each block recorded in the metadata
// log as a ProducerIds record. The image's next_producer_id is where the next block starts, so an
// id is never handed out twice, also by a controller that took over (it replayed the log or a
// snapshot, which carries next_producer_id) or by a node that asks again after losing a block.

#include <cstdint>

#include "actors/controller/metadata/decision.hpp"
#include "actors/controller/metadata/metadata_image.hpp"
#include "runtime/cluster/producer_id_pool.hpp"
#include "runtime/result.hpp"

namespace capstan::controller {

// The next block, [image.next_producer_id(), + size), as one ProducerIds record. Refuses what
// next_producer_id_block refuses (UNKNOWN_SERVER_ERROR: no such block left).
result<decision> allocate_producer_ids(const metadata_image& image,
                                       int64_t size = producer_id_block_size);

} // namespace capstan::controller
