#include "runtime/client/broker_connections.hpp"

#include <charconv>

#include <capnp/message.h>

namespace capstan::client {

namespace {

// Large fetch responses (fetch.max.bytes up to hundreds of MiB) exceed capnp's default 64 MiB
// traversal limit.
constexpr uint64_t traversal_limit_words = uint64_t{1} << 28; // 2 GiB

capnp::ReaderOptions reader_options() {
  capnp::ReaderOptions o;
  o.traversalLimitInWords = traversal_limit_words;
  return o;
}

} // namespace

result<std::pair<std::string, uint16_t>> parse_host_port(const std::string& address) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0)
    return make_error(errc::invalid_config, "address '" + address + "' is not HOST:PORT");
  unsigned port = 0;
  const char* begin = address.data() + colon + 1;
  const char* end = address.data() + address.size();
  auto [ptr, ec] = std::from_chars(begin, end, port);
  if (ec != std::errc{} || ptr != end || port == 0 || port > 65535)
    return make_error(errc::invalid_config, "address '" + address + "' has no valid port");
  return std::pair{address.substr(0, colon), static_cast<uint16_t>(port)};
}

broker_connection& broker_connections::connection(const std::string& address) {
  auto it = connections_.find(address);
  if (it != connections_.end()) return *it->second;
  auto conn = std::make_unique<broker_connection>();
  conn->address = address;
  conn->id = ++last_connection_id_;
  broker_connection* c = conn.get();
  auto parsed = parse_host_port(address);
  kj::Promise<capnp::Capability::Client> ready = nullptr;
  if (!parsed) {
    ready = KJ_EXCEPTION(FAILED, parsed.err().message);
  } else {
    ready = io_.provider->getNetwork()
                .parseAddress(parsed->first, parsed->second)
                .then([](kj::Own<kj::NetworkAddress> addr) {
                  return addr->connect().attach(kj::mv(addr));
                })
                .then(
                    [this, c](kj::Own<kj::AsyncIoStream> stream) -> capnp::Capability::Client {
                      c->stream = kj::mv(stream);
                      c->network = kj::heap<capnp::TwoPartyVatNetwork>(
                          *c->stream, capnp::rpc::twoparty::Side::CLIENT, reader_options());
                      c->rpc = kj::heap<capnp::RpcSystem<capnp::rpc::twoparty::VatId>>(
                          capnp::makeRpcClient(*c->network));
                      // A connection the broker closed (a node that stopped or restarted) is
                      // dropped as soon as the loop reads its end, as Kafka's NetworkClient
                      // does: the next call connects again instead of failing on the dead
                      // one and waiting retry.backoff.ms. The promise is also fulfilled when
                      // the client destroys the connection itself (forgotten after an error):
                      // the id keeps that from dropping a newer one.
                      tasks_.add(c->network->onDisconnect().then(
                          [this, address = c->address, id = c->id] { forget(address, id); },
                          [](kj::Exception&&) {}));
                      capnp::word scratch[4]{};
                      capnp::MallocMessageBuilder message(scratch);
                      auto vat = message.getRoot<capnp::rpc::twoparty::VatId>();
                      vat.setSide(capnp::rpc::twoparty::Side::SERVER);
                      return c->rpc->bootstrap(vat);
                    },
                    [](kj::Exception&& e) -> capnp::Capability::Client {
                      // A refused connection is a network error, as a lost one is.
                      kj::throwFatalException(
                          kj::Exception(kj::Exception::Type::DISCONNECTED, __FILE__, __LINE__,
                                        kj::str("cannot connect: ", e.getDescription())));
                    });
  }
  conn->cap = capnp::Capability::Client(kj::mv(ready)).castAs<rpc::Capstan>();
  auto& ref = *conn;
  connections_.emplace(address, std::move(conn));
  return ref;
}

void broker_connections::forget(const std::string& address, uint64_t id) {
  auto it = connections_.find(address);
  if (it == connections_.end() || it->second->id != id) return;
  graveyard_.push_back(std::move(it->second));
  connections_.erase(it);
  tasks_.add(kj::evalLater([this] { graveyard_.clear(); }));
}

bool broker_connections::connected(const std::string& address) const {
  auto it = connections_.find(address);
  return it != connections_.end() && it->second->stream;
}

} // namespace capstan::client
