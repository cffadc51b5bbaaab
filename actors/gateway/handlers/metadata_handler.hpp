#pragma once

// Metadata and ListTopics: the cluster as this node knows it. From the controller's metadata
// cache once this node accepted an UpdateMetadata, else from the node's own metadata actor.

#include <string>
#include <vector>

#include "actors/gateway/handlers/handler_support.hpp"
#include "runtime/cluster/metadata.hpp"

namespace capstan {

// The cluster for `method` ("metadata" or "listTopics"), which is counted. Fails (counted)
// only when the node's own metadata does not answer.
kj::Promise<answer<metadata_snapshot>> handle_metadata(const client_session& s,
                                                       const char* method);

// Whether `node` is among the live `brokers`. A partition's leader that is not is answered as
// -1, and its replicas that are not as offline.
bool broker_live(const std::vector<broker_info>& brokers, int32_t node);

// Why a topic asked for by name is not in the metadata: INVALID_TOPIC_EXCEPTION for a name
// that cannot exist, else UNKNOWN_TOPIC_OR_PARTITION.
error missing_topic_error(const std::string& name);

} // namespace capstan
