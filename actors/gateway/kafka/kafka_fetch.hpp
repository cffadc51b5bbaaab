#pragma once

// Kafka Fetch (versions 4-11, no fetch sessions: session id 0) through the shared fetch handler
// (handlers/fetch_handler.hpp), one call per partition. Each partition's call long-polls on its
// own within the parked-fetch caps, so the response goes when every partition has answered: a
// partition with nothing new holds the others up to MaxWaitMs, where Kafka would answer as soon
// as MinBytes were there in total. Records are the stored batches, copied once into the response
// without the storage's alignment padding (kafka_record_set.hpp).

#include <kj/async.h>

#include "actors/gateway/service_context.hpp"
#include "runtime/kafka/message_header.hpp"
#include "runtime/types.hpp"

namespace capstan {

// REQUIRES: `req` is a decoded Fetch request at an offered version.
kj::Promise<bytes> serve_fetch(const client_session& s, kafka::request req);

} // namespace capstan
