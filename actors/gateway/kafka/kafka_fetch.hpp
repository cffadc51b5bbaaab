#pragma once

// Kafka Fetch (versions 4-11, no fetch sessions: session id 0) through the shared fetch handler
// (handlers/fetch_handler.hpp), one call per partition, in passes (docs/kafka.md, "Fetch"):
// first every partition answers at once; if that holds less than MinBytes and MaxWaitMs > 0,
// every partition waits for MinBytes of its own, and as soon as one has them (or an error), every
// partition answers at once again for the response. Records are the stored batches, copied once
// into the response without the storage's alignment padding (kafka_record_set.hpp), within the
// response's MaxBytes: the first batch always goes, as in Kafka, so that a consumer makes
// progress; partitions past the limit answer with no records.

#include <kj/async.h>

#include "actors/gateway/service_context.hpp"
#include "runtime/kafka/message_header.hpp"
#include "runtime/types.hpp"

namespace capstan {

// REQUIRES: `req` is a decoded Fetch request at an offered version.
kj::Promise<bytes> serve_fetch(const client_session& s, kafka::request req);

} // namespace capstan
