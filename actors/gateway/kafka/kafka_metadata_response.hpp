#pragma once

// The body of a Kafka Metadata response (versions 0-9) from the cluster as this node knows it
// (handlers/metadata_handler.hpp). Brokers are listed at their advertised Kafka listeners; a
// node without one is left out.

#include "runtime/cluster/metadata.hpp"
#include "runtime/kafka/message_value.hpp"

namespace capstan {

// `request`: the decoded Metadata request at `version`. Its topics (null from v1, or an empty
// list in v0: every topic) are answered in the order asked; a topic that does not exist is
// UNKNOWN_TOPIC_OR_PARTITION (capstan creates no topic on a metadata request) or, for a name
// that cannot exist, INVALID_TOPIC_EXCEPTION. A partition whose leader is not live answers
// LEADER_NOT_AVAILABLE with leader -1. The controller id names a live listed broker: the
// active controller's node when it is one, else the lowest listed id (as KRaft brokers
// answer clients), -1 with no broker.
kafka::struct_value metadata_response(const kafka::struct_value& request,
                                      kafka::api_version version, const cluster_metadata& md);

} // namespace capstan
