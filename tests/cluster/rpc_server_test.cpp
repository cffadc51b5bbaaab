// The client RPC server against stub actors (a partition replica, the metadata actor and the
// group coordinator written below): every method over a real Cap'n Proto connection on
// 127.0.0.1, the named error for each bad input, zero-copy fetch pins, and a server that keeps
// serving after garbage and truncated frames on its port; the connection limits on both front
// doors (the Kafka listener's through raw Kafka frames).

#include "actors/gateway/rpc_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <caf/all.hpp>
#include <capnp/any.h>
#include <capnp/ez-rpc.h>
#include <catch2/catch.hpp>

#include "actors/gateway/kafka/kafka_response_frame.hpp"
#include "actors/gateway/metrics_refresher.hpp"
#include "actors/gateway/metrics_server.hpp"
#include "actors/gateway/request_validation.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/batch/record_batch_builder.hpp"
#include "runtime/batch/record_batch_view.hpp"
#include "runtime/metrics/metrics_registry.hpp"
#include "runtime/storage/fault_injection_env.hpp"
#include "runtime/storage/file_handle.hpp"
#include "schema/client.capnp.h"
#include "tests/support/caf_fixture.hpp"
#include "tests/support/raw_kafka_client.hpp"
#include "tests/support/raw_rpc_client.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace std::chrono_literals;

namespace {

// ---- stub actors ----

caf::error to_caf_error_of(errc code, std::string message) {
  return to_caf_error(make_error(code, std::move(message)));
}

// What a stub replica lets a test observe (the owner of the last fetch slice it handed out, the
// produces it received) and steer (hold produce replies until a tick_atom).
struct replica_probe {
  std::mutex mu;
  std::weak_ptr<const void> last_slice_owner;
  std::atomic<int> produces{0};
  std::atomic<bool> hold_produces{false};
};

struct stub_replica_state {
  static inline const char* name = "stub_replica";
  bytes log; // padded batch sequence
  struct entry {
    offset base;
    int32_t count;
    size_t position;
  };
  std::vector<entry> index;
  offset next{0};
  std::shared_ptr<replica_probe> probe;
  // Fetches at the log end that may wait, answered by the next append.
  std::vector<std::pair<fetch_request, caf::typed_response_promise<fetch_result>>> parked;
  // Produce replies held while probe->hold_produces, released by tick_atom.
  std::vector<std::pair<produce_result, caf::typed_response_promise<produce_result>>> held;
};

// The batches from `from` on, in a fresh aligned buffer.
fetch_result read_from(stub_replica_state& st, offset from) {
  fetch_result out{st.next, offset{0}, {}};
  for (const auto& e : st.index) {
    if (from >= e.base + e.count) continue;
    const size_t len = st.log.size() - e.position;
    const size_t words = (len + 7) / 8;
    std::shared_ptr<uint64_t[]> buffer(new uint64_t[words]);
    std::memcpy(buffer.get(), st.log.data() + e.position, len);
    auto* data = reinterpret_cast<const uint8_t*>(buffer.get());
    {
      std::lock_guard<std::mutex> guard{st.probe->mu};
      st.probe->last_slice_owner = buffer;
    }
    out.records = log_slice{std::move(buffer), data, len, e.base, st.next};
    break;
  }
  return out;
}

// Appends batches the way a leader does (base offset patched), serves fetches from a fresh
// aligned buffer, parks fetches at the log end that may wait until the next append, and answers
// OFFSET_OUT_OF_RANGE beyond the log end.
partition_replica_actor::behavior_type
stub_replica(partition_replica_actor::stateful_pointer<stub_replica_state> self,
             std::shared_ptr<replica_probe> probe) {
  self->state.probe = std::move(probe);
  return {
      [self](produce_atom, produce_request& req) -> caf::result<produce_result> {
        auto& st = self->state;
        auto view =
            record_batch_view::parse(buffer_of(req.batch).view(), size_t{1} << 30,
                                    batch_validation::produce);
        if (!view) return to_caf_error(view.err());
        const offset base = st.next;
        const size_t pos = st.log.size();
        auto in = buffer_of(req.batch).view();
        st.log.insert(st.log.end(), in.begin(), in.begin() + static_cast<long>(view->size_bytes()));
        set_base_offset(std::span<uint8_t>(st.log.data() + pos, view->size_bytes()), base);
        st.log.resize((st.log.size() + 7) / 8 * 8, 0);
        st.index.push_back({base, view->record_count(), pos});
        st.next = base + view->record_count();
        for (auto& [parked_req, rp] : st.parked) rp.deliver(read_from(st, parked_req.from));
        st.parked.clear();
        ++st.probe->produces;
        const produce_result done{base, no_timestamp, offset{0}};
        if (!st.probe->hold_produces) return done;
        auto rp = self->make_response_promise<produce_result>();
        st.held.emplace_back(done, rp);
        return rp;
      },
      [self](fetch_atom, fetch_request& req) -> caf::result<fetch_result> {
        auto& st = self->state;
        if (req.from > st.next)
          return to_caf_error_of(errc::offset_out_of_range,
                                 "offset " + std::to_string(req.from.value()) +
                                     " is above the log end " + std::to_string(st.next.value()));
        if (req.from == st.next && req.max_wait_ms > 0 && req.min_bytes > 0) {
          auto rp = self->make_response_promise<fetch_result>();
          st.parked.emplace_back(req, rp);
          return rp;
        }
        return read_from(st, req.from);
      },
      [self](offsets_atom, timestamp_ms ts) -> list_offsets_result {
        if (ts == earliest_timestamp) return {0, no_timestamp};
        if (ts == latest_timestamp) return {self->state.next.value(), no_timestamp};
        return {-1, no_timestamp};
      },
      [self](info_atom) {
        return log_info{offset{0},
                        self->state.next,
                        self->state.next,
                        static_cast<int64_t>(self->state.log.size()),
                        1,
                        offset{0}};
      },
      [self](checkpoint_atom) { return replica_checkpoint{self->state.next, self->state.next}; },
      [self](close_atom) {
        self->quit();
        return replica_checkpoint{self->state.next, self->state.next};
      },
      [self](tick_atom) {
        for (auto& [done, rp] : self->state.held) rp.deliver(done);
        self->state.held.clear();
      },
      // Replication is not this stub's business: it is a leader alone.
      [self](status_atom) {
        replica_status s;
        s.leader = true;
        s.high_watermark = s.log_end = self->state.next;
        return s;
      },
      [](become_atom, const replica_role&) { return true; },
      [](reconfig_atom, const replica_config&) {},
      [](ffetch_atom, const follower_fetch_request&) { return follower_fetch_result{}; },
      [](epochend_atom, leader_epoch, leader_epoch) { return undefined_epoch_end; },
      [](position_atom) { return follower_position{}; },
      [](ftruncate_atom, leader_epoch, epoch_end) { return truncation_decision{}; },
      [](replicate_atom, const replicate_request&) { return offset{0}; },
      [](restart_atom, leader_epoch, offset o) { return o; },
      [](isrcheck_atom) {},
  };
}

// What the stub metadata actor and the stub controller client share: the cluster the gateway
// sees, changed through the controller, read through the metadata actor.
struct stub_cluster {
  std::mutex mu;
  cluster_metadata md;
  int64_t next_producer_id = 0;

  stub_cluster() {
    md.cluster_id = "test-cluster";
    md.controller_id = 1;
    md.brokers = {broker_info{1, "127.0.0.1", 9192}};
    topic_metadata t;
    t.name = "t";
    t.id[0] = 7;
    t.partitions = {partition_assignment{0, {1}, 1, 3, {1}, {}}};
    t.configs = {{"retention.ms", "1000"}};
    md.topics["t"] = t;
  }
};

struct stub_metadata_state {
  static inline const char* name = "stub_metadata";
};

metadata_actor::behavior_type
stub_metadata(metadata_actor::stateful_pointer<stub_metadata_state>, std::shared_ptr<stub_cluster> c) {
  return {
      [c](snapshot_atom) {
        std::lock_guard lock(c->mu);
        return metadata_snapshot{std::make_shared<const cluster_metadata>(c->md)};
      },
      [c](describe_atom, const std::string& name) -> caf::result<config_map> {
        std::lock_guard lock(c->mu);
        auto it = c->md.topics.find(name);
        if (it == c->md.topics.end())
          return to_caf_error_of(errc::unknown_topic_or_partition, "no topic '" + name + "'");
        return config_map{it->second.configs};
      },
  };
}

struct stub_controller_state {
  static inline const char* name = "stub_controller_client";
};

controller_client_actor::behavior_type
stub_controller(controller_client_actor::stateful_pointer<stub_controller_state>,
                std::shared_ptr<stub_cluster> c) {
  return {
      [c](mktopic_atom, topic_spec& spec) -> caf::result<topic_metadata> {
        std::lock_guard lock(c->mu);
        auto& md = c->md;
        if (auto s = validate_topic_spec(spec, md.brokers.size()); !s) return to_caf_error(s.err());
        if (md.topics.count(spec.name))
          return to_caf_error_of(errc::topic_already_exists, "topic '" + spec.name + "' exists");
        topic_metadata t;
        t.name = spec.name;
        t.id[0] = 9;
        for (int32_t p = 0; p < spec.partitions; ++p)
          t.partitions.push_back(partition_assignment{p, {1}, 1, 0, {1}, {}});
        t.configs = spec.configs;
        md.topics[spec.name] = t;
        return t;
      },
      [c](rmtopic_atom, const std::string& name) -> caf::result<bool> {
        std::lock_guard lock(c->mu);
        if (c->md.topics.erase(name) == 0)
          return to_caf_error_of(errc::unknown_topic_or_partition, "no topic '" + name + "'");
        return true;
      },
      [c](altercfg_atom, const std::string& name, std::map<std::string, std::string>& configs,
          const std::vector<std::string>& deleted) -> caf::result<bool> {
        std::lock_guard lock(c->mu);
        auto it = c->md.topics.find(name);
        if (it == c->md.topics.end())
          return to_caf_error_of(errc::unknown_topic_or_partition, "no topic '" + name + "'");
        for (auto& [k, v] : configs) it->second.configs[k] = v;
        for (const auto& k : deleted) it->second.configs.erase(k);
        return true;
      },
      [c](mkparts_atom, const std::string& name, int32_t total) -> caf::result<bool> {
        std::lock_guard lock(c->mu);
        auto it = c->md.topics.find(name);
        if (it == c->md.topics.end())
          return to_caf_error_of(errc::unknown_topic_or_partition, "no topic '" + name + "'");
        auto& parts = it->second.partitions;
        if (total <= static_cast<int32_t>(parts.size()))
          return to_caf_error_of(errc::invalid_partitions, "not more partitions");
        for (auto p = static_cast<int32_t>(parts.size()); p < total; ++p)
          parts.push_back(partition_assignment{p, {1}, 1, 0, {1}, {}});
        return true;
      },
      // Every partition of one node is led by its preferred replica already.
      [c](elect_atom, const election_targets& wanted) {
        std::lock_guard lock(c->mu);
        election_targets targets = wanted;
        if (targets.empty())
          for (const auto& [name, t] : c->md.topics)
            for (const auto& p : t.partitions) targets.push_back(election_target{name, p.partition});
        election_outcomes out;
        for (const auto& t : targets) {
          auto it = c->md.topics.find(t.topic);
          const bool known = it != c->md.topics.end() && t.partition >= 0 &&
                             static_cast<size_t>(t.partition) < it->second.partitions.size();
          out.push_back(election_outcome{
              t.topic, t.partition,
              known ? errc::election_not_needed : errc::unknown_topic_or_partition, {}});
        }
        return out;
      },
      [](reassign_atom, const reassignment_items&) -> caf::result<election_outcomes> {
        return to_caf_error_of(errc::invalid_request, "not in this stub");
      },
      [](unregister_atom, int32_t) -> caf::result<bool> {
        return to_caf_error_of(errc::invalid_request, "not in this stub");
      },
      // Node 1 is the one voter.
      [](add_voter_atom, int32_t node, const std::string&) -> caf::result<bool> {
        if (node == 1) return to_caf_error_of(errc::duplicate_voter, "node 1 is a voter already");
        return true;
      },
      [](remove_voter_atom, int32_t node) -> caf::result<bool> {
        if (node != 1) return to_caf_error_of(errc::voter_not_found, "no voter");
        return true;
      },
      [c](initpid_atom) -> int64_t {
        std::lock_guard lock(c->mu);
        return c->next_producer_id++;
      },
      [](descquorum_atom) { return cluster_description_ptr{}; },
      [](cretry_atom, uint64_t) {},
  };
}

struct stub_groups_state {
  static inline const char* name = "stub_groups";
  std::map<std::tuple<std::string, std::string, int32_t>, group_offset> committed;
};

group_coordinator_actor::behavior_type
stub_groups(group_coordinator_actor::stateful_pointer<stub_groups_state> self) {
  return {
      [self](commit_atom, const std::string& group, group_member_ref&, group_offsets& offsets) {
        for (auto& o : offsets) self->state.committed[{group, o.topic, o.partition}] = o;
        return offsets;
      },
      // One member, "m-1", in generation 1, which leads and is assigned what it syncs first.
      [](joingrp_atom, const std::string&, join_group_request& req) {
        join_group_response r;
        if (req.member_id.empty()) {
          r.error = errc::member_id_required;
          r.member_id = "m-1";
          return r;
        }
        r.generation = 1;
        r.protocol_name = req.protocols.front().name;
        r.leader = r.member_id = req.member_id;
        r.members.push_back({req.member_id, req.group_instance_id, req.protocols.front().metadata});
        return r;
      },
      [](syncgrp_atom, const std::string&, sync_group_request& req) {
        if (req.generation != 1) return sync_group_response{errc::illegal_generation, "not 1", {}};
        return sync_group_response{errc::none, {}, req.assignments.empty() ? bytes{} : req.assignments.front().assignment};
      },
      [](beat_atom, const std::string&, group_member_ref& m) -> caf::result<bool> {
        if (m.generation != 1) return to_caf_error(make_error(errc::illegal_generation, "not 1"));
        return true;
      },
      [](leavegrp_atom, const std::string&, group_member_ref&) { return true; },
      [](descgrp_atom, const std::string&) {
        return group_summary{"Stable", "consumer", "range", 1, "m-1", {{"m-1", "", "c", {}}}};
      },
      [](delgrp_atom, const std::string& group) -> caf::result<bool> {
        if (group == "busy") return to_caf_error(make_error(errc::group_not_empty, "has members"));
        return true;
      },
      [self](fetch_atom, const std::string& group, group_offsets& wanted) {
        for (auto& o : wanted) {
          auto it = self->state.committed.find({group, o.topic, o.partition});
          if (it != self->state.committed.end()) o = it->second;
        }
        return wanted;
      },
      [self](lsgroups_atom) {
        std::vector<std::string> out;
        for (const auto& [key, o] : self->state.committed) out.push_back(std::get<0>(key));
        out.erase(std::unique(out.begin(), out.end()), out.end());
        return out;
      },
      [](gtick_atom) {},
  };
}

// ---- fixture ----

struct rpc_fixture {
  test::threaded_system ts;
  std::shared_ptr<metrics_registry> metrics = std::make_shared<metrics_registry>();
  std::shared_ptr<replica_probe> probe = std::make_shared<replica_probe>();
  partition_replica_actor replica;
  std::shared_ptr<stub_cluster> cluster = std::make_shared<stub_cluster>();
  metadata_actor metadata;
  std::shared_ptr<const routing_table> table;
  std::unique_ptr<rpc_server> server;

  // `kafka`: also a Kafka listener on a free port of 127.0.0.1 (kafka_port()).
  explicit rpc_fixture(rpc_limits limits = {}, std::shared_ptr<node_fault_switch> faults = {},
                       bool kafka = false) {
    replica = ts.spawn(stub_replica, probe);
    table = std::make_shared<const routing_table>(routing_table{{{"t", 0}, replica}});
    metadata = ts.spawn(stub_metadata, cluster);
    rpc_targets targets{metadata,
                        ts.spawn(stub_groups),
                        [this] { return std::atomic_load(&table); },
                        metrics,
                        {},
                        ts.spawn(stub_controller, cluster),
                        std::move(faults)};
    std::optional<kafka_listen_address> kafka_at;
    if (kafka) kafka_at = kafka_listen_address{"127.0.0.1", 0};
    auto started =
        rpc_server::start(ts.sys(), std::move(targets), "127.0.0.1", 0, limits, kafka_at);
    REQUIRE(started.ok());
    server = std::move(*started);
  }
  ~rpc_fixture() {
    if (server) server->stop();
  }

  uint16_t port() const { return server->port(); }
  uint16_t kafka_port() const { return server->kafka_port(); }

  // The value of the series `series` (name and labels as rendered), -1 if absent.
  int64_t metric(const std::string& series) const {
    const auto text = metrics->render();
    const auto at = text.find("\n" + series + " ");
    if (at == std::string::npos) return -1;
    return std::stoll(text.substr(at + series.size() + 2));
  }
};

// Waits (bounded) until `done()` holds, turning `ws`'s event loop meanwhile.
template <class F>
bool poll_until(kj::WaitScope& ws, F done, std::chrono::milliseconds bound = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + bound;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    ws.poll();
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

capnp::ReaderOptions client_options() {
  capnp::ReaderOptions options;
  options.traversalLimitInWords = rpc_traversal_limit_words;
  return options;
}

bytes make_batch(int records = 3, size_t value_size = 10) {
  record_batch_builder builder(offset{0}, 1000);
  for (int i = 0; i < records; ++i)
    builder.add("k" + std::to_string(i), std::string(value_size, 'v'), 1000 + i);
  return builder.build();
}

capnp::Data::Reader data_of(const bytes& b) {
  return capnp::Data::Reader(b.data(), b.size());
}

errc code_of(uint8_t v) {
  return static_cast<errc>(v);
}

// Produces `batch` to topic/partition; returns the response's error code and base offset.
std::pair<errc, int64_t> produce(capnp::EzRpcClient& client, const std::string& topic,
                                 int32_t partition, const bytes& batch, int16_t acks = 1) {
  auto cap = client.getMain<rpc::Capstan>();
  auto req = cap.produceRequest();
  req.setTopic(topic);
  req.setPartition(partition);
  req.setAcks(acks);
  req.setTimeoutMs(1000);
  req.setRecords(data_of(batch));
  auto resp = req.send().wait(client.getWaitScope());
  return {code_of(resp.getErrorCode()), resp.getBaseOffset()};
}

// A Cap'n Proto request is sent once; these build a fresh one per call.
using capstan_client = rpc::Capstan::Client;

capnp::Response<rpc::Capstan::FetchResults> fetch_call(capstan_client& cap, kj::WaitScope& ws,
                                                       int64_t from, int32_t max_bytes = 1 << 20,
                                                       int32_t max_wait_ms = 100) {
  auto req = cap.fetchRequest();
  req.setTopic("t");
  req.setPartition(0);
  req.setOffset(from);
  req.setMaxBytes(max_bytes);
  req.setMinBytes(1);
  req.setMaxWaitMs(max_wait_ms);
  return req.send().wait(ws);
}

capnp::Response<rpc::Capstan::ListOffsetsResults>
list_offsets_call(capstan_client& cap, kj::WaitScope& ws, int64_t timestamp) {
  auto req = cap.listOffsetsRequest();
  req.setTopic("t");
  req.setPartition(0);
  req.setTimestamp(timestamp);
  return req.send().wait(ws);
}

capnp::Response<rpc::Capstan::CreateTopicResults>
create_call(capstan_client& cap, kj::WaitScope& ws, const std::string& name, int32_t partitions) {
  auto req = cap.createTopicRequest();
  req.setName(name);
  req.setPartitions(partitions);
  req.setReplicationFactor(1);
  return req.send().wait(ws);
}

errc describe_call(capstan_client& cap, kj::WaitScope& ws, const std::string& topic,
                   std::string* value = nullptr) {
  auto req = cap.describeConfigsRequest();
  req.setTopic(topic);
  auto resp = req.send().wait(ws);
  if (value != nullptr && resp.getConfigs().size() > 0) *value = resp.getConfigs()[0].getValue();
  return code_of(resp.getErrorCode());
}

errc delete_call(capstan_client& cap, kj::WaitScope& ws, const std::string& name) {
  auto req = cap.deleteTopicRequest();
  req.setName(name);
  return code_of(req.send().wait(ws).getErrorCode());
}

capnp::Response<rpc::Capstan::CommitOffsetsResults>
commit_call(capstan_client& cap, kj::WaitScope& ws, const std::string& group,
            const std::string& topic, int64_t offset) {
  auto req = cap.commitOffsetsRequest();
  req.setGroup(group);
  auto offsets = req.initOffsets(1);
  offsets[0].setTopic(topic);
  offsets[0].setPartition(0);
  offsets[0].setOffset(offset);
  offsets[0].setMetadata("m");
  return req.send().wait(ws);
}

// Sets pointer field `field` of `params` to a list of `n` empty structs, which Cap'n Proto
// encodes in one tag word whatever n is; read as any struct list, each entry is all defaults.
template <class Params>
void set_empty_entries(Params params, unsigned field, unsigned n) {
  capnp::MallocMessageBuilder list;
  list.initRoot<capnp::AnyPointer>().initAs<capnp::List<rpc::Capstan::ListTopicsParams>>(n);
  capnp::AnyStruct::Builder any(kj::mv(params));
  any.getPointerSection()[field].set(list.getRoot<capnp::AnyPointer>().asReader());
}

int raw_connect(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  return fd;
}

// Writes `data` raw, then waits (bounded) for the server to close the connection or closes it.
void send_raw(uint16_t port, const std::vector<uint8_t>& data, bool wait_for_close) {
  int fd = raw_connect(port);
  ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
  if (wait_for_close) {
    char buf[256];
    while (::recv(fd, buf, sizeof buf, 0) > 0) {
    }
  }
  ::close(fd);
}

} // namespace

TEST_CASE("rpc server: produce, fetch and listOffsets round trip through the replica",
          "[gateway][rpc]") {
  rpc_fixture f;
  capnp::EzRpcClient client("127.0.0.1", f.port(), client_options());
  auto& ws = client.getWaitScope();
  auto cap = client.getMain<rpc::Capstan>();

  auto first = make_batch(3);
  auto second = make_batch(2, 100);
  CHECK(produce(client, "t", 0, first) == std::pair{errc::none, int64_t{0}});
  CHECK(produce(client, "t", 0, second) == std::pair{errc::none, int64_t{3}});

  auto resp = fetch_call(cap, ws, 0);
  CHECK(resp.getErrorCode() == 0);
  CHECK(resp.getHighWatermark() == 5);
  auto data = resp.getRecords();
  batch_sequence_reader reader(bytes_view{data.begin(), data.size()}, size_t{1} << 20);
  std::vector<int64_t> bases;
  for (;;) {
    auto next = reader.next();
    REQUIRE(next.ok());
    if (!*next) break;
    bases.push_back((*next)->base_offset().value());
  }
  CHECK(bases == std::vector<int64_t>{0, 3});

  // The slice's owner is pinned until the response was written, then released.
  std::weak_ptr<const void> owner;
  {
    std::lock_guard<std::mutex> guard{f.probe->mu};
    owner = f.probe->last_slice_owner;
  }
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!owner.expired() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  CHECK(owner.expired());

  auto latest = list_offsets_call(cap, ws, -1);
  CHECK(latest.getErrorCode() == 0);
  CHECK(latest.getOffset() == 5);
  CHECK(list_offsets_call(cap, ws, -2).getOffset() == 0);

  auto text = f.metrics->render();
  CHECK(text.find("capstan_rpc_requests_total{method=\"produce\"} 2") != std::string::npos);
  CHECK(text.find("capstan_rpc_requests_total{method=\"fetch\"} 1") != std::string::npos);
  CHECK(text.find("capstan_rpc_request_latency_seconds_count{method=\"produce\"} 2") !=
        std::string::npos);
  CHECK(text.find("capstan_bytes_in_total " + std::to_string(first.size() + second.size())) !=
        std::string::npos);
  CHECK(text.find("capstan_bytes_out_total") != std::string::npos);
}

TEST_CASE("rpc server: metadata, topic admin and configs go to the metadata actor",
          "[gateway][rpc]") {
  rpc_fixture f;
  capnp::EzRpcClient client("127.0.0.1", f.port(), client_options());
  auto& ws = client.getWaitScope();
  auto cap = client.getMain<rpc::Capstan>();

  auto md = cap.metadataRequest();
  md.setAllTopics(true);
  auto all = md.send().wait(ws);
  CHECK(all.getClusterId() == "test-cluster");
  CHECK(all.getControllerId() == 1);
  REQUIRE(all.getBrokers().size() == 1);
  CHECK(all.getBrokers()[0].getPort() == 9192);
  REQUIRE(all.getTopics().size() == 1);
  auto t = all.getTopics()[0];
  CHECK(t.getName() == "t");
  CHECK(t.getTopicId().size() == 16);
  REQUIRE(t.getPartitions().size() == 1);
  CHECK(t.getPartitions()[0].getLeader() == 1);
  CHECK(t.getPartitions()[0].getLeaderEpoch() == 3);
  CHECK(t.getPartitions()[0].getIsr().size() == 1);
  CHECK(t.getPartitions()[0].getOffline().size() == 0);

  auto some = cap.metadataRequest();
  auto names = some.initTopics(3);
  names.set(0, "t");
  names.set(1, "missing");
  names.set(2, "bad name");
  auto r = some.send().wait(ws);
  REQUIRE(r.getTopics().size() == 3);
  CHECK(r.getTopics()[0].getErrorCode() == 0);
  CHECK(code_of(r.getTopics()[1].getErrorCode()) == errc::unknown_topic_or_partition);
  CHECK(code_of(r.getTopics()[2].getErrorCode()) == errc::invalid_topic_exception);

  auto created = create_call(cap, ws, "orders", 2);
  CHECK(created.getErrorCode() == 0);
  CHECK(created.getTopicId().size() == 16);
  CHECK(code_of(create_call(cap, ws, "orders", 2).getErrorCode()) == errc::topic_already_exists);
  auto bad = create_call(cap, ws, "bad/name", 2);
  CHECK(code_of(bad.getErrorCode()) == errc::invalid_topic_exception);
  CHECK(bad.getErrorMessage().size() > 0);
  CHECK(code_of(create_call(cap, ws, "x", 0).getErrorCode()) == errc::invalid_partitions);

  auto list = cap.listTopicsRequest().send().wait(ws);
  REQUIRE(list.getTopics().size() == 2);
  CHECK(list.getTopics()[0] == "orders");

  auto alter = cap.alterConfigsRequest();
  alter.setTopic("orders");
  auto entries = alter.initConfigs(1);
  entries[0].setName("retention.ms");
  entries[0].setValue("5000");
  CHECK(alter.send().wait(ws).getErrorCode() == 0);
  std::string value;
  CHECK(describe_call(cap, ws, "orders", &value) == errc::none);
  CHECK(value == "5000");
  CHECK(describe_call(cap, ws, "missing") == errc::unknown_topic_or_partition);

  CHECK(delete_call(cap, ws, "orders") == errc::none);
  CHECK(delete_call(cap, ws, "orders") == errc::unknown_topic_or_partition);
  CHECK(delete_call(cap, ws, "..") == errc::invalid_topic_exception);
}

TEST_CASE("rpc server: createPartitions grows a single node's topic and electLeaders finds "
          "every leader preferred already",
          "[gateway][rpc]") {
  rpc_fixture f;
  capnp::EzRpcClient client("127.0.0.1", f.port(), client_options());
  auto& ws = client.getWaitScope();
  auto cap = client.getMain<rpc::Capstan>();
  auto grow = [&](const char* topic, int32_t total) {
    auto req = cap.createPartitionsRequest();
    req.setTopic(topic);
    req.setTotalCount(total);
    return code_of(req.send().wait(ws).getErrorCode());
  };
  CHECK(grow("t", 3) == errc::none);
  CHECK(grow("t", 2) == errc::invalid_partitions);
  CHECK(grow("missing", 2) == errc::unknown_topic_or_partition);
  CHECK(grow("bad name", 2) == errc::invalid_topic_exception);

  auto all = cap.electLeadersRequest().send().wait(ws);
  CHECK(all.getErrorCode() == 0);
  REQUIRE(all.getResults().size() == 3);
  for (auto r : all.getResults()) {
    CHECK(r.getTopic() == "t");
    CHECK(code_of(r.getErrorCode()) == errc::election_not_needed);
  }
  auto some = cap.electLeadersRequest();
  auto wanted = some.initPartitions(2);
  wanted[0].setTopic("t");
  wanted[0].setPartition(2);
  wanted[1].setTopic("t");
  wanted[1].setPartition(5);
  auto answer = some.send().wait(ws);
  REQUIRE(answer.getResults().size() == 2);
  CHECK(answer.getResults()[0].getPartition() == 2);
  CHECK(code_of(answer.getResults()[0].getErrorCode()) == errc::election_not_needed);
  CHECK(code_of(answer.getResults()[1].getErrorCode()) == errc::unknown_topic_or_partition);
}

TEST_CASE("rpc server: addVoter and removeVoter refuse a bad id or endpoint with INVALID_REQUEST "
          "and pass the controller's answer on",
          "[gateway][rpc][voters]") {
  rpc_fixture f;
  capnp::EzRpcClient client("127.0.0.1", f.port(), client_options());
  auto& ws = client.getWaitScope();
  auto cap = client.getMain<rpc::Capstan>();
  auto add = [&](int32_t node, const char* endpoint) {
    auto req = cap.addVoterRequest();
    req.setNodeId(node);
    req.setEndpoint(endpoint);
    auto r = req.send().wait(ws);
    return std::make_pair(code_of(r.getErrorCode()), std::string(r.getErrorMessage().cStr()));
  };
  for (const char* bad : {"", "localhost", "localhost:", ":9093", "localhost:0", "localhost:65536",
                          "localhost:x", "PLAINTEXT://localhost:9093"}) {
    INFO(bad);
    auto [code, message] = add(2, bad);
    CHECK(code == errc::invalid_request);
    CHECK(message.find("voter endpoint") != std::string::npos);
  }
  CHECK(add(-1, "localhost:9093").first == errc::invalid_request);
  CHECK(add(2, "localhost:9093").first == errc::none);
  CHECK(add(2, "[::1]:9093").first == errc::none);
  CHECK(add(1, "localhost:9093").first == errc::duplicate_voter);

  auto remove = [&](int32_t node) {
    auto req = cap.removeVoterRequest();
    req.setNodeId(node);
    return code_of(req.send().wait(ws).getErrorCode());
  };
  CHECK(remove(-1) == errc::invalid_request);
  CHECK(remove(7) == errc::voter_not_found);
  CHECK(remove(1) == errc::none);
}

TEST_CASE("rpc server: initProducerId answers the controller client's id with epoch 0 and refuses "
          "a transactional id",
          "[gateway][rpc][producer]") {
  rpc_fixture f;
  capnp::EzRpcClient client("127.0.0.1", f.port(), client_options());
  auto& ws = client.getWaitScope();
  auto cap = client.getMain<rpc::Capstan>();
  for (int64_t expected : {0, 1}) {
    auto r = cap.initProducerIdRequest().send().wait(ws);
    CHECK(r.getErrorCode() == 0);
    CHECK(r.getProducerId() == expected);
    CHECK(r.getProducerEpoch() == 0);
  }
  auto req = cap.initProducerIdRequest();
  req.setTransactionalId("tx-1");
  auto refused = req.send().wait(ws);
  CHECK(refused.getErrorCode() == static_cast<uint8_t>(errc::invalid_request));
  CHECK(refused.getProducerId() == -1);
  CHECK(refused.getProducerEpoch() == -1);
}

TEST_CASE("rpc server: injectFault is refused with POLICY_VIOLATION on a node without a fault "
          "switch",
          "[gateway][rpc][fault]") {
  rpc_fixture f;
  capnp::EzRpcClient client("127.0.0.1", f.port(), client_options());
  auto& ws = client.getWaitScope();
  auto cap = client.getMain<rpc::Capstan>();
  for (auto kind :
       {rpc::FaultKind::CLEAR, rpc::FaultKind::ISOLATE, rpc::FaultKind::DROP_OUTGOING,
        rpc::FaultKind::DROP_INCOMING, rpc::FaultKind::DROP_PRODUCE_RESPONSES,
        rpc::FaultKind::DROP_CONTROL, rpc::FaultKind::DELAY_CONTROL, rpc::FaultKind::DISK_FULL}) {
    auto req = cap.injectFaultRequest();
    req.setFault(kind);
    req.initPeers(1).set(0, 2);
    req.setCount(1);
    auto r = req.send().wait(ws);
    CHECK(r.getErrorCode() == static_cast<uint8_t>(errc::policy_violation));
    CHECK(std::string(r.getErrorMessage()).find("fault.injection.enable") != std::string::npos);
  }
}

TEST_CASE("rpc server: injectFault's disk faults refuse another kind's fields, fail the node's "
          "data dir until clear, and an unknown kind is refused",
          "[gateway][rpc][fault]") {
  test::temp_dir dir;
  fault_injection_env env;
  scoped_storage_env installed(env);
  const auto data = dir / "node-1";
  REQUIRE(make_directories(data));
  rpc_fixture f({}, std::make_shared<node_fault_switch>(node_id{1}, env, data.string()));
  capnp::EzRpcClient client("127.0.0.1", f.port(), client_options());
  auto& ws = client.getWaitScope();
  auto cap = client.getMain<rpc::Capstan>();
  const auto inject = [&](rpc::FaultKind kind, auto&& set) {
    auto req = cap.injectFaultRequest();
    req.setFault(kind);
    set(req);
    auto r = req.send().wait(ws);
    return std::make_pair(code_of(r.getErrorCode()), std::string(r.getErrorMessage()));
  };
  const auto creates = [&](const std::string& name) {
    return file_handle::open(data / name, file_mode::create_new).ok();
  };

  using request = capnp::Request<rpc::Capstan::InjectFaultParams, rpc::Capstan::InjectFaultResults>;
  for (const auto& stray : std::vector<std::function<void(request&)>>{
           [](request& r) { r.initPeers(1).set(0, 2); }, [](request& r) { r.setCount(1); },
           [](request& r) { r.setProbability(0.5); }, [](request& r) { r.setDelayMs(10); }}) {
    for (auto kind : {rpc::FaultKind::DISK_FULL, rpc::FaultKind::DISK_READ_ONLY,
                      rpc::FaultKind::DISK_IO_ERROR}) {
      auto [code, message] = inject(kind, stray);
      CHECK(code == errc::invalid_request);
      CHECK(message.find("a disk fault takes no") != std::string::npos);
    }
  }
  CHECK(creates("before"));

  for (auto kind : {rpc::FaultKind::DISK_FULL, rpc::FaultKind::DISK_READ_ONLY,
                    rpc::FaultKind::DISK_IO_ERROR}) {
    CHECK(inject(kind, [](request&) {}).first == errc::none);
    CHECK_FALSE(creates("during"));
    CHECK(inject(rpc::FaultKind::CLEAR, [](request&) {}).first == errc::none);
    CHECK(creates("after-" + std::to_string(static_cast<int>(kind))));
  }

  auto [code, message] = inject(static_cast<rpc::FaultKind>(200), [](request&) {});
  CHECK(code == errc::invalid_request);
  CHECK(message.find("unknown fault kind") != std::string::npos);
}

TEST_CASE("rpc server: committed group offsets are fetched back", "[gateway][rpc]") {
  rpc_fixture f;
  capnp::EzRpcClient client("127.0.0.1", f.port(), client_options());
  auto& ws = client.getWaitScope();
  auto cap = client.getMain<rpc::Capstan>();

  auto committed = commit_call(cap, ws, "g", "t", 42);
  CHECK(committed.getErrorCode() == 0);
  REQUIRE(committed.getResults().size() == 1);

  auto fetch = cap.fetchOffsetsRequest();
  fetch.setGroup("g");
  auto parts = fetch.initPartitions(2);
  parts[0].setTopic("t");
  parts[0].setPartition(0);
  parts[1].setTopic("t");
  parts[1].setPartition(1);
  auto got = fetch.send().wait(ws);
  REQUIRE(got.getOffsets().size() == 2);
  CHECK(got.getOffsets()[0].getOffset() == 42);
  CHECK(got.getOffsets()[0].getMetadata() == "m");
  CHECK(got.getOffsets()[1].getOffset() == -1);

  CHECK(code_of(commit_call(cap, ws, "", "t", 1).getErrorCode()) == errc::invalid_request);
  CHECK(code_of(commit_call(cap, ws, "g", "bad name", 1).getErrorCode()) ==
        errc::invalid_topic_exception);
  CHECK(code_of(commit_call(cap, ws, "g", "t", -7).getErrorCode()) == errc::offset_out_of_range);
}

TEST_CASE("rpc server: joinGroup, syncGroup, heartbeat, leaveGroup, describeGroup and deleteGroup reach "
          "the coordinator and bad membership input is INVALID_REQUEST",
          "[gateway][rpc]") {
  rpc_fixture f;
  capnp::EzRpcClient client("127.0.0.1", f.port(), client_options());
  auto& ws = client.getWaitScope();
  auto cap = client.getMain<rpc::Capstan>();
  auto join = [&](const std::string& group, const std::string& member, const std::string& type,
                  const std::vector<std::string>& protocols, int32_t rebalance_ms) {
    auto req = cap.joinGroupRequest();
    req.setGroup(group);
    req.setMemberId(member);
    req.setClientId("c");
    req.setSessionTimeoutMs(10000);
    req.setRebalanceTimeoutMs(rebalance_ms);
    req.setProtocolType(type);
    auto list = req.initProtocols(static_cast<unsigned>(protocols.size()));
    for (unsigned i = 0; i < list.size(); ++i) {
      list[i].setName(protocols[i]);
      list[i].setMetadata(capnp::Data::Reader(reinterpret_cast<const uint8_t*>("sub"), 3));
    }
    return req.send().wait(ws);
  };

  auto first = join("g", "", "consumer", {"range"}, 1000);
  CHECK(code_of(first.getErrorCode()) == errc::member_id_required);
  CHECK(std::string(first.getMemberId().cStr()) == "m-1");
  auto joined = join("g", "m-1", "consumer", {"range"}, 1000);
  CHECK(joined.getErrorCode() == 0);
  CHECK(joined.getGeneration() == 1);
  CHECK(std::string(joined.getProtocolName().cStr()) == "range");
  REQUIRE(joined.getMembers().size() == 1);
  CHECK(joined.getMembers()[0].getMetadata().size() == 3);

  auto sync = cap.syncGroupRequest();
  sync.setGroup("g");
  sync.setMemberId("m-1");
  sync.setGeneration(1);
  auto assignment = sync.initAssignments(1);
  assignment[0].setMemberId("m-1");
  assignment[0].setAssignment(capnp::Data::Reader(reinterpret_cast<const uint8_t*>("p0"), 2));
  auto synced = sync.send().wait(ws);
  CHECK(synced.getErrorCode() == 0);
  CHECK(synced.getAssignment().size() == 2);

  auto beat = [&](int32_t generation) {
    auto req = cap.heartbeatRequest();
    req.setGroup("g");
    req.setMemberId("m-1");
    req.setGeneration(generation);
    return code_of(req.send().wait(ws).getErrorCode());
  };
  CHECK(beat(1) == errc::none);
  CHECK(beat(2) == errc::illegal_generation);
  auto leave = cap.leaveGroupRequest();
  leave.setGroup("g");
  leave.setMemberId("m-1");
  CHECK(leave.send().wait(ws).getErrorCode() == 0);

  // Refused by the gateway before they reach the coordinator.
  CHECK(code_of(join("", "", "consumer", {"range"}, 1000).getErrorCode()) == errc::invalid_request);
  CHECK(code_of(join("g", "", "", {"range"}, 1000).getErrorCode()) == errc::invalid_request);
  CHECK(code_of(join("g", "", "consumer", {}, 1000).getErrorCode()) == errc::invalid_request);
  CHECK(code_of(join("g", "", "consumer", {""}, 1000).getErrorCode()) == errc::invalid_request);
  CHECK(code_of(join("g", "", "consumer", {"range"}, 0).getErrorCode()) == errc::invalid_request);
  auto long_id = join("g", std::string(2000, 'm'), "consumer", {"range"}, 1000);
  CHECK(code_of(long_id.getErrorCode()) == errc::invalid_request);
  CHECK(std::string(long_id.getErrorMessage().cStr()).find("member id") != std::string::npos);
  auto bad_beat = cap.heartbeatRequest();
  bad_beat.setGroup("");
  CHECK(code_of(bad_beat.send().wait(ws).getErrorCode()) == errc::invalid_request);
  // The server keeps serving.
  CHECK(beat(1) == errc::none);

  auto describe = cap.describeGroupRequest();
  describe.setGroup("g");
  auto described = describe.send().wait(ws);
  CHECK(described.getErrorCode() == 0);
  CHECK(std::string(described.getState().cStr()) == "Stable");
  REQUIRE(described.getMembers().size() == 1);
  CHECK(std::string(described.getMembers()[0].getClientId().cStr()) == "c");
  auto bad_describe = cap.describeGroupRequest();
  bad_describe.setGroup(std::string(300, 'g'));
  CHECK(code_of(bad_describe.send().wait(ws).getErrorCode()) == errc::invalid_request);

  auto remove = [&](const std::string& group) {
    auto req = cap.deleteGroupRequest();
    req.setGroup(group);
    return code_of(req.send().wait(ws).getErrorCode());
  };
  CHECK(remove("g") == errc::none);
  CHECK(remove("busy") == errc::group_not_empty);
  CHECK(remove("") == errc::invalid_request);
}

TEST_CASE("rpc server: each bad input gets its named error and the server keeps serving",
          "[gateway][rpc]") {
  rpc_fixture f;
  capnp::EzRpcClient client("127.0.0.1", f.port(), client_options());
  auto& ws = client.getWaitScope();
  auto cap = client.getMain<rpc::Capstan>();
  auto good = make_batch();

  SECTION("malformed batch bytes") {
    bytes junk(200, 0x5a);
    CHECK(produce(client, "t", 0, junk).first == errc::corrupt_message);
  }
  SECTION("wrong CRC") {
    auto bad = good;
    bad.back() ^= 0x40;
    CHECK(produce(client, "t", 0, bad).first == errc::corrupt_message);
  }
  SECTION("two batches in one produce") {
    auto two = good;
    two.resize((two.size() + 7) / 8 * 8, 0);
    two.insert(two.end(), good.begin(), good.end());
    CHECK(produce(client, "t", 0, two).first == errc::corrupt_message);
  }
  SECTION("oversized batch") {
    auto big = make_batch(1, max_produce_batch_bytes + 1);
    CHECK(produce(client, "t", 0, big).first == errc::message_too_large);
  }
  SECTION("unknown topic and partition") {
    CHECK(produce(client, "nope", 0, good).first == errc::unknown_topic_or_partition);
    CHECK(produce(client, "t", 7, good).first == errc::unknown_topic_or_partition);
    CHECK(produce(client, "t", -1, good).first == errc::unknown_topic_or_partition);
  }
  SECTION("invalid topic name") {
    CHECK(produce(client, "no spaces", 0, good).first == errc::invalid_topic_exception);
    CHECK(produce(client, std::string(250, 'a'), 0, good).first == errc::invalid_topic_exception);
  }
  SECTION("acks=5") {
    CHECK(produce(client, "t", 0, good, 5).first == errc::invalid_required_acks);
  }
  SECTION("negative and out-of-range fetch offsets") {
    auto neg = fetch_call(cap, ws, -1);
    CHECK(code_of(neg.getErrorCode()) == errc::offset_out_of_range);
    CHECK(neg.getErrorMessage().size() > 0);
    auto beyond = fetch_call(cap, ws, 1000);
    CHECK(code_of(beyond.getErrorCode()) == errc::offset_out_of_range);
    CHECK(std::string(beyond.getErrorMessage().cStr()).find("above the log end") !=
          std::string::npos);
    CHECK(code_of(fetch_call(cap, ws, 0, 0).getErrorCode()) == errc::invalid_request);
    CHECK(code_of(fetch_call(cap, ws, 0, 1000, -1).getErrorCode()) == errc::invalid_request);
  }
  SECTION("bad listOffsets timestamp") {
    CHECK(code_of(list_offsets_call(cap, ws, -5).getErrorCode()) == errc::invalid_request);
  }
  SECTION("a replica that is gone") {
    caf::anon_send_exit(f.replica, caf::exit_reason::kill);
    auto deadline = std::chrono::steady_clock::now() + 5s;
    errc code = errc::none;
    while (code != errc::unknown_topic_or_partition && std::chrono::steady_clock::now() < deadline)
      code = produce(client, "t", 0, good).first;
    CHECK(code == errc::unknown_topic_or_partition);
  }

  // The same connection still works.
  auto md = cap.metadataRequest();
  md.setAllTopics(true);
  CHECK(md.send().wait(ws).getTopics().size() == 1);
  CHECK(f.metrics->render().find("capstan_rpc_errors_total{method=") != std::string::npos);
}

TEST_CASE("rpc server: a request list of more than max_request_list_entries is refused unread",
          "[gateway][rpc]") {
  rpc_fixture f;
  capnp::EzRpcClient client("127.0.0.1", f.port(), client_options());
  auto& ws = client.getWaitScope();
  auto cap = client.getMain<rpc::Capstan>();
  constexpr auto n = static_cast<unsigned>(max_request_list_entries + 1);
  auto names = [](capnp::Text::Reader message, const char* list) {
    return std::string(message.cStr()).find(list) != std::string::npos;
  };

  auto create = cap.createTopicRequest();
  create.setName("orders");
  create.setPartitions(1);
  create.setReplicationFactor(1);
  set_empty_entries<rpc::Capstan::CreateTopicParams::Builder>(create, 1, n);
  auto created = create.send().wait(ws);
  CHECK(code_of(created.getErrorCode()) == errc::invalid_request);
  CHECK(names(created.getErrorMessage(), "configs"));

  auto alter = cap.alterConfigsRequest();
  alter.setTopic("t");
  set_empty_entries<rpc::Capstan::AlterConfigsParams::Builder>(alter, 1, n);
  auto altered = alter.send().wait(ws);
  CHECK(code_of(altered.getErrorCode()) == errc::invalid_request);
  CHECK(names(altered.getErrorMessage(), "configs"));

  auto commit = cap.commitOffsetsRequest();
  commit.setGroup("g");
  set_empty_entries<rpc::Capstan::CommitOffsetsParams::Builder>(commit, 1, n);
  auto committed = commit.send().wait(ws);
  CHECK(code_of(committed.getErrorCode()) == errc::invalid_request);
  CHECK(names(committed.getErrorMessage(), "offsets"));

  auto fetch = cap.fetchOffsetsRequest();
  fetch.setGroup("g");
  set_empty_entries<rpc::Capstan::FetchOffsetsParams::Builder>(fetch, 1, n);
  auto fetched = fetch.send().wait(ws);
  CHECK(code_of(fetched.getErrorCode()) == errc::invalid_request);
  CHECK(names(fetched.getErrorMessage(), "partitions"));

  // metadata has no error field: the call fails. Its topics are Text, which Cap'n Proto does not
  // read from a list of empty structs, so the list is as long as it looks: n null names.
  std::string what;
  try {
    auto md = cap.metadataRequest();
    md.initTopics(n);
    md.send().wait(ws);
  } catch (const kj::Exception& e) {
    what = e.getDescription().cStr();
  }
  CHECK(what.find("INVALID_REQUEST") != std::string::npos);
  CHECK(what.find("topics") != std::string::npos);

  // At the limit the list is read as usual.
  auto at_limit = cap.fetchOffsetsRequest();
  at_limit.setGroup("g");
  set_empty_entries<rpc::Capstan::FetchOffsetsParams::Builder>(at_limit, 1, n - 1);
  CHECK(code_of(at_limit.send().wait(ws).getErrorCode()) == errc::invalid_topic_exception);
}

TEST_CASE("rpc server: an unavailable metadata actor fails the call, not the connection",
          "[gateway][rpc]") {
  rpc_fixture f;
  capnp::EzRpcClient client("127.0.0.1", f.port(), client_options());
  auto& ws = client.getWaitScope();
  auto cap = client.getMain<rpc::Capstan>();
  caf::anon_send_exit(f.metadata, caf::exit_reason::kill);
  std::string what;
  try {
    auto md = cap.metadataRequest();
    md.setAllTopics(true);
    md.send().wait(ws);
  } catch (const kj::Exception& e) {
    what = e.getDescription().cStr();
  }
  CHECK(what.find("metadata unavailable: REQUEST_TIMED_OUT") != std::string::npos);
  // Topic changes go to the controller, not to the metadata actor.
  CHECK(code_of(create_call(cap, ws, "orders", 1).getErrorCode()) == errc::none);
  CHECK(produce(client, "t", 0, make_batch()).first == errc::none);
}

TEST_CASE("rpc server: a produce its replica never answers ends REQUEST_TIMED_OUT after its "
          "timeout and the reply margin, and the late answer is dropped",
          "[gateway][rpc]") {
  rpc_fixture f;
  f.probe->hold_produces = true;
  capnp::EzRpcClient client("127.0.0.1", f.port(), client_options());
  auto req = client.getMain<rpc::Capstan>().produceRequest();
  req.setTopic("t");
  req.setPartition(0);
  req.setAcks(1);
  req.setTimeoutMs(100);
  req.setRecords(data_of(make_batch()));
  // Bounded by the gateway's own deadline (100 ms + 5 s), not by this wait.
  auto resp = req.send().wait(client.getWaitScope());
  CHECK(code_of(resp.getErrorCode()) == errc::request_timed_out);
  CHECK(resp.getBaseOffset() == -1);

  // The held answer goes out to nobody; the connection serves the next produce.
  f.probe->hold_produces = false;
  caf::anon_send(f.replica, tick_atom_v);
  CHECK(produce(client, "t", 0, make_batch()).first == errc::none);
}

TEST_CASE("rpc server: garbage and truncated frames on the port do not stop the server",
          "[gateway][rpc]") {
  rpc_fixture f;
  // Random bytes: the segment table is nonsense and the connection is dropped.
  std::vector<uint8_t> garbage(4096);
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<uint8_t>(i * 131 + 7);
  send_raw(f.port(), garbage, true);
  // A segment table promising 1000 words, 16 of them sent, then the peer hangs up.
  std::vector<uint8_t> truncated(8 + 128, 0);
  const uint32_t words = 1000;
  std::memcpy(truncated.data() + 4, &words, sizeof words);
  send_raw(f.port(), truncated, false);
  // A segment count far above any limit.
  std::vector<uint8_t> huge_table{0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0};
  send_raw(f.port(), huge_table, true);

  capnp::EzRpcClient client("127.0.0.1", f.port(), client_options());
  CHECK(produce(client, "t", 0, make_batch()).first == errc::none);
}

TEST_CASE("rpc server: stop is idempotent and a second server on a used port fails",
          "[gateway][rpc]") {
  rpc_fixture f;
  rpc_targets targets{};
  auto second = rpc_server::start(f.ts.sys(), targets, "127.0.0.1", f.port());
  REQUIRE_FALSE(second.ok());
  CHECK(second.code() == errc::network_exception);
  f.server->stop();
  f.server->stop();
}

TEST_CASE("rpc server: a bridge actor that dies is replaced and later calls are served",
          "[gateway][rpc]") {
  rpc_fixture f;
  capnp::EzRpcClient client("127.0.0.1", f.port(), client_options());
  REQUIRE(produce(client, "t", 0, make_batch()).first == errc::none);
  const auto first = f.server->bridge();
  caf::anon_send_exit(first, caf::exit_reason::kill);
  // A call that races the replacement may still end REQUEST_TIMED_OUT; once the new bridge is in
  // place, every call is served.
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (f.server->bridge() == first && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  REQUIRE(f.server->bridge() != first);
  for (int i = 0; i < 20; ++i) CHECK(produce(client, "t", 0, make_batch()).first == errc::none);
  CHECK(f.metric("capstan_rpc_bridge_restarts_total") == 1);
}

TEST_CASE("rpc server: fetches past fetch.max.parked.per.connection and .per.node are answered "
          "at once",
          "[gateway][rpc][limits]") {
  rpc_limits limits;
  limits.fetch_max_parked_per_connection = 3;
  limits.fetch_max_parked_per_node = 5;
  rpc_fixture f(limits);
  // Sends `n` fetches at the log end that may wait a minute; counts their answers.
  struct poller {
    capnp::EzRpcClient client;
    std::vector<kj::Promise<void>> calls;
    int answered = 0;
    explicit poller(uint16_t port) : client("127.0.0.1", port, client_options()) {}
    void send(int n) {
      auto cap = client.getMain<rpc::Capstan>();
      for (int i = 0; i < n; ++i) {
        auto req = cap.fetchRequest();
        req.setTopic("t");
        req.setPartition(0);
        req.setOffset(0);
        req.setMaxBytes(1 << 20);
        req.setMinBytes(1);
        req.setMaxWaitMs(60000);
        calls.push_back(req.send()
                            .then([this](auto&& resp) {
                              CHECK(resp.getErrorCode() == 0);
                              ++answered;
                            })
                            .eagerlyEvaluate(nullptr));
      }
    }
  };
  // The clients share this thread's kj event loop (EzRpcClient's), turned by poll_until.
  auto a = std::make_unique<poller>(f.port());
  a->send(5);
  CHECK(poll_until(a->client.getWaitScope(), [&] { return a->answered == 2; }));
  CHECK(f.metric("capstan_rpc_parked_fetches") == 3);
  CHECK(f.metric("capstan_rpc_fetches_not_parked_total") == 2);

  {
    poller b(f.port());
    b.send(4);
    CHECK(poll_until(b.client.getWaitScope(), [&] { return b.answered == 2; }));
    CHECK(f.metric("capstan_rpc_parked_fetches") == 5);
    CHECK(f.metric("capstan_rpc_fetches_not_parked_total") == 4);
  }
  // b closed its connection, but its fetches still sit in the replica: they still count, so
  // reconnecting does not get round the caps.
  poller c(f.port());
  c.send(1);
  CHECK(poll_until(c.client.getWaitScope(), [&] { return c.answered == 1; }));
  CHECK(f.metric("capstan_rpc_parked_fetches") == 5);
  CHECK(f.metric("capstan_rpc_fetches_not_parked_total") == 5);

  // An append answers every parked fetch; the caps free up.
  capnp::EzRpcClient producer("127.0.0.1", f.port(), client_options());
  REQUIRE(produce(producer, "t", 0, make_batch()).first == errc::none);
  CHECK(poll_until(a->client.getWaitScope(), [&] { return a->answered == 5; }));
  CHECK(poll_until(a->client.getWaitScope(),
                   [&] { return f.metric("capstan_rpc_parked_fetches") == 0; }));
}

TEST_CASE("rpc server: a request above socket.request.max.bytes ends its connection only",
          "[gateway][rpc][limits]") {
  rpc_limits limits;
  limits.socket_request_max_bytes = min_socket_request_max_bytes;
  rpc_fixture f(limits);
  {
    capnp::EzRpcClient client("127.0.0.1", f.port(), client_options());
    std::string failure;
    try {
      produce(client, "t", 0, make_batch(1, 2 << 20));
    } catch (const kj::Exception& e) {
      failure = e.getDescription().cStr();
    }
    INFO(failure);
    CHECK_FALSE(failure.empty());
  }
  capnp::EzRpcClient client("127.0.0.1", f.port(), client_options());
  CHECK(produce(client, "t", 0, make_batch(1, 512 << 10)) == std::pair{errc::none, int64_t{0}});
  // A fetch response is sized to fit the same limit.
  auto cap = client.getMain<rpc::Capstan>();
  CHECK(fetch_call(cap, client.getWaitScope(), 0, max_fetch_bytes).getErrorCode() == 0);
}

TEST_CASE("rpc server: a client pipelining produces without reading replies is not read past "
          "queued.max.request.bytes.per.connection",
          "[gateway][rpc][limits]") {
  rpc_limits limits;
  limits.queued_max_request_bytes_per_connection = 1 << 20;
  rpc_fixture f(limits);
  f.probe->hold_produces = true;
  const auto batch = make_batch(1, 256 << 10);
  test::raw_rpc_client flood(f.port(), 2s);
  REQUIRE(flood.send_bootstrap());
  // 50 MiB of calls are far more than the flow limit plus the sockets' buffers, so the writes
  // stall once the server stops reading.
  int sent = 0;
  while (sent < 200 && flood.send_produce("t", 0, 1, 30000, batch)) ++sent;
  CHECK(sent < 200);
  // Four calls of 256 KiB and their framing pass 1 MiB: at most those reached the replica.
  CHECK(f.probe->produces <= 5);
  CHECK(f.probe->produces >= 1);

  // Another client is served meanwhile.
  f.probe->hold_produces = false;
  capnp::EzRpcClient client("127.0.0.1", f.port(), client_options());
  auto md = client.getMain<rpc::Capstan>().metadataRequest();
  md.setAllTopics(true);
  CHECK(md.send().wait(client.getWaitScope()).getTopics().size() == 1);

  // Once the held calls are answered, the server reads the flood again.
  const int before = f.probe->produces;
  caf::anon_send(f.replica, tick_atom_v);
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (f.probe->produces <= before && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  CHECK(f.probe->produces > before);
}

// A Kafka Produce v3 of `batch` to topic/partition with acks=1.
kafka::struct_value kafka_produce_body(const std::string& topic, int32_t partition,
                                       const bytes& batch) {
  auto body = kafka::make_message(kafka::produce_api, kafka::message_kind::request);
  body["Acks"] = kafka::value(int64_t{1});
  body["TimeoutMs"] = kafka::value(int64_t{30000});
  auto t = element_of(body, "TopicData");
  t["Name"] = kafka::value(topic);
  auto p = element_of(t, "PartitionData");
  p["Index"] = kafka::value(int64_t{partition});
  p["Records"] = kafka::value(batch);
  t["PartitionData"] = kafka::value(kafka::value::array_type{kafka::value(std::move(p))});
  body["TopicData"] = kafka::value(kafka::value::array_type{kafka::value(std::move(t))});
  return body;
}

TEST_CASE("rpc server: a Kafka client pipelining produces without reading replies is not read "
          "past queued.max.request.bytes.per.connection",
          "[gateway][kafka][limits]") {
  rpc_limits limits;
  limits.queued_max_request_bytes_per_connection = 1 << 20;
  rpc_fixture f(limits, {}, true);
  f.probe->hold_produces = true;
  const auto body = kafka_produce_body("t", 0, make_batch(1, 256 << 10));
  test::raw_kafka_client flood(f.kafka_port(), 2s, 10s);
  REQUIRE(flood.connected());
  // 50 MiB of requests are far more than the limit plus the sockets' buffers, so the writes
  // stall once the server stops reading; below queued.max.requests and
  // queued.max.responses.per.connection, which would stop it too.
  int sent = 0;
  while (sent < 200 && flood.send(kafka::produce_api, 3, sent, body)) ++sent;
  CHECK(sent < 200);
  // Four frames of 256 KiB and their framing pass 1 MiB: at most those reached the replica.
  CHECK(f.probe->produces <= 5);
  CHECK(f.probe->produces >= 1);

  // Another Kafka client is served meanwhile.
  test::raw_kafka_client other(f.kafka_port(), 2s, 10s);
  REQUIRE(other.send(kafka::api_versions_api, 0, 7,
                     kafka::make_message(kafka::api_versions_api, kafka::message_kind::request)));
  auto versions = other.receive(kafka::api_versions_api, 0);
  REQUIRE(versions.ok());
  CHECK(versions->correlation_id == 7);

  // Once the held produces are answered, the server reads the flood again.
  const int before = f.probe->produces;
  f.probe->hold_produces = false;
  caf::anon_send(f.replica, tick_atom_v);
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (f.probe->produces <= before && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  CHECK(f.probe->produces > before);
}

TEST_CASE("rpc server: a Kafka request larger than queued.max.request.bytes.per.connection is "
          "served, alone",
          "[gateway][kafka][limits]") {
  rpc_limits limits;
  limits.queued_max_request_bytes_per_connection = 64 << 10;
  rpc_fixture f(limits, {}, true);
  f.probe->hold_produces = true;
  test::raw_kafka_client client(f.kafka_port(), 10s, 10s);
  // Two produces of 256 KiB each, sent at once: the first is read though it is above the limit
  // on its own, the second only once the first is answered.
  const auto body = kafka_produce_body("t", 0, make_batch(1, 256 << 10));
  REQUIRE(client.send(kafka::produce_api, 3, 1, body));
  REQUIRE(client.send(kafka::produce_api, 3, 2, body));
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (f.probe->produces < 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  std::this_thread::sleep_for(200ms);
  CHECK(f.probe->produces == 1);

  f.probe->hold_produces = false;
  caf::anon_send(f.replica, tick_atom_v);
  for (int32_t correlation : {1, 2}) {
    auto r = client.receive(kafka::produce_api, 3);
    REQUIRE(r.ok());
    CHECK(r->correlation_id == correlation);
    const auto& partition = r->body["Responses"].as_array()[0].as_struct()["PartitionResponses"]
                                .as_array()[0]
                                .as_struct();
    CHECK(partition["ErrorCode"].as_int() == 0);
  }
  CHECK(f.probe->produces == 2);
}

TEST_CASE("rpc server: connections within their own limits are not read past queued.max.requests "
          "on the node together",
          "[gateway][rpc][limits]") {
  rpc_limits limits;
  limits.queued_max_requests = 2;
  rpc_fixture f(limits);
  f.probe->hold_produces = true;
  const auto batch = make_batch(1, 1 << 10);
  // Four connections of five small produces each: each connection is far within its own limits,
  // and the sockets take every call.
  std::vector<std::unique_ptr<test::raw_rpc_client>> clients;
  for (int c = 0; c < 4; ++c) {
    clients.push_back(std::make_unique<test::raw_rpc_client>(f.port(), 2s));
    REQUIRE(clients.back()->send_bootstrap());
    for (int i = 0; i < 5; ++i) REQUIRE(clients.back()->send_produce("t", 0, 1, 30000, batch));
  }
  // Give the server time to read whatever it would read, then count what reached the replica.
  const std::string produces = "capstan_rpc_requests_total{method=\"produce\"}";
  auto deadline = std::chrono::steady_clock::now() + 1s;
  while (f.metric(produces) < 20 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  CHECK(f.metric(produces) < 20);

  // Once the held calls are answered, the server reads the rest.
  f.probe->hold_produces = false;
  caf::anon_send(f.replica, tick_atom_v);
  deadline = std::chrono::steady_clock::now() + 10s;
  while (f.metric(produces) < 20 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  CHECK(f.metric(produces) == 20);
}

TEST_CASE("rpc server: a client that does not read its answers is not read past "
          "queued.max.responses.per.connection",
          "[gateway][rpc][limits]") {
  rpc_limits limits;
  limits.queued_max_responses_per_connection = 8;
  rpc_fixture f(limits);
  {
    capnp::EzRpcClient client("127.0.0.1", f.port(), client_options());
    REQUIRE(produce(client, "t", 0, make_batch(1, 16 << 10)).first == errc::none);
  }
  // 2,000 fetches of a 16 KiB batch: 32 MiB of answers, far more than the sockets' buffers hold
  // once the client's receive buffer is small, so the answers queue in the server.
  test::raw_rpc_client greedy(f.port(), 5s, 4096);
  REQUIRE(greedy.send_bootstrap());
  for (int i = 0; i < 2000; ++i) REQUIRE(greedy.send_fetch("t", 0, 0, 1 << 20, 0, 0));
  const std::string fetches = "capstan_rpc_requests_total{method=\"fetch\"}";
  // The server stops reading once the unsent answers pass the limit: it never gets to the last
  // requests while the client does not read.
  auto deadline = std::chrono::steady_clock::now() + 2s;
  while (f.metric(fetches) < 2000 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(10ms);
  const auto read_while_backlogged = f.metric(fetches);
  CHECK(read_while_backlogged < 1000);

  // Another client is served meanwhile.
  capnp::EzRpcClient client("127.0.0.1", f.port(), client_options());
  auto cap = client.getMain<rpc::Capstan>();
  CHECK(fetch_call(cap, client.getWaitScope(), 0).getErrorCode() == 0);

  // Once the client reads, the server reads the rest.
  deadline = std::chrono::steady_clock::now() + 30s;
  while (f.metric(fetches) < 2001 && std::chrono::steady_clock::now() < deadline)
    greedy.discard_answers(20ms);
  CHECK(f.metric(fetches) == 2001);
}

TEST_CASE("partition metrics refresher publishes each replica's log size", "[gateway][metrics]") {
  rpc_fixture f;
  capnp::EzRpcClient client("127.0.0.1", f.port(), client_options());
  REQUIRE(produce(client, "t", 0, make_batch()).first == errc::none);
  auto refresher = spawn_partition_metrics_refresher(
      f.ts.sys(), [&f] { return std::atomic_load(&f.table); }, f.metrics, 20ms,
      controller_gauge_source{});
  f.ts.track(refresher);
  const std::string want = "capstan_log_end_offset{topic=\"t\",partition=\"0\"} 3";
  auto deadline = std::chrono::steady_clock::now() + 5s;
  std::string text;
  while (std::chrono::steady_clock::now() < deadline) {
    text = f.metrics->render();
    if (text.find(want) != std::string::npos) break;
    std::this_thread::sleep_for(10ms);
  }
  CHECK(text.find(want) != std::string::npos);
  CHECK(text.find("capstan_partitions 1") != std::string::npos);
  CHECK(text.find("capstan_log_size_bytes{topic=\"t\",partition=\"0\"}") != std::string::npos);
  caf::anon_send_exit(refresher, caf::exit_reason::user_shutdown);
}

// Not run by default (hidden tag): `cluster_tests "[.rpc_bench]"` prints produce calls/s through
// the gateway and the bridge actor into a stub replica, W calls in flight on one connection.
TEST_CASE("rpc server: produce call rate through the bridge actor", "[.rpc_bench]") {
  rpc_fixture f;
  capnp::EzRpcClient client("127.0.0.1", f.port(), client_options());
  auto& ws = client.getWaitScope();
  auto cap = client.getMain<rpc::Capstan>();
  const auto batch = make_batch(8, 100); // about 1 KiB
  for (int window : {1, 16, 256}) {
    constexpr int calls = 20000;
    int sent = 0;
    int failed = 0;
    const auto start = std::chrono::steady_clock::now();
    kj::Vector<kj::Promise<void>> inflight;
    std::function<kj::Promise<void>()> next = [&]() -> kj::Promise<void> {
      if (sent >= calls) return kj::READY_NOW;
      ++sent;
      auto req = cap.produceRequest();
      req.setTopic("t");
      req.setPartition(0);
      req.setAcks(1);
      req.setTimeoutMs(1000);
      req.setRecords(data_of(batch));
      return req.send().then([&](auto&& resp) {
        if (resp.getErrorCode() != 0) ++failed;
        return next();
      });
    };
    for (int i = 0; i < window; ++i) inflight.add(next());
    kj::joinPromises(inflight.releaseAsArray()).wait(ws);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    WARN("W=" << window << ": " << static_cast<int>(calls / secs) << " produce calls/s");
    CHECK(failed == 0);
  }
}
