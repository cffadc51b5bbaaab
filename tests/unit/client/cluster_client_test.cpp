// The client library against a fake Capstan server (kj only, no broker): routing, retries after
// NOT_LEADER_OR_FOLLOWER, request timeouts, the producer's partitioning and offsets, and the
// consumer reading back what was produced.

#include <catch2/catch.hpp>

#include <atomic>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <thread>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <capnp/rpc-twoparty.h>
#include <kj/async-io.h>

#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/record_batch_view.hpp"
#include "runtime/client/consumer.hpp"
#include "runtime/client/producer.hpp"
#include "schema/client.capnp.h"
#include "tests/support/eventually.hpp"

using namespace capstan;
using namespace capstan::client;
using namespace std::chrono_literals;

namespace {

constexpr int32_t partitions = 3;

// What the fake broker holds; touched only on its kj thread, read by the test after stop().
struct fake_state {
  uint16_t port = 0;
  // The client port Metadata names for node 1, the leader of every partition (0: this server's).
  std::atomic<uint16_t> leader_port{0};
  std::atomic<int> not_leader_remaining{0};
  std::atomic<int> storage_error_remaining{0}; // produce answers KAFKA_STORAGE_ERROR
  std::atomic<int> replicas{1};                // Metadata names replicas 1..this of every partition
  // Non-zero: the KAFKA_STORAGE_ERROR answers wait until this many produces are waiting, so that
  // they all are in flight together.
  std::atomic<int> storage_errors_together{0};
  std::atomic<int> metadata_calls{0};
  std::atomic<int> produce_calls{0};
  // Non-zero: every produce is answered with this errorCode.
  std::atomic<int> produce_error{0};
  std::atomic<bool> produce_never_answers{false}; // once the NOT_LEADER answers are used up
  std::atomic<bool> topic_deleted{false}; // metadata and fetch answer UNKNOWN_TOPIC_OR_PARTITION for "t"
  // The leader epoch Metadata names; fetches that name an older one are FENCED_LEADER_EPOCH, as
  // at a leader elected since (KIP-320).
  std::atomic<int32_t> leader_epoch{0};
  std::atomic<int32_t> last_fetch_epoch{-1};
  std::atomic<int> fenced_fetches{0};
  std::map<int32_t, bytes> logs;        // padded batch sequence per partition
  std::map<int32_t, int64_t> next_offset;
};

class fake_capstan final : public rpc::Capstan::Server {
public:
  explicit fake_capstan(fake_state& s) : s_(s) {}

  kj::Promise<void> metadata(MetadataContext call) override {
    ++s_.metadata_calls;
    auto params = call.getParams();
    std::vector<std::string> wanted;
    for (auto t : params.getTopics()) wanted.emplace_back(t.cStr());
    if (params.getAllTopics()) wanted = {"t"};
    auto r = call.getResults();
    auto brokers = r.initBrokers(1);
    brokers[0].setNodeId(1);
    brokers[0].setHost("127.0.0.1");
    brokers[0].setPort(s_.leader_port != 0 ? s_.leader_port.load() : s_.port);
    r.setControllerId(1);
    r.setClusterId("fake");
    auto topics = r.initTopics(static_cast<unsigned>(wanted.size()));
    for (unsigned i = 0; i < wanted.size(); ++i) {
      topics[i].setName(wanted[i]);
      if (wanted[i] != "t" || s_.topic_deleted) {
        topics[i].setErrorCode(static_cast<uint8_t>(errc::unknown_topic_or_partition));
        topics[i].setErrorMessage("unknown topic " + wanted[i]);
        continue;
      }
      auto ps = topics[i].initPartitions(partitions);
      for (int32_t p = 0; p < partitions; ++p) {
        ps[p].setPartition(p);
        ps[p].setLeader(1);
        ps[p].setLeaderEpoch(s_.leader_epoch);
        auto replicas = ps[p].initReplicas(static_cast<unsigned>(s_.replicas.load()));
        for (unsigned r = 0; r < replicas.size(); ++r) replicas.set(r, static_cast<int32_t>(r + 1));
        ps[p].initIsr(1).set(0, 1);
      }
    }
    return kj::READY_NOW;
  }

  kj::Promise<void> produce(ProduceContext call) override {
    ++s_.produce_calls;
    auto params = call.getParams();
    auto r = call.getResults();
    if (s_.produce_error != 0) {
      r.setErrorCode(static_cast<uint8_t>(s_.produce_error.load()));
      r.setErrorMessage("refused on purpose");
      return kj::READY_NOW;
    }
    if (s_.not_leader_remaining > 0) {
      --s_.not_leader_remaining;
      r.setErrorCode(static_cast<uint8_t>(errc::not_leader_or_follower));
      r.setErrorMessage("not the leader");
      return kj::READY_NOW;
    }
    if (s_.storage_error_remaining > 0) {
      --s_.storage_error_remaining;
      if (s_.storage_errors_together == 0) {
        r.setErrorCode(static_cast<uint8_t>(errc::kafka_storage_error));
        r.setErrorMessage("the log dir failed");
        return kj::READY_NOW;
      }
      auto paf = kj::newPromiseAndFulfiller<void>();
      held_.add(kj::mv(paf.fulfiller));
      if (static_cast<int>(held_.size()) >= s_.storage_errors_together) {
        for (auto& f : held_) f->fulfill();
        held_.clear();
      }
      return paf.promise.then([call]() mutable {
        auto res = call.getResults();
        res.setErrorCode(static_cast<uint8_t>(errc::kafka_storage_error));
        res.setErrorMessage("the log dir failed");
      });
    }
    if (s_.produce_never_answers) return kj::NEVER_DONE;
    const int32_t p = params.getPartition();
    auto data = params.getRecords();
    bytes batch(data.begin(), data.end());
    auto view = record_batch_view::parse(batch, 1 << 20, batch_validation::produce);
    if (!view) {
      r.setErrorCode(static_cast<uint8_t>(view.code()));
      return kj::READY_NOW;
    }
    const int64_t base = s_.next_offset[p];
    s_.next_offset[p] = base + view->record_count();
    set_base_offset(batch, offset{base});
    auto& log = s_.logs[p];
    log.insert(log.end(), batch.begin(), batch.end());
    log.resize(batch_format::align_up(log.size()), 0);
    r.setBaseOffset(base);
    return kj::READY_NOW;
  }

  kj::Promise<void> fetch(FetchContext call) override {
    auto params = call.getParams();
    if (params.getMaxWaitMs() == 9999) return kj::NEVER_DONE; // a broker that never answers
    const int32_t p = params.getPartition();
    auto r = call.getResults();
    if (s_.topic_deleted) {
      r.setErrorCode(static_cast<uint8_t>(errc::unknown_topic_or_partition));
      r.setErrorMessage("unknown topic t");
      return kj::READY_NOW;
    }
    s_.last_fetch_epoch = params.getCurrentLeaderEpoch();
    if (params.getCurrentLeaderEpoch() < s_.leader_epoch) {
      ++s_.fenced_fetches;
      r.setErrorCode(static_cast<uint8_t>(errc::fenced_leader_epoch));
      r.setErrorMessage("a newer leader epoch");
      return kj::READY_NOW;
    }
    r.setHighWatermark(s_.next_offset[p]);
    // Whole log each time: the consumer skips what lies below its position.
    auto& log = s_.logs[p];
    if (params.getOffset() < s_.next_offset[p]) r.setRecords(capnp::Data::Reader(log.data(), log.size()));
    return kj::READY_NOW;
  }

  kj::Promise<void> listOffsets(ListOffsetsContext call) override {
    auto params = call.getParams();
    call.getResults().setOffset(params.getTimestamp() == -2 ? 0 : s_.next_offset[params.getPartition()]);
    return kj::READY_NOW;
  }

private:
  fake_state& s_;
  kj::Vector<kj::Own<kj::PromiseFulfiller<void>>> held_;
};

// Serves fake_capstan on 127.0.0.1:<any> from its own kj thread until destroyed.
class fake_server {
public:
  // `port` 0: any free one; else that port, for a server that comes back where one stopped.
  explicit fake_server(uint16_t port = 0) {
    std::promise<uint16_t> bound;
    auto ready = bound.get_future();
    thread_ = std::thread([this, &bound, port] {
      auto io = kj::setupAsyncIo();
      auto paf = kj::newPromiseAndCrossThreadFulfiller<void>();
      {
        std::lock_guard lock(mu_);
        stop_ = kj::mv(paf.fulfiller);
      }
      capnp::TwoPartyServer server(kj::heap<fake_capstan>(state));
      auto listener =
          io.provider->getNetwork().parseAddress("127.0.0.1", port).wait(io.waitScope)->listen();
      state.port = static_cast<uint16_t>(listener->getPort());
      bound.set_value(state.port);
      paf.promise.exclusiveJoin(server.listen(*listener)).wait(io.waitScope);
    });
    ready.wait();
  }
  ~fake_server() {
    {
      std::lock_guard lock(mu_);
      stop_->fulfill();
    }
    thread_.join();
  }
  fake_server(const fake_server&) = delete;
  fake_server& operator=(const fake_server&) = delete;

  std::string address() const { return "127.0.0.1:" + std::to_string(state.port); }

  fake_state state;

private:
  std::mutex mu_;
  kj::Own<kj::CrossThreadPromiseFulfiller<void>> stop_;
  std::thread thread_;
};

// A TCP listener on 127.0.0.1 that is not a capstan client port: it either never answers (the
// kernel completes connections on its backlog, nothing reads them) or, with `reply`, sends it to
// the first connection it accepts, as an HTTP or CAF BASP server would speak first or answer.
class foreign_server {
public:
  explicit foreign_server(std::string reply = {}) : reply_(std::move(reply)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd_, 8) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port_ = ntohs(addr.sin_port);
    if (!reply_.empty()) {
      thread_ = std::thread([this] {
        int conn = ::accept(fd_, nullptr, nullptr);
        if (conn < 0) return;
        [[maybe_unused]] auto n = ::write(conn, reply_.data(), reply_.size());
        accepted_ = conn;
      });
    }
  }
  ~foreign_server() {
    ::shutdown(fd_, SHUT_RDWR); // wakes a pending accept
    if (thread_.joinable()) thread_.join();
    if (accepted_ >= 0) ::close(accepted_);
    ::close(fd_);
  }
  foreign_server(const foreign_server&) = delete;
  foreign_server& operator=(const foreign_server&) = delete;

  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

private:
  std::string reply_;
  int fd_ = -1;
  int accepted_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
};

client_config config_for(const fake_server& server) {
  client_config c;
  c.bootstrap = {"127.0.0.1:1", server.address()}; // the first is refused: the second is used
  c.request_timeout_ms = 2000;
  c.delivery_timeout_ms = 5000;
  c.retry_backoff_ms = 10;
  c.linger_ms = 2;
  return c;
}

bytes_view as_bytes(const std::string& s) {
  return bytes_view(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

bytes one_batch(const std::string& value) {
  record_batch_builder b;
  b.add(std::nullopt, as_bytes(value), 1);
  return b.build();
}

// Sends one batch of `value` to partition 0 with acks all; the future holds the outcome.
std::future<result<produce_response>> produce_async(cluster_client& client,
                                                    const std::string& value) {
  auto outcome = std::make_shared<std::promise<result<produce_response>>>();
  auto answered = outcome->get_future();
  client.produce("t", 0, -1, std::make_shared<const bytes>(one_batch(value)),
                 [outcome](result<produce_response> r) { outcome->set_value(std::move(r)); });
  return answered;
}

// A back-off far beyond the tests' waits: a call answered within one did not wait it out.
client_config with_long_backoff(client_config c) {
  c.retry_backoff_ms = 60000;
  c.delivery_timeout_ms = 120000;
  return c;
}

// A produce held by its leader (which never answers it), and a survivor whose metadata names
// that leader until the test moves it; `adjust` shapes the client's config.
struct in_flight_at_leader {
  fake_server survivor;
  std::unique_ptr<fake_server> leader = std::make_unique<fake_server>();
  std::unique_ptr<cluster_client> client;
  std::future<result<produce_response>> answered;

  explicit in_flight_at_leader(const std::function<client_config(client_config)>& adjust) {
    leader->state.leader_port = leader->state.port;
    survivor.state.leader_port = leader->state.port;
    auto connected = cluster_client::connect(adjust(config_for(survivor)));
    REQUIRE(connected);
    client = std::move(*connected);
    leader->state.produce_never_answers = true;
    answered = produce_async(*client, "v");
    REQUIRE(test::eventually([&] { return leader->state.produce_calls == 1; }, 10s));
  }
};

} // namespace

TEST_CASE("the client bootstraps past a dead address and reads metadata", "[client][cluster_client]") {
  fake_server server;
  auto client = cluster_client::connect(config_for(server));
  REQUIRE(client);
  auto md = (*client)->metadata({"t"});
  REQUIRE(md);
  CHECK(md->cluster_id == "fake");
  CHECK(md->controller_id == 1);
  REQUIRE(md->topics.count("t") == 1);
  CHECK(md->topics.at("t").partitions.size() == partitions);

  auto unknown = (*client)->metadata({"nope"});
  REQUIRE_FALSE(unknown);
  CHECK(unknown.code() == errc::unknown_topic_or_partition);
}

TEST_CASE("no reachable bootstrap address is a NETWORK_EXCEPTION, a malformed one INVALID_CONFIG",
          "[client][cluster_client]") {
  client_config c;
  c.bootstrap = {"127.0.0.1:1"};
  auto refused = cluster_client::connect(c);
  REQUIRE_FALSE(refused);
  CHECK(refused.code() == errc::network_exception);
  c.bootstrap = {"localhost"};
  auto malformed = cluster_client::connect(c);
  REQUIRE_FALSE(malformed);
  CHECK(malformed.code() == errc::invalid_config);
}

TEST_CASE("a produce answered NOT_LEADER_OR_FOLLOWER is retried after a metadata refresh",
          "[client][cluster_client]") {
  fake_server server;
  auto client = cluster_client::connect(config_for(server));
  REQUIRE(client);
  server.state.not_leader_remaining = 2;
  const int metadata_before = server.state.metadata_calls;
  auto r = (*client)->produce_sync("t", 1, 1, one_batch("v"));
  REQUIRE(r);
  CHECK(r->base_offset == offset{0});
  CHECK(server.state.produce_calls == 3);
  CHECK(server.state.metadata_calls >= metadata_before + 2);
}

// As Kafka's KafkaStorageException: on a cluster the controller moves the leadership off a replica
// whose disk failed, so the refreshed metadata leads the retry to the new leader.
TEST_CASE("a produce answered KAFKA_STORAGE_ERROR is retried after a metadata refresh while "
          "another replica can take the leadership over",
          "[client][cluster_client]") {
  fake_server server;
  server.state.replicas = 3;
  auto client = cluster_client::connect(config_for(server));
  REQUIRE(client);
  server.state.storage_error_remaining = 2;
  const int metadata_before = server.state.metadata_calls;
  auto r = (*client)->produce_sync("t", 1, 1, one_batch("v"));
  REQUIRE(r);
  CHECK(r->base_offset == offset{0});
  CHECK(server.state.produce_calls == 3);
  CHECK(server.state.metadata_calls >= metadata_before + 2);
}

// Each answer is judged by the metadata its request was routed with: the first storage error drops
// the topic from the metadata cache, and the others, answered after it, must still be retried.
TEST_CASE("produces in flight together all retry KAFKA_STORAGE_ERROR while another replica can "
          "take over",
          "[client][cluster_client]") {
  fake_server server;
  server.state.replicas = 3;
  auto client = cluster_client::connect(config_for(server));
  REQUIRE(client);
  server.state.storage_errors_together = 3;
  server.state.storage_error_remaining = 3;
  std::vector<std::future<result<produce_response>>> answers;
  for (int32_t p = 0; p < 3; ++p) {
    auto done = std::make_shared<std::promise<result<produce_response>>>();
    answers.push_back(done->get_future());
    (*client)->produce("t", p, 1, std::make_shared<const bytes>(one_batch("v")),
                       [done](result<produce_response> r) { done->set_value(std::move(r)); });
  }
  for (auto& a : answers) {
    REQUIRE(a.wait_for(30s) == std::future_status::ready);
    auto r = a.get();
    INFO((r ? std::string() : r.err().to_string()));
    CHECK(r);
  }
  CHECK(server.state.produce_calls == 6);
}

// With a single replica nothing can take over until the node is repaired: the error comes back at
// once instead of holding the caller up until delivery.timeout.ms.
TEST_CASE("a produce answered KAFKA_STORAGE_ERROR for a partition with one replica fails at once",
          "[client][cluster_client]") {
  fake_server server;
  auto client = cluster_client::connect(config_for(server));
  REQUIRE(client);
  server.state.storage_error_remaining = 2;
  auto r = (*client)->produce_sync("t", 1, 1, one_batch("v"));
  REQUIRE_FALSE(r);
  CHECK(r.code() == errc::kafka_storage_error);
  CHECK(server.state.produce_calls == 1);
}

TEST_CASE("a produce answered NOT_LEADER_OR_FOLLOWER goes to the leader the refreshed metadata names",
          "[client][cluster_client]") {
  fake_server old_leader;
  fake_server new_leader;
  old_leader.state.leader_port = old_leader.state.port;
  new_leader.state.leader_port = old_leader.state.port;
  auto client = cluster_client::connect(config_for(new_leader));
  REQUIRE(client);
  // The leadership moved after the client read its metadata.
  new_leader.state.leader_port = new_leader.state.port;
  old_leader.state.not_leader_remaining = 1000000;
  auto r = (*client)->produce_sync("t", 0, -1, one_batch("v"));
  REQUIRE(r);
  CHECK(r->base_offset == offset{0});
  CHECK(old_leader.state.produce_calls == 1);
  CHECK(new_leader.state.produce_calls == 1);
}

TEST_CASE("a produce answered NOT_LEADER_OR_FOLLOWER goes to a moved leader without waiting "
          "retry.backoff.ms",
          "[client][cluster_client]") {
  fake_server old_leader;
  fake_server new_leader;
  old_leader.state.leader_port = old_leader.state.port;
  new_leader.state.leader_port = old_leader.state.port;
  auto config = with_long_backoff(config_for(new_leader));
  auto client = cluster_client::connect(config);
  REQUIRE(client);
  new_leader.state.leader_port = new_leader.state.port;
  old_leader.state.not_leader_remaining = 1000000;
  auto answered = produce_async(**client, "v");
  REQUIRE(answered.wait_for(20s) == std::future_status::ready);
  auto r = answered.get();
  REQUIRE(r);
  CHECK(old_leader.state.produce_calls == 1);
  CHECK(new_leader.state.produce_calls == 1);
}

TEST_CASE("after NOT_LEADER_OR_FOLLOWER the client asks the node that refused for Metadata first, "
          "since another node's may not name the new leader yet",
          "[client][cluster_client]") {
  fake_server stale; // the bootstrap node, whose UpdateMetadata has not arrived yet
  fake_server old_leader;
  fake_server new_leader;
  stale.state.leader_port = old_leader.state.port;
  old_leader.state.leader_port = old_leader.state.port;
  auto client = cluster_client::connect(with_long_backoff(config_for(stale)));
  REQUIRE(client);
  // The leadership moves: the old leader knows, the bootstrap node does not yet.
  old_leader.state.not_leader_remaining = 1000000;
  old_leader.state.leader_port = new_leader.state.port;
  new_leader.state.leader_port = new_leader.state.port;
  auto answered = produce_async(**client, "v");
  REQUIRE(answered.wait_for(20s) == std::future_status::ready);
  auto r = answered.get();
  INFO((r ? std::string() : r.err().to_string()));
  REQUIRE(r);
  CHECK(old_leader.state.produce_calls == 1);
  CHECK(new_leader.state.produce_calls == 1);
}

TEST_CASE("a produce whose leader closed its connection goes to the leader the metadata names "
          "without waiting retry.backoff.ms",
          "[client][cluster_client]") {
  in_flight_at_leader f(with_long_backoff);
  // A clean stop: the leadership moved before the node closed its connections.
  f.survivor.state.leader_port = f.survivor.state.port;
  f.leader.reset();
  REQUIRE(f.answered.wait_for(20s) == std::future_status::ready);
  auto r = f.answered.get();
  INFO((r ? std::string() : r.err().to_string()));
  REQUIRE(r);
  CHECK(f.survivor.state.produce_calls == 1);
}

TEST_CASE("a connection its broker closed while idle is dropped, so a leadership that moves back "
          "to the restarted broker is followed without waiting retry.backoff.ms",
          "[client][cluster_client]") {
  // failover.sh with SIGTERM: the leadership moves from node B to A, B stops and restarts, and
  // the leadership moves back; the client must not try the connection B closed when it stopped.
  fake_server a;
  auto b = std::make_unique<fake_server>();
  const uint16_t b_port = b->state.port;
  a.state.leader_port = b_port;
  b->state.leader_port = b_port;
  auto client = cluster_client::connect(with_long_backoff(config_for(a)));
  REQUIRE(client);
  auto first = produce_async(**client, "at b");
  REQUIRE(first.wait_for(20s) == std::future_status::ready);
  REQUIRE(first.get());

  // The leadership moves to A: B refuses, the client follows the metadata to A and keeps its
  // connection to B. Then B stops and comes back on its port.
  a.state.leader_port = a.state.port;
  b->state.leader_port = a.state.port;
  b->state.not_leader_remaining = 1000000;
  auto second = produce_async(**client, "at a");
  REQUIRE(second.wait_for(20s) == std::future_status::ready);
  REQUIRE(second.get());
  REQUIRE(a.state.produce_calls == 1);
  b.reset();
  b = std::make_unique<fake_server>(b_port);

  // The client's loop reads the end of B's old connection within a turn; a second is plenty.
  std::this_thread::sleep_for(1s);
  a.state.leader_port = b_port;
  b->state.leader_port = b_port;
  a.state.not_leader_remaining = 1000000;
  auto third = produce_async(**client, "at b again");
  REQUIRE(third.wait_for(20s) == std::future_status::ready);
  auto r = third.get();
  INFO((r ? std::string() : r.err().to_string()));
  REQUIRE(r);
  CHECK(b->state.produce_calls == 1);
}

TEST_CASE("a produce in flight when its leader dies is retried at the leader the metadata names next, "
          "within delivery.timeout.ms",
          "[client][cluster_client]") {
  in_flight_at_leader f([](client_config c) {
    c.delivery_timeout_ms = 20000;
    return c;
  });
  // The leader dies with the produce in flight; until the controller names another leader, the
  // survivor's metadata still names the dead one and the client keeps retrying.
  const int metadata_before = f.survivor.state.metadata_calls;
  f.leader.reset();
  REQUIRE(test::eventually([&] { return f.survivor.state.metadata_calls >= metadata_before + 2; },
                           10s));
  CHECK(f.answered.wait_for(0s) == std::future_status::timeout);
  f.survivor.state.leader_port = f.survivor.state.port;
  REQUIRE(f.answered.wait_for(15s) == std::future_status::ready);
  auto r = f.answered.get();
  INFO((r ? std::string() : r.err().to_string()));
  REQUIRE(r);
  CHECK(r->base_offset == offset{0});
  CHECK(f.survivor.state.produce_calls == 1);
}

TEST_CASE("retries stop at delivery.timeout.ms with the last error", "[client][cluster_client]") {
  fake_server server;
  auto config = config_for(server);
  config.delivery_timeout_ms = 300;
  auto client = cluster_client::connect(config);
  REQUIRE(client);
  server.state.not_leader_remaining = 1000000;
  auto r = (*client)->produce_sync("t", 0, 1, one_batch("v"));
  REQUIRE_FALSE(r);
  CHECK(r.code() == errc::not_leader_or_follower);
}

TEST_CASE("a retry cut short by delivery.timeout.ms reports the error that caused the retry",
          "[client][cluster_client]") {
  fake_server server;
  auto config = config_for(server);
  config.delivery_timeout_ms = 300;
  config.request_timeout_ms = 30000;
  auto client = cluster_client::connect(config);
  REQUIRE(client);
  server.state.not_leader_remaining = 1;
  server.state.produce_never_answers = true;
  auto r = (*client)->produce_sync("t", 0, 1, one_batch("v"));
  REQUIRE_FALSE(r);
  CHECK(r.code() == errc::not_leader_or_follower);
}

TEST_CASE("a call without an answer fails with REQUEST_TIMED_OUT", "[client][cluster_client]") {
  fake_server server;
  auto config = config_for(server);
  config.request_timeout_ms = 200;
  auto client = cluster_client::connect(config);
  REQUIRE(client);
  auto r = (*client)->fetch_sync("t", 0, offset{0}, 1 << 20, 1, 9999);
  REQUIRE_FALSE(r);
  CHECK(r.code() == errc::request_timed_out);
}

TEST_CASE("every error code the broker names reaches the caller as that code",
          "[client][cluster_client]") {
  fake_server server;
  auto client = cluster_client::connect(config_for(server));
  REQUIRE(client);
  for (auto code : {errc::corrupt_message, errc::message_too_large, errc::invalid_request,
                    errc::invalid_required_acks, errc::invalid_partitions}) {
    server.state.produce_error = static_cast<int>(code);
    auto r = (*client)->produce_sync("t", 0, 1, one_batch("v"));
    REQUIRE_FALSE(r);
    CHECK(r.code() == code);
    CHECK(r.err().message == "refused on purpose");
  }
  // A code from a newer broker: the number survives in the text.
  server.state.produce_error = 200;
  auto r = (*client)->produce_sync("t", 0, 1, one_batch("v"));
  REQUIRE_FALSE(r);
  CHECK(r.code() == errc::unknown_server_error);
  CHECK(r.err().message.find("error code 200") != std::string::npos);
}

TEST_CASE("the producer puts keyed records on murmur2's partition with consecutive offsets, and the "
          "consumer reads them back",
          "[client][producer]") {
  fake_server server;
  auto config = config_for(server);
  config.batch_size = 512; // many batches
  // The fake server answers no initProducerId; idempotence is system_tests "[idempotence]".
  config.enable_idempotence = false;
  auto client = cluster_client::connect(config);
  REQUIRE(client);

  std::mutex mu;
  std::map<int32_t, std::vector<int64_t>> offsets;
  std::map<std::pair<int32_t, int64_t>, std::string> sent;
  int wrong_partition = 0;
  int failed = 0;
  {
    producer p(**client, config);
    for (int i = 0; i < 600; ++i) {
      const std::string key = "key-" + std::to_string(i % 17);
      const std::string value = "value-" + std::to_string(i);
      const int32_t expected = partition_for_key(as_bytes(key), partitions);
      p.send("t", as_bytes(key), as_bytes(value), std::nullopt, [&, expected, value](result<record_metadata> r) {
        std::lock_guard lock(mu);
        if (!r) {
          ++failed;
          return;
        }
        if (r->partition != expected) ++wrong_partition;
        offsets[r->partition].push_back(r->off.value());
        sent[{r->partition, r->off.value()}] = value;
      });
    }
    p.flush();
    // Keyless records stick to one partition per batch.
    for (int i = 0; i < 10; ++i) p.send("t", std::nullopt, as_bytes("x"), std::nullopt, {});
    p.flush();
  }
  CHECK(failed == 0);
  CHECK(wrong_partition == 0);
  for (auto& [partition, offs] : offsets) {
    std::sort(offs.begin(), offs.end());
    for (size_t i = 0; i < offs.size(); ++i) CHECK(offs[i] == static_cast<int64_t>(i));
  }

  consumer c(**client, config);
  REQUIRE(c.assign("t"));
  REQUIRE(c.seek_to_beginning());
  std::map<std::pair<int32_t, int64_t>, std::string> read;
  for (int i = 0; i < 20 && read.size() < 610; ++i) {
    auto records = c.poll(500ms);
    REQUIRE(records);
    for (auto& r : *records) read[{r.partition, r.off.value()}] = std::string(r.value->begin(), r.value->end());
  }
  CHECK(read.size() == 610);
  for (const auto& [where, value] : sent) CHECK(read[where] == value);

  // An unknown topic fails the send at once instead of retrying.
  producer p(**client, config);
  std::promise<errc> code;
  p.send("nope", std::nullopt, as_bytes("x"), std::nullopt,
         [&](result<record_metadata> r) { code.set_value(r.code()); });
  CHECK(code.get_future().get() == errc::unknown_topic_or_partition);
}

TEST_CASE("the consumer stops at max_records and resumes from its position", "[client][consumer]") {
  fake_server server;
  auto config = config_for(server);
  auto client = cluster_client::connect(config);
  REQUIRE(client);
  for (int i = 0; i < 5; ++i) REQUIRE((*client)->produce_sync("t", 2, 1, one_batch("r" + std::to_string(i))));

  consumer c(**client, config);
  REQUIRE(c.assign("t", {2}));
  CHECK_FALSE(c.assign("t", {7}));
  c.seek({"t", 2}, offset{1});
  auto first = c.poll(500ms, 2);
  REQUIRE(first);
  REQUIRE(first->size() == 2);
  CHECK(first->at(0).off == offset{1});
  CHECK(first->at(1).off == offset{2});
  CHECK(c.position({"t", 2}) == offset{3});
  auto rest = c.poll(500ms);
  REQUIRE(rest);
  REQUIRE(rest->size() == 2);
  CHECK(std::string(rest->at(1).value->begin(), rest->at(1).value->end()) == "r4");
  auto none = c.poll(100ms);
  REQUIRE(none);
  CHECK(none->empty());
}

TEST_CASE("a fetch names the metadata's leader epoch and, fenced by a newer one, refreshes and "
          "reads at it",
          "[client][consumer]") {
  fake_server server;
  server.state.leader_epoch = 4;
  auto config = config_for(server);
  auto client = cluster_client::connect(config);
  REQUIRE(client);
  REQUIRE((*client)->produce_sync("t", 0, 1, one_batch("r")));
  consumer c(**client, config);
  REQUIRE(c.assign("t", {0}));
  c.seek({"t", 0}, offset{0});
  auto first = c.poll(500ms);
  REQUIRE(first);
  REQUIRE(first->size() == 1);
  CHECK(server.state.last_fetch_epoch == 4);
  CHECK(server.state.fenced_fetches == 0);
  // An election the client has not heard of: its next fetch is fenced, and it reads on.
  server.state.leader_epoch = 5;
  REQUIRE((*client)->produce_sync("t", 0, 1, one_batch("s")));
  auto got = c.poll(5s);
  for (int i = 0; i < 10 && got && got->empty(); ++i) got = c.poll(1s);
  REQUIRE(got);
  REQUIRE(got->size() == 1);
  CHECK(got->at(0).off == offset{1});
  CHECK(server.state.fenced_fetches >= 1);
  CHECK(server.state.last_fetch_epoch == 5);
}

TEST_CASE("a poll ends within its timeout, with the error, while the topic's fetches keep failing",
          "[client][consumer]") {
  fake_server server;
  auto config = config_for(server);
  config.request_timeout_ms = 30000; // the bound the poll must not wait for
  auto client = cluster_client::connect(config);
  REQUIRE(client);
  consumer c(**client, config);
  REQUIRE(c.assign("t", {0}));
  c.seek({"t", 0}, offset{0});
  server.state.topic_deleted = true;
  auto polled = std::async(std::launch::async, [&] { return c.poll(300ms); });
  REQUIRE(polled.wait_for(10s) == std::future_status::ready);
  auto r = polled.get();
  REQUIRE_FALSE(r);
  CHECK(r.code() == errc::unknown_topic_or_partition);
}

TEST_CASE("a bootstrap address that is not a capstan client port is named as such without waiting for "
          "request.timeout.ms",
          "[client][cluster_client]") {
  client_config config;
  config.request_timeout_ms = 30000;
  SECTION("a peer that answers something else (HTTP, CAF's BASP)") {
    foreign_server http("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    config.bootstrap = {http.address()};
    auto connected = std::async(std::launch::async, [&] { return cluster_client::connect(config); });
    REQUIRE(connected.wait_for(10s) == std::future_status::ready);
    auto r = connected.get();
    REQUIRE_FALSE(r);
    CHECK(r.code() == errc::network_exception);
    CHECK(r.err().message.rfind(http.address() + " is not a capstan client port", 0) == 0);
  }
  SECTION("a peer that accepts the connection and stays silent") {
    foreign_server silent;
    config.bootstrap = {silent.address()};
    auto connected = std::async(std::launch::async, [&] { return cluster_client::connect(config); });
    REQUIRE(connected.wait_for(10s) == std::future_status::ready);
    auto r = connected.get();
    REQUIRE_FALSE(r);
    CHECK(r.code() == errc::network_exception);
    CHECK(r.err().message.rfind(silent.address() + " is not a capstan client port", 0) == 0);
  }
  SECTION("a short request timeout bounds the handshake too") {
    foreign_server silent;
    config.bootstrap = {silent.address()};
    config.request_timeout_ms = 100;
    auto r = cluster_client::connect(config);
    REQUIRE_FALSE(r);
    CHECK(r.err().message.find("within 100 ms") != std::string::npos);
  }
}
