#pragma once

// Bounds a node puts on its client connections, so that no client, hostile or broken, can
// exhaust the node's memory or descriptors (docs/configuration.md, "Client connections";
// docs/operations.md, "Client connections and memory bounds"). Kafka's names where Kafka has the
// bound; the per-connection queues and the parked-fetch caps are capstan's own.

#include <cstddef>
#include <cstdint>
#include <limits>

namespace capstan {

inline constexpr int32_t min_socket_request_max_bytes = int32_t{1} << 20;

struct rpc_limits {
  // max.connections: client connections open at once; one more is closed at once.
  int32_t max_connections = std::numeric_limits<int32_t>::max();
  // max.connections.per.ip: likewise, counted per client address.
  int32_t max_connections_per_ip = std::numeric_limits<int32_t>::max();
  // socket.request.max.bytes: the largest Cap'n Proto message on a client connection. A larger
  // request ends its connection (Cap'n Proto refuses to read it). Cap'n Proto also refuses to
  // send a message above its connection's read limit, so fetch responses are sized to fit.
  // REQUIRES: >= min_socket_request_max_bytes.
  int32_t socket_request_max_bytes = 104857600;
  // queued.max.request.bytes.per.connection: request bytes a connection may have in flight
  // (received, not yet answered) before the node stops reading from it until some are answered
  // (Cap'n Proto's flow limit; on a Kafka connection, kafka_connection's request frames). One
  // request past the limit is still read.
  int32_t queued_max_request_bytes_per_connection = int32_t{64} << 20;
  // queued.max.response.bytes.per.connection and queued.max.responses.per.connection: what a
  // connection may have owed or waiting to be sent (its client does not read its answers) before
  // the node stops reading from it until some is sent. Bytes: answers queued to be sent plus the
  // maxBytes of fetches in flight. Number: answers queued plus calls in flight. Parked fetches
  // count in neither (their caps are below).
  int32_t queued_max_response_bytes_per_connection = int32_t{64} << 20;
  int32_t queued_max_responses_per_connection = 1024;
  // queued.max.requests: calls in flight on the whole node (received, not yet answered; parked
  // fetches aside) before the node stops reading from every client connection until some are
  // answered, as Kafka's network threads stop while its request queue is full. It bounds what
  // many connections together hold, each within its own limits above.
  int32_t queued_max_requests = 500;
  // fetch.max.parked.per.connection and fetch.max.parked.per.node: fetches that may park
  // (maxWaitMs > 0, minBytes > 0) in flight on one connection, and on the node. Past either, a
  // fetch is answered at once with what is there.
  int32_t fetch_max_parked_per_connection = 1000;
  int32_t fetch_max_parked_per_node = 10000;

  // socket_request_max_bytes in Cap'n Proto words: the connections' traversal limit.
  uint64_t traversal_limit_words() const;
  // queued_max_request_bytes_per_connection in words: the connections' flow limit.
  size_t flow_limit_words() const;
  // The largest record payload a fetch response may carry: 64 MiB (max_fetch_bytes), lowered so
  // the response stays below socket_request_max_bytes.
  int32_t max_fetch_bytes() const;
};

// max.connections when the config leaves it out: half the process's open-file soft limit
// (RLIMIT_NOFILE) at the time of the call, leaving the other half to partition logs, the cluster
// and metrics listeners and the runtime; at least 1. Kafka's default is unbounded, which on Linux
// ends in accept() failing with EMFILE and partitions that cannot open their segments.
int32_t default_max_connections();

// What a node starts with: the defaults above, max.connections at default_max_connections().
rpc_limits default_node_rpc_limits();

} // namespace capstan
