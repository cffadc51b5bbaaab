// The client library against a fake Capstan server (kj only, no broker): routing, retries after
// NOT_LEADER_OR_FOLLOWER, request timeouts, the producer's partitioning and offsets, and the
// consumer reading back what was produced.

#include <catch2/catch.hpp>

#include <atomic>
#include <future>
#include <map>
#include <mutex>
#include <thread>

#include <capnp/rpc-twoparty.h>
#include <kj/async-io.h>

#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/record_batch_view.hpp"
#include "runtime/client/consumer.hpp"
#include "runtime/client/producer.hpp"
#include "schema/client.capnp.h"

using namespace capstan;
using namespace capstan::client;
using namespace std::chrono_literals;

namespace {

constexpr int32_t partitions = 3;

// What the fake broker holds; touched only on its kj thread, read by the test after stop().
struct fake_state {
  uint16_t port = 0;
  std::atomic<int> not_leader_remaining{0};
  std::atomic<int> metadata_calls{0};
  std::atomic<int> produce_calls{0};
  // Non-zero: every produce is answered with this errorCode.
  std::atomic<int> produce_error{0};
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
    brokers[0].setPort(s_.port);
    r.setControllerId(1);
    r.setClusterId("fake");
    auto topics = r.initTopics(static_cast<unsigned>(wanted.size()));
    for (unsigned i = 0; i < wanted.size(); ++i) {
      topics[i].setName(wanted[i]);
      if (wanted[i] != "t") {
        topics[i].setErrorCode(static_cast<uint8_t>(errc::unknown_topic_or_partition));
        topics[i].setErrorMessage("unknown topic " + wanted[i]);
        continue;
      }
      auto ps = topics[i].initPartitions(partitions);
      for (int32_t p = 0; p < partitions; ++p) {
        ps[p].setPartition(p);
        ps[p].setLeader(1);
        ps[p].initReplicas(1).set(0, 1);
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
};

// Serves fake_capstan on 127.0.0.1:<any> from its own kj thread until destroyed.
class fake_server {
public:
  fake_server() {
    std::promise<uint16_t> port;
    auto ready = port.get_future();
    thread_ = std::thread([this, &port] {
      auto io = kj::setupAsyncIo();
      auto paf = kj::newPromiseAndCrossThreadFulfiller<void>();
      {
        std::lock_guard lock(mu_);
        stop_ = kj::mv(paf.fulfiller);
      }
      capnp::TwoPartyServer server(kj::heap<fake_capstan>(state));
      auto listener = io.provider->getNetwork().parseAddress("127.0.0.1", 0).wait(io.waitScope)->listen();
      state.port = static_cast<uint16_t>(listener->getPort());
      port.set_value(state.port);
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
  for (auto code : {errc::corrupt_message, errc::kafka_storage_error, errc::invalid_request,
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
