#pragma once

// Spawns the actor that owns one segment. Its protocol is segment_actor in log_messages.hpp.

#include <memory>
#include <string>

#include <caf/fwd.hpp>

#include "actors/log/log_messages.hpp"

namespace capstan {

class segment;

// `log_name` ("topic-partition" on node n) prefixes every log line. The actor becomes the only
// user of `seg`.
segment_actor spawn_segment(caf::actor_system& sys, std::shared_ptr<segment> seg,
                            std::string log_name, timestamp_ms created_ms);

// What the partition log mirrors of a segment.
segment_meta meta_of(const segment& seg, timestamp_ms created_ms);

} // namespace capstan
