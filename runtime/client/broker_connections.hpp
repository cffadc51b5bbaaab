#pragma once

// A client's connections to the brokers, one per address, made on first use and dropped after a
// network error: what each call of the client's loop thread sends through. Internal to
// runtime/client.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <capnp/rpc-twoparty.h>
#include <kj/async-io.h>

#include "runtime/result.hpp"
#include "schema/client.capnp.h"

namespace capstan::client {

using capnp_cap = rpc::Capstan::Client;

result<std::pair<std::string, uint16_t>> parse_host_port(const std::string& address);

// One broker connection. Calls made before the TCP connection is up queue in the promise
// capability and go out once it resolves. Members are declared in the order they depend on one
// another, so destruction runs from the capability down to the stream.
struct broker_connection {
  std::string address;
  uint64_t id = 0; // tells this connection from a later one to the same address
  kj::Own<kj::AsyncIoStream> stream;
  kj::Own<capnp::TwoPartyVatNetwork> network;
  kj::Own<capnp::RpcSystem<capnp::rpc::twoparty::VatId>> rpc;
  capnp_cap cap = nullptr;
};

// Used on the loop thread only, which owns the event loop and the tasks it was made with.
class broker_connections {
public:
  broker_connections(kj::AsyncIoContext& io, kj::TaskSet& tasks) : io_(io), tasks_(tasks) {}

  broker_connection& connection(const std::string& address);
  // Drops the connection `id` after a network error so the next call reconnects; a later
  // connection to the same address (a call saw the old one fail after another reconnected)
  // stays. The connection is destroyed on a later turn of the loop, not inside the
  // continuation that saw the error.
  void forget(const std::string& address, uint64_t id);
  // Whether the connection to `address` has its TCP connection up (still connecting: no).
  bool connected(const std::string& address) const;

private:
  kj::AsyncIoContext& io_;
  kj::TaskSet& tasks_;
  std::map<std::string, std::unique_ptr<broker_connection>> connections_;
  std::vector<std::unique_ptr<broker_connection>> graveyard_;
  uint64_t last_connection_id_ = 0;
};

} // namespace capstan::client
