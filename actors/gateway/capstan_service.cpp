// GCC 12 reports the error string of a reply<bool> held in kj::Maybe inside kj's cross-thread
// fulfiller as maybe-uninitialized once enough calls instantiate it; kj only destroys the value it
// constructed (a false positive, as in runtime/client/rpc_cluster_client.hpp).
#if defined(__GNUC__) && !defined(__clang__) // clang has no such warning
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "actors/gateway/capstan_service.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

#include <caf/all.hpp>
#include <capnp/orphan.h>
#include <kj/async.h>
#include <kj/debug.h>
#include <spdlog/spdlog.h>

#include "actors/gateway/request_validation.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/metrics/metrics_registry.hpp"

namespace capstan {

namespace {

using clock_type = std::chrono::steady_clock;

// First segment of every response message: room for the error fields and a zero-copy record
// reference. Without a hint Cap'n Proto starts each response with 8 KiB, which is what an answer
// costs while it waits to be sent; a larger response grows into further segments.
constexpr capnp::MessageSize results_size_hint{64, 0};

// A request's CAF error as the client sees it. For calls addressed to a partition replica, a
// replica that went away between the routing lookup and the request (its topic was deleted)
// bounced the request unprocessed: UNKNOWN_TOPIC_OR_PARTITION, not a timeout.
template <class Handle>
error to_error(const caf::error& raw) {
  if constexpr (std::is_same_v<Handle, partition_replica_actor>) {
    if (raw.category() == caf::atom("system") &&
        static_cast<caf::sec>(raw.code()) == caf::sec::request_receiver_down)
      return make_error(errc::unknown_topic_or_partition, "the partition replica is gone");
  }
  return from_caf_error(raw);
}

// A reply as it crosses threads. A plain struct rather than result<R>: g++ 12 warns
// (-Wmaybe-uninitialized, a false positive) about a std::variant inside kj's promise nodes.
template <class R>
struct reply {
  R value{};
  error err; // errc::none: `value` holds the reply

  result<R> take() && {
    if (err.code != errc::none) return std::move(err);
    return std::move(value);
  }
};

// A call's reply slot, shared by its bridge job and the job's reply handlers. It goes away once
// the reply was delivered, or when the request is lost (a dead bridge drops the job). `hold`
// goes with it, or at the call's deadline if the actor has not answered by then.
template <class R>
struct reply_slot {
  kj::Own<kj::CrossThreadPromiseFulfiller<reply<R>>> fulfiller;
  std::mutex mu; // guards hold: the deadline drops it on the kj thread
  std::shared_ptr<void> hold;

  void drop_hold() {
    std::shared_ptr<void> last;
    std::lock_guard<std::mutex> guard{mu};
    last = std::move(hold);
  }
};

// Asks `dest` through the bridge (rpc_bridge.hpp); the promise always resolves (never rejects) on
// the kj thread. No answer within `timeout`, a lost bridge or a lost reply (the fulfiller dropped
// unfulfilled) becomes REQUEST_TIMED_OUT. `hold` (may be null) lives until the actor's answer
// arrives or the deadline passes, whatever happens to the call meanwhile.
// The deadline is a kj timer on the kj thread rather than a CAF request timeout: those wake CAF's
// clock thread to set and to cancel them, twice per produce and per fetch.
template <class R, class Handle, class... Ts>
kj::Promise<reply<R>> ask_holding(const service_context& ctx, std::shared_ptr<void> hold,
                                  Handle dest, std::chrono::milliseconds timeout, Ts... xs) {
  auto paf = kj::newPromiseAndCrossThreadFulfiller<reply<R>>();
  auto slot = std::make_shared<reply_slot<R>>();
  slot->fulfiller = kj::mv(paf.fulfiller);
  slot->hold = std::move(hold);
  caf::anon_send(
      ctx.bridge.current(), bridge_job{[slot, dest, args = std::make_tuple(std::move(xs)...)](
                                           caf::event_based_actor* self) mutable {
        std::apply(
            [&](auto&... as) { return self->request(dest, caf::infinite, std::move(as)...); }, args)
            .then(
                [slot](R& r) {
                  slot->fulfiller->fulfill(reply<R>{std::move(r), {}});
                },
                [slot](caf::error& e) {
                  slot->fulfiller->fulfill(reply<R>{R{}, to_error<Handle>(e)});
                });
      }});
  auto answered = paf.promise.catch_([](kj::Exception&& e) {
    return reply<R>{R{}, make_error(errc::request_timed_out,
                                    std::string{"no reply from the broker's actors: "} +
                                        e.getDescription().cStr())};
  });
  return answered.exclusiveJoin(
      ctx.timer->afterDelay(timeout.count() * kj::MILLISECONDS).then([slot, timeout] {
        slot->drop_hold();
        return reply<R>{
            R{}, make_error(errc::request_timed_out, "no reply from the broker's actors within " +
                                                         std::to_string(timeout.count()) + " ms")};
      }));
}

template <class R, class Handle, class... Ts>
kj::Promise<reply<R>> ask(const service_context& ctx, Handle dest,
                          std::chrono::milliseconds timeout, Ts... xs) {
  return ask_holding<R>(ctx, nullptr, std::move(dest), timeout, std::move(xs)...);
}

// Fails a call whose response has no error field: the client gets a Cap'n Proto exception for
// this call; the connection stays up.
[[noreturn]] void fail_call(const std::string& why) {
  kj::throwFatalException(
      kj::Exception(kj::Exception::Type::FAILED, __FILE__, __LINE__, kj::str(why.c_str())));
}

template <class Results>
void set_error(Results results, const gateway_metrics& m, const char* method, const error& e) {
  results.setErrorCode(static_cast<uint8_t>(e.code));
  results.setErrorMessage(e.message);
  m.count_error(method, e.code);
}

result<partition_replica_actor> route(const service_context& ctx, const std::string& topic,
                                      int32_t partition) {
  auto unknown = [&] {
    return make_error(errc::unknown_topic_or_partition,
                      "this node has no replica of " + topic + "-" + std::to_string(partition));
  };
  if (!ctx.targets.routes) return unknown();
  auto table = ctx.targets.routes();
  if (!table) return unknown();
  auto it = table->find(topic_partition{topic, partition});
  if (it == table->end() || !it->second) return unknown();
  return it->second;
}

uint64_t micros_since(clock_type::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(clock_type::now() - start).count());
}

config_map read_configs(capnp::List<rpc::ConfigEntry>::Reader entries) {
  config_map out;
  for (auto e : entries) out[e.getName()] = e.getValue();
  return out;
}

void fill_topic(rpc::TopicInfo::Builder out, const topic_metadata& t,
                const std::vector<broker_info>& brokers) {
  out.setName(t.name);
  out.setTopicId(capnp::Data::Reader(t.id.data(), t.id.size()));
  out.setInternal(t.internal);
  auto configs = out.initConfigs(static_cast<unsigned>(t.configs.size()));
  unsigned c = 0;
  for (const auto& [k, v] : t.configs) {
    configs[c].setName(k);
    configs[c].setValue(v);
    ++c;
  }
  auto parts = out.initPartitions(static_cast<unsigned>(t.partitions.size()));
  for (size_t i = 0; i < t.partitions.size(); ++i) {
    const auto& p = t.partitions[i];
    auto b = parts[static_cast<unsigned>(i)];
    auto live = [&](int32_t id) {
      for (const auto& br : brokers)
        if (br.node_id == id) return true;
      return false;
    };
    std::vector<int32_t> offline;
    for (auto r : p.replicas)
      if (!live(r)) offline.push_back(r);
    b.setPartition(p.partition);
    b.setLeader(p.leader >= 0 && live(p.leader) ? p.leader : -1);
    b.setLeaderEpoch(p.leader_epoch);
    auto put = [](auto list, const std::vector<int32_t>& v) {
      for (size_t k = 0; k < v.size(); ++k) list.set(static_cast<unsigned>(k), v[k]);
    };
    put(b.initReplicas(static_cast<unsigned>(p.replicas.size())), p.replicas);
    put(b.initIsr(static_cast<unsigned>(p.isr.size())), p.isr);
    put(b.initOffline(static_cast<unsigned>(offline.size())), offline);
    put(b.initWiped(static_cast<unsigned>(p.wiped.size())), p.wiped);
  }
}

void fill_metadata(rpc::Capstan::MetadataResults::Builder results, const cluster_metadata& md,
                   const std::vector<std::string>& wanted, bool all) {
  auto brokers = results.initBrokers(static_cast<unsigned>(md.brokers.size()));
  for (size_t i = 0; i < md.brokers.size(); ++i) {
    auto b = brokers[static_cast<unsigned>(i)];
    b.setNodeId(md.brokers[i].node_id);
    b.setHost(md.brokers[i].host);
    b.setPort(md.brokers[i].port);
  }
  results.setControllerId(md.controller_id);
  results.setClusterId(md.cluster_id);
  if (all) {
    auto topics = results.initTopics(static_cast<unsigned>(md.topics.size()));
    unsigned i = 0;
    for (const auto& [name, t] : md.topics) fill_topic(topics[i++], t, md.brokers);
    return;
  }
  auto topics = results.initTopics(static_cast<unsigned>(wanted.size()));
  for (size_t i = 0; i < wanted.size(); ++i) {
    auto out = topics[static_cast<unsigned>(i)];
    auto it = md.topics.find(wanted[i]);
    if (it != md.topics.end()) {
      fill_topic(out, it->second, md.brokers);
      continue;
    }
    out.setName(wanted[i]);
    auto valid = validate_topic_name(wanted[i]);
    auto code = valid ? errc::unknown_topic_or_partition : valid.code();
    out.setErrorCode(static_cast<uint8_t>(code));
    out.setErrorMessage(valid ? "unknown topic " + wanted[i] : valid.err().message);
  }
}

void fill_description(rpc::Capstan::DescribeClusterResults::Builder results,
                      const cluster_description& d) {
  results.setActiveControllerId(d.active_controller);
  auto members = results.initMembers(static_cast<unsigned>(d.members.size()));
  for (size_t i = 0; i < d.members.size(); ++i) {
    const auto& m = d.members[i];
    auto b = members[static_cast<unsigned>(i)];
    b.setNodeId(m.node);
    b.setReachable(m.reachable);
    b.setFailure(m.failure);
    b.setRole(m.role);
    b.setTerm(m.term);
    b.setCommitIndex(m.commit_index);
    b.setLeaderId(m.leader);
  }
  results.setNodesKnown(d.nodes_known);
  auto nodes = results.initNodes(static_cast<unsigned>(d.nodes.size()));
  for (size_t i = 0; i < d.nodes.size(); ++i) {
    const auto& n = d.nodes[i];
    auto b = nodes[static_cast<unsigned>(i)];
    b.setNodeId(n.node);
    b.setFenced(n.fenced);
    b.setBrokerEpoch(n.broker_epoch);
    b.setIncarnationId(capnp::Data::Reader(n.incarnation.data(), n.incarnation.size()));
  }
}

// The controller's metadata cache once this node accepted an UpdateMetadata; null before.
metadata_cache_ptr controller_cache(const service_context& ctx) {
  return ctx.targets.controller_metadata ? ctx.targets.controller_metadata() : nullptr;
}

// Kafka answers CreateTopics and CreatePartitions once the controller committed them. The gateway
// also waits, at most metadata_catch_up_wait, until this node's metadata cache shows the topic
// with `partitions` partitions and this node's replicas of them are open, so that the client's
// next call through this node finds them (on a single node: led). Past the wait it answers
// anyway: the change did commit.
constexpr auto metadata_catch_up_wait = 5 * kj::SECONDS;
constexpr auto metadata_catch_up_poll = 5 * kj::MILLISECONDS;

kj::Promise<void> await_cached(std::shared_ptr<service_context> ctx, std::string topic,
                               size_t partitions, kj::TimePoint deadline) {
  // Without a cache the node answers from its own metadata: there is nothing to catch up with.
  auto cache = controller_cache(*ctx);
  if (!cache) return kj::READY_NOW;
  const auto& topics = cache->cluster().topics;
  if (auto it = topics.find(topic); it != topics.end() && it->second.partitions.size() >= partitions) {
    auto routes = ctx->targets.routes ? ctx->targets.routes() : nullptr;
    bool open = true;
    for (const auto& p : it->second.partitions)
      if (std::find(p.replicas.begin(), p.replicas.end(), ctx->targets.node) != p.replicas.end())
        open = open && routes && routes->count(topic_partition{topic, p.partition}) != 0;
    if (open) return kj::READY_NOW;
  }
  if (ctx->timer->now() >= deadline) return kj::READY_NOW;
  return ctx->timer->afterDelay(metadata_catch_up_poll)
      .then([ctx, topic = std::move(topic), partitions, deadline]() mutable {
        return await_cached(std::move(ctx), std::move(topic), partitions, deadline);
      });
}

kj::Promise<void> await_cached(std::shared_ptr<service_context> ctx, std::string topic,
                               size_t partitions) {
  const auto deadline = ctx->timer->now() + metadata_catch_up_wait;
  return await_cached(std::move(ctx), std::move(topic), partitions, deadline);
}

} // namespace

// ---- gateway_metrics ----

gateway_metrics::gateway_metrics(std::shared_ptr<metrics_registry> r) : registry(std::move(r)) {
  if (!registry) return;
  bytes_in = &registry->counter("capstan_bytes_in_total",
                                "Record batch bytes accepted by produce requests");
  bytes_out =
      &registry->counter("capstan_bytes_out_total", "Record bytes returned by fetch responses");
  produce_latency = &registry->histogram("capstan_rpc_request_latency_seconds",
                                         "Time from receiving a request to its response",
                                         {{"method", "produce"}});
  fetch_latency =
      &registry->histogram("capstan_rpc_request_latency_seconds",
                           "Time from receiving a request to its response", {{"method", "fetch"}});
  connections = &registry->counter("capstan_rpc_connections_total", "Client connections accepted");
  open_connections = &registry->gauge("capstan_rpc_connections", "Client connections open");
  const char* refused_help = "Client connections closed at once because a limit was reached";
  refused_max_connections = &registry->counter("capstan_rpc_connections_refused_total",
                                               refused_help, {{"limit", "max.connections"}});
  refused_max_connections_per_ip = &registry->counter(
      "capstan_rpc_connections_refused_total", refused_help, {{"limit", "max.connections.per.ip"}});
  accept_errors = &registry->counter("capstan_rpc_accept_errors_total",
                                     "Failed accepts on the client listener (e.g. out of file "
                                     "descriptors); accepting resumes after a pause");
  parked_fetches = &registry->gauge("capstan_rpc_parked_fetches",
                                    "Client fetches in flight that may park in their replica");
  fetches_not_parked = &registry->counter(
      "capstan_rpc_fetches_not_parked_total",
      "Fetches answered at once because fetch.max.parked.per.connection or .per.node was reached");
  bridge_restarts = &registry->counter("capstan_rpc_bridge_restarts_total",
                                       "RPC bridge actors replaced after they ended");
  for (const char* method :
       {"metadata", "createTopic", "deleteTopic", "listTopics", "describeConfigs", "alterConfigs",
        "produce", "fetch", "listOffsets", "commitOffsets", "fetchOffsets", "describeCluster",
        "initProducerId", "createPartitions", "electLeaders", "injectFault", "reassignPartitions",
        "unregisterNode", "findCoordinator", "listGroups", "joinGroup", "syncGroup", "heartbeat",
        "leaveGroup", "describeGroup", "deleteGroup"})
    requests.emplace_back(method,
                          &registry->counter("capstan_rpc_requests_total",
                                             "Client RPC requests received", {{"method", method}}));
}

void gateway_metrics::count_request(const char* method) const {
  for (const auto& [name, counter] : requests)
    if (std::strcmp(name, method) == 0) return counter->inc();
}

void gateway_metrics::count_error(const char* method, errc code) const {
  if (registry && code != errc::none)
    registry
        ->counter("capstan_rpc_errors_total", "Client RPC responses with an error code",
                  {{"method", method}, {"code", std::string{to_string(code)}}})
        .inc();
}

// ---- service_context ----

service_context::service_context(caf::actor_system& sys, rpc_targets t, rpc_limits l)
    : targets(std::move(t)), metrics(targets.metrics), limits(l),
      bridge(sys, metrics.bridge_restarts),
      parked_fetches(l.fetch_max_parked_per_connection, l.fetch_max_parked_per_node) {}

namespace {

// Holds a fetch's place under the parked-fetch caps until its replica's answer (ask_holding).
// Released on whichever thread drops it last.
class parked_slot {
public:
  parked_slot(std::shared_ptr<service_context> ctx,
              std::shared_ptr<parked_fetch_limiter::connection_count> count)
      : ctx_(std::move(ctx)), count_(std::move(count)) {}
  parked_slot(const parked_slot&) = delete;
  parked_slot& operator=(const parked_slot&) = delete;
  ~parked_slot() {
    ctx_->parked_fetches.release(*count_);
    if (auto* g = ctx_->metrics.parked_fetches) g->set(ctx_->parked_fetches.parked());
  }

private:
  std::shared_ptr<service_context> ctx_;
  std::shared_ptr<parked_fetch_limiter::connection_count> count_;
};

} // namespace

// ---- capstan_service ----

capstan_service::capstan_service(std::shared_ptr<service_context> ctx,
                                 std::shared_ptr<fetch_pins> pins,
                                 std::shared_ptr<connection_load> load)
    : ctx_(std::move(ctx)), pins_(std::move(pins)), load_(std::move(load)),
      parked_(std::make_shared<parked_fetch_limiter::connection_count>()) {}

kj::Promise<void> capstan_service::answered_later(kj::Promise<void> call, int64_t fetch_bytes,
                                                  bool parked) {
  ++load_->calls;
  // A parked fetch waits on data, not on the node: it has its own caps and must not stop the
  // node from reading the produce that would answer it.
  const int64_t node_calls = parked ? 0 : 1;
  ctx_->calls_in_flight += node_calls;
  load_->fetch_bytes += fetch_bytes;
  return call.attach(kj::defer([load = load_, ctx = ctx_, fetch_bytes, node_calls] {
    --load->calls;
    ctx->calls_in_flight -= node_calls;
    load->fetch_bytes -= fetch_bytes;
  }));
}

kj::Promise<void> capstan_service::metadata(MetadataContext call) {
  ctx_->metrics.count_request("metadata");
  auto params = call.getParams();
  if (auto s = validate_list_length(params.getTopics().size(), "topics"); !s) {
    ctx_->metrics.count_error("metadata", s.code());
    fail_call(s.err().to_string());
  }
  std::vector<std::string> wanted;
  for (auto t : params.getTopics()) wanted.emplace_back(t);
  const bool all = params.getAllTopics() || wanted.empty();
  call.releaseParams();
  if (auto cache = controller_cache(*ctx_)) {
    fill_metadata(call.getResults(results_size_hint), cache->cluster(), wanted, all);
    return kj::READY_NOW;
  }
  return answered_later(
      ask<metadata_snapshot>(*ctx_, ctx_->targets.metadata, ctx_->admin_timeout, snapshot_atom_v)
          .then([call, ctx = ctx_, wanted = std::move(wanted),
                 all](reply<metadata_snapshot>&& reply_) mutable {
            auto snap = std::move(reply_).take();
            auto results = call.getResults(results_size_hint);
            if (!snap || !*snap) {
              ctx->metrics.count_error("metadata", snap ? errc::unknown_server_error : snap.code());
              fail_call("metadata unavailable: " +
                        (snap ? std::string{"empty snapshot"} : snap.err().to_string()));
            }
            fill_metadata(results, **snap, wanted, all);
          }));
}

kj::Promise<void> capstan_service::createTopic(CreateTopicContext call) {
  static constexpr const char* method = "createTopic";
  ctx_->metrics.count_request(method);
  auto params = call.getParams();
  if (auto s = validate_list_length(params.getConfigs().size(), "configs"); !s) {
    set_error(call.getResults(), ctx_->metrics, method, s.err());
    return kj::READY_NOW;
  }
  topic_spec spec;
  spec.name = params.getName();
  spec.partitions = params.getPartitions();
  spec.replication_factor = params.getReplicationFactor();
  spec.configs = read_configs(params.getConfigs());
  call.releaseParams();
  if (auto s = validate_topic_name(spec.name); !s) {
    set_error(call.getResults(results_size_hint), ctx_->metrics, method, s.err());
    return kj::READY_NOW;
  }
  // As Kafka: the cluster creates its offsets topic itself, on a group's first FindCoordinator.
  if (is_internal_topic(spec.name)) {
    set_error(call.getResults(results_size_hint), ctx_->metrics, method,
              make_error(errc::invalid_request,
                         "creation of internal topic " + spec.name + " is prohibited"));
    return kj::READY_NOW;
  }
  const auto name = spec.name;
  auto created = ask<topic_metadata>(*ctx_, ctx_->targets.controller, ctx_->admin_timeout,
                                     mktopic_atom_v, std::move(spec));
  return answered_later(
      created.then([call, ctx = ctx_, name](reply<topic_metadata>&& reply_) mutable -> kj::Promise<void> {
        auto r = std::move(reply_).take();
        auto results = call.getResults(results_size_hint);
        if (!r) {
          set_error(results, ctx->metrics, method, r.err());
          return kj::READY_NOW;
        }
        results.setTopicId(capnp::Data::Reader(r->id.data(), r->id.size()));
        return await_cached(ctx, name, 1).attach(kj::mv(call));
      }));
}

kj::Promise<void> capstan_service::deleteTopic(DeleteTopicContext call) {
  static constexpr const char* method = "deleteTopic";
  ctx_->metrics.count_request(method);
  std::string name = call.getParams().getName();
  call.releaseParams();
  if (auto s = validate_topic_name(name); !s) {
    set_error(call.getResults(results_size_hint), ctx_->metrics, method, s.err());
    return kj::READY_NOW;
  }
  auto deleted =
      ask<bool>(*ctx_, ctx_->targets.controller, ctx_->admin_timeout, rmtopic_atom_v, std::move(name));
  return answered_later(deleted.then([call, ctx = ctx_](reply<bool>&& reply_) mutable {
    auto r = std::move(reply_).take();
    if (!r) set_error(call.getResults(results_size_hint), ctx->metrics, method, r.err());
  }));
}

kj::Promise<void> capstan_service::listTopics(ListTopicsContext call) {
  ctx_->metrics.count_request("listTopics");
  if (auto cache = controller_cache(*ctx_)) {
    const auto& topics = cache->cluster().topics;
    auto out = call.getResults(results_size_hint).initTopics(static_cast<unsigned>(topics.size()));
    unsigned i = 0;
    for (const auto& [name, t] : topics) out.set(i++, name);
    return kj::READY_NOW;
  }
  return answered_later(
      ask<metadata_snapshot>(*ctx_, ctx_->targets.metadata, ctx_->admin_timeout, snapshot_atom_v)
          .then([call, ctx = ctx_](reply<metadata_snapshot>&& reply_) mutable {
            auto snap = std::move(reply_).take();
            if (!snap || !*snap) {
              ctx->metrics.count_error("listTopics",
                                       snap ? errc::unknown_server_error : snap.code());
              fail_call("metadata unavailable: " +
                        (snap ? std::string{"empty snapshot"} : snap.err().to_string()));
            }
            const auto& topics = (*snap)->topics;
            auto out =
                call.getResults(results_size_hint).initTopics(static_cast<unsigned>(topics.size()));
            unsigned i = 0;
            for (const auto& [name, t] : topics) out.set(i++, name);
          }));
}

kj::Promise<void> capstan_service::describeConfigs(DescribeConfigsContext call) {
  static constexpr const char* method = "describeConfigs";
  ctx_->metrics.count_request(method);
  std::string topic = call.getParams().getTopic();
  call.releaseParams();
  if (auto s = validate_topic_name(topic); !s) {
    set_error(call.getResults(results_size_hint), ctx_->metrics, method, s.err());
    return kj::READY_NOW;
  }
  auto answer = [](DescribeConfigsContext& call, const service_context& ctx, result<config_map> r) {
    auto results = call.getResults(results_size_hint);
    if (!r) return set_error(results, ctx.metrics, method, r.err());
    auto out = results.initConfigs(static_cast<unsigned>(r->size()));
    unsigned i = 0;
    for (const auto& [k, v] : *r) {
      out[i].setName(k);
      out[i].setValue(v);
      ++i;
    }
  };
  if (auto cache = controller_cache(*ctx_)) {
    answer(call, *ctx_, cache->describe(topic));
    return kj::READY_NOW;
  }
  return answered_later(ask<config_map>(*ctx_, ctx_->targets.metadata, ctx_->admin_timeout,
                                        describe_atom_v, std::move(topic))
                            .then([call, ctx = ctx_, answer](reply<config_map>&& reply_) mutable {
                              answer(call, *ctx, std::move(reply_).take());
                            }));
}

kj::Promise<void> capstan_service::alterConfigs(AlterConfigsContext call) {
  static constexpr const char* method = "alterConfigs";
  ctx_->metrics.count_request(method);
  auto params = call.getParams();
  for (auto [length, what] : {std::pair{params.getConfigs().size(), "configs"},
                              std::pair{params.getDeleted().size(), "deleted"}}) {
    if (auto s = validate_list_length(length, what); !s) {
      set_error(call.getResults(), ctx_->metrics, method, s.err());
      return kj::READY_NOW;
    }
  }
  std::string topic = params.getTopic();
  auto configs = read_configs(params.getConfigs());
  std::vector<std::string> deleted;
  for (auto key : params.getDeleted()) deleted.emplace_back(key);
  call.releaseParams();
  if (auto s = validate_topic_name(topic); !s) {
    set_error(call.getResults(results_size_hint), ctx_->metrics, method, s.err());
    return kj::READY_NOW;
  }
  auto altered = ask<bool>(*ctx_, ctx_->targets.controller, ctx_->admin_timeout, altercfg_atom_v,
                           std::move(topic), std::move(configs), std::move(deleted));
  return answered_later(altered.then([call, ctx = ctx_](reply<bool>&& reply_) mutable {
    auto r = std::move(reply_).take();
    if (!r) set_error(call.getResults(results_size_hint), ctx->metrics, method, r.err());
  }));
}

kj::Promise<void> capstan_service::describeCluster(DescribeClusterContext call) {
  static constexpr const char* method = "describeCluster";
  ctx_->metrics.count_request(method);
  return answered_later(
      ask<cluster_description_ptr>(*ctx_, ctx_->targets.controller, ctx_->admin_timeout,
                                   descquorum_atom_v)
          .then([call, ctx = ctx_](reply<cluster_description_ptr>&& reply_) mutable {
            auto r = std::move(reply_).take();
            auto results = call.getResults(results_size_hint);
            if (!r) return set_error(results, ctx->metrics, method, r.err());
            if (*r) fill_description(results, **r);
          }));
}

kj::Promise<void> capstan_service::initProducerId(InitProducerIdContext call) {
  static constexpr const char* method = "initProducerId";
  ctx_->metrics.count_request(method);
  const bool transactional = call.getParams().getTransactionalId().size() != 0;
  call.releaseParams();
  if (transactional) {
    set_error(call.getResults(results_size_hint), ctx_->metrics, method,
              make_error(errc::invalid_request,
                         "transactionalId must be empty: capstan has no transactions"));
    return kj::READY_NOW;
  }
  auto id = ask<int64_t>(*ctx_, ctx_->targets.controller, ctx_->admin_timeout, initpid_atom_v);
  return answered_later(id.then([call, ctx = ctx_](reply<int64_t>&& reply_) mutable {
    auto r = std::move(reply_).take();
    auto results = call.getResults(results_size_hint);
    if (!r) return set_error(results, ctx->metrics, method, r.err());
    results.setProducerId(*r);
    results.setProducerEpoch(0);
  }));
}

kj::Promise<void> capstan_service::injectFault(InjectFaultContext call) {
  static constexpr const char* method = "injectFault";
  ctx_->metrics.count_request(method);
  auto params = call.getParams();
  auto results = call.getResults(results_size_hint);
  auto& faults = ctx_->targets.faults;
  if (!faults) {
    set_error(results, ctx_->metrics, method,
              make_error(errc::policy_violation,
                         "fault injection is off on this node (fault.injection.enable = false)"));
    return kj::READY_NOW;
  }
  std::vector<int32_t> peers;
  for (auto p : params.getPeers()) peers.push_back(p);
  status done;
  switch (params.getFault()) {
  case rpc::FaultKind::CLEAR:
    faults->clear();
    break;
  case rpc::FaultKind::ISOLATE:
    done = faults->isolate(peers);
    break;
  case rpc::FaultKind::DROP_OUTGOING:
    done = faults->drop_outgoing(peers);
    break;
  case rpc::FaultKind::DROP_INCOMING:
    done = faults->drop_incoming(peers);
    break;
  case rpc::FaultKind::DROP_PRODUCE_RESPONSES:
    done = faults->drop_produce_responses(params.getCount());
    break;
  case rpc::FaultKind::DROP_CONTROL:
    done = faults->drop_control(params.getCount(), params.getProbability());
    break;
  case rpc::FaultKind::DELAY_CONTROL:
    done = faults->delay_control(params.getDelayMs());
    break;
  case rpc::FaultKind::DISK_FULL:
  case rpc::FaultKind::DISK_READ_ONLY:
  case rpc::FaultKind::DISK_IO_ERROR:
    // Fields of another kind: the caller meant another fault.
    if (!peers.empty() || params.getCount() != 0 || params.getProbability() != 0 ||
        params.getDelayMs() != 0)
      done = make_error(errc::invalid_request,
                        "a disk fault takes no peers, count, probability or delay");
    else
      done = faults->fail_disk(params.getFault() == rpc::FaultKind::DISK_FULL ? disk_failure::full
                               : params.getFault() == rpc::FaultKind::DISK_READ_ONLY
                                 ? disk_failure::read_only
                                 : disk_failure::io_error);
    break;
  default:
    done = make_error(errc::invalid_request,
                      "unknown fault kind " + std::to_string(static_cast<int>(params.getFault())));
  }
  if (!done) set_error(results, ctx_->metrics, method, done.err());
  return kj::READY_NOW;
}

kj::Promise<void> capstan_service::produce(ProduceContext call) {
  static constexpr const char* method = "produce";
  const auto start = clock_type::now();
  ctx_->metrics.count_request(method);
  auto params = call.getParams();
  const std::string topic = params.getTopic();
  const int32_t partition = params.getPartition();
  const int16_t acks = params.getAcks();
  const int32_t timeout_ms = params.getTimeoutMs();
  auto fail = [&](const error& e) {
    set_error(call.getResults(results_size_hint), ctx_->metrics, method, e);
    return kj::Promise<void>(kj::READY_NOW);
  };
  if (auto s = validate_topic_partition(topic, partition); !s) return fail(s.err());
  if (auto s = validate_acks(acks); !s) return fail(s.err());
  if (auto s = validate_timeout(timeout_ms, "timeoutMs"); !s) return fail(s.err());
  auto records = params.getRecords();
  auto batch = validate_produce_records(bytes_view{records.begin(), records.size()});
  if (!batch) return fail(batch.err());
  auto dest = route(*ctx_, topic, partition);
  if (!dest) return fail(dest.err());
  // The params live in the connection's read buffer, and the replica patches offsets in place:
  // validation copied the batch into a buffer the request owns.
  const size_t size = batch->size();
  produce_request req{std::move(*batch), acks, timeout_ms};
  call.releaseParams();
  auto timeout = std::chrono::milliseconds{timeout_ms} + ctx_->reply_margin;
  return answered_later(
      ask<produce_result>(*ctx_, *dest, timeout, produce_atom_v, std::move(req))
          .then([call, ctx = ctx_, start, size](reply<produce_result>&& reply_) mutable {
            auto r = std::move(reply_).take();
            // A lost response (the fault switch): the batch is appended, the client hears
            // DISCONNECTED and cannot know whether it was.
            if (r && ctx->targets.faults && ctx->targets.faults->take_produce_response())
              kj::throwFatalException(KJ_EXCEPTION(
                  DISCONNECTED, "produce response dropped by the fault switch (injectFault)"));
            auto results = call.getResults(results_size_hint);
            const auto& m = ctx->metrics;
            if (r) {
              results.setBaseOffset(r->base_offset.value());
              results.setLogAppendTime(r->log_append_time);
              results.setLogStartOffset(r->log_start.value());
              if (m.bytes_in) m.bytes_in->inc(size);
            } else {
              results.setBaseOffset(-1);
              results.setLogAppendTime(no_timestamp);
              results.setLogStartOffset(-1);
              set_error(results, m, method, r.err());
            }
            if (m.produce_latency) m.produce_latency->observe_micros(micros_since(start));
          }));
}

kj::Promise<void> capstan_service::fetch(FetchContext call) {
  static constexpr const char* method = "fetch";
  const auto start = clock_type::now();
  const auto& m = ctx_->metrics;
  m.count_request(method);
  auto params = call.getParams();
  const std::string topic = params.getTopic();
  const int32_t partition = params.getPartition();
  auto fail = [&](const error& e) {
    auto results = call.getResults(results_size_hint);
    results.setHighWatermark(-1);
    results.setLogStartOffset(-1);
    set_error(results, ctx_->metrics, method, e);
    return kj::Promise<void>(kj::READY_NOW);
  };
  if (auto s = validate_topic_partition(topic, partition); !s) return fail(s.err());
  auto limits = validate_fetch(params.getOffset(), params.getMaxBytes(), params.getMinBytes(),
                               params.getMaxWaitMs(), ctx_->limits.max_fetch_bytes());
  if (!limits) return fail(limits.err());
  auto dest = route(*ctx_, topic, partition);
  if (!dest) return fail(dest.err());
  // Any negative epoch is "not checked", as Kafka's -1.
  const leader_epoch epoch{std::max(params.getCurrentLeaderEpoch(), -1)};
  const leader_epoch last_fetched{std::max(params.getLastFetchedEpoch(), -1)};
  call.releaseParams();
  fetch_request req{limits->from,        limits->max_bytes, limits->min_bytes,
                    limits->max_wait_ms, epoch,             last_fetched};
  std::shared_ptr<parked_slot> slot;
  if (req.max_wait_ms > 0 && req.min_bytes > 0) {
    if (ctx_->parked_fetches.try_park(*parked_)) {
      slot = std::make_shared<parked_slot>(ctx_, parked_);
      if (m.parked_fetches) m.parked_fetches->set(ctx_->parked_fetches.parked());
    } else {
      // As Kafka would: answered at once with what is there, never an error.
      req.max_wait_ms = 0;
      if (m.fetches_not_parked) m.fetches_not_parked->inc();
    }
  }
  auto timeout = std::chrono::milliseconds{req.max_wait_ms} + ctx_->reply_margin;
  const int64_t fetch_bytes = slot ? 0 : req.max_bytes;
  const bool parked = slot != nullptr;
  return answered_later(
      ask_holding<fetch_result>(*ctx_, std::move(slot), *dest, timeout, fetch_atom_v, req)
          .then([call, ctx = ctx_, pins = pins_, start](reply<fetch_result>&& reply_) mutable {
            auto r = std::move(reply_).take();
            auto results = call.getResults(results_size_hint);
            const auto& m = ctx->metrics;
            if (!r) {
              results.setHighWatermark(-1);
              results.setLogStartOffset(-1);
              set_error(results, m, method, r.err());
            } else {
              results.setHighWatermark(r->high_watermark.value());
              results.setLogStartOffset(r->log_start.value());
              if (r->diverging) {
                results.setDivergingEpoch(r->diverging->epoch.value());
                results.setDivergingEndOffset(r->diverging->end.value());
              }
              const log_slice& slice = r->records;
              if (!slice.empty()) {
                // Zero copy needs 8-byte aligned data (log_slice guarantees it, and that the slice
                // may be read up to its last whole word); copy anything else rather than fail.
                if (reinterpret_cast<uintptr_t>(slice.data) % sizeof(capnp::word) == 0) {
                  auto orphan =
                      capnp::Orphanage::getForMessageContaining(results).referenceExternalData(
                          capnp::Data::Reader(slice.data, slice.size));
                  results.adoptRecords(kj::mv(orphan));
                  pins->owners.emplace(slice.data, slice.owner);
                } else {
                  results.setRecords(capnp::Data::Reader(slice.data, slice.size));
                }
                if (m.bytes_out) m.bytes_out->inc(slice.size);
              }
            }
            if (m.fetch_latency) m.fetch_latency->observe_micros(micros_since(start));
          }),
      fetch_bytes, parked);
}

kj::Promise<void> capstan_service::listOffsets(ListOffsetsContext call) {
  static constexpr const char* method = "listOffsets";
  ctx_->metrics.count_request(method);
  auto params = call.getParams();
  const std::string topic = params.getTopic();
  const int32_t partition = params.getPartition();
  const int64_t timestamp = params.getTimestamp();
  auto fail = [&](const error& e) {
    auto results = call.getResults(results_size_hint);
    results.setOffset(-1);
    results.setTimestamp(no_timestamp);
    set_error(results, ctx_->metrics, method, e);
    return kj::Promise<void>(kj::READY_NOW);
  };
  if (auto s = validate_topic_partition(topic, partition); !s) return fail(s.err());
  if (auto s = validate_list_offsets_timestamp(timestamp); !s) return fail(s.err());
  auto dest = route(*ctx_, topic, partition);
  if (!dest) return fail(dest.err());
  call.releaseParams();
  return answered_later(ask<list_offsets_result>(*ctx_, *dest, ctx_->admin_timeout, offsets_atom_v,
                                                 timestamp_ms{timestamp})
                            .then([call, ctx = ctx_](reply<list_offsets_result>&& reply_) mutable {
                              auto r = std::move(reply_).take();
                              auto results = call.getResults(results_size_hint);
                              if (!r) {
                                results.setOffset(-1);
                                results.setTimestamp(no_timestamp);
                                return set_error(results, ctx->metrics, method, r.err());
                              }
                              results.setOffset(r->found);
                              results.setTimestamp(r->timestamp);
                            }));
}

namespace {

void fill_group_offsets(capnp::List<rpc::GroupOffset>::Builder out, const group_offsets& in) {
  for (size_t i = 0; i < in.size(); ++i) {
    auto b = out[static_cast<unsigned>(i)];
    b.setTopic(in[i].topic);
    b.setPartition(in[i].partition);
    b.setOffset(in[i].offset);
    b.setMetadata(in[i].metadata);
    b.setErrorCode(static_cast<uint8_t>(in[i].error));
    b.setLeaderEpoch(in[i].leader_epoch);
  }
}

// Checks every entry; the first bad one fails the whole request.
status validate_group_entries(const group_offsets& entries) {
  for (const auto& e : entries)
    if (auto s = validate_topic_partition(e.topic, e.partition); !s) return s;
  return {};
}

} // namespace

kj::Promise<void> capstan_service::commitOffsets(CommitOffsetsContext call) {
  static constexpr const char* method = "commitOffsets";
  ctx_->metrics.count_request(method);
  auto params = call.getParams();
  if (auto s = validate_list_length(params.getOffsets().size(), "offsets"); !s) {
    set_error(call.getResults(), ctx_->metrics, method, s.err());
    return kj::READY_NOW;
  }
  std::string group = params.getGroup();
  group_offsets entries;
  for (auto o : params.getOffsets())
    entries.push_back(group_offset{o.getTopic(), o.getPartition(), o.getOffset(), o.getMetadata(),
                                   errc::none, o.getLeaderEpoch()});
  group_member_ref member{params.getMemberId(), params.getGroupInstanceId(), params.getGeneration()};
  call.releaseParams();
  auto check = validate_group_id(group);
  if (check) check = validate_member_field(member.member_id, "member id");
  if (check) check = validate_member_field(member.group_instance_id, "group instance id");
  if (check) check = validate_group_entries(entries);
  if (check) {
    for (const auto& e : entries)
      if (e.offset < -1)
        check =
            make_error(errc::offset_out_of_range,
                       "committed offset must be >= 0 (or -1), not " + std::to_string(e.offset));
      else if (e.leader_epoch < -1)
        check = make_error(errc::invalid_request, "committed leader epoch must be >= 0 (or -1), not " +
                                                    std::to_string(e.leader_epoch));
  }
  if (!check) {
    set_error(call.getResults(results_size_hint), ctx_->metrics, method, check.err());
    return kj::READY_NOW;
  }
  return answered_later(ask<group_offsets>(*ctx_, ctx_->targets.groups, ctx_->admin_timeout,
                                           commit_atom_v, std::move(group), std::move(member),
                                           std::move(entries))
                            .then([call, ctx = ctx_](reply<group_offsets>&& reply_) mutable {
                              auto r = std::move(reply_).take();
                              auto results = call.getResults(results_size_hint);
                              if (!r) return set_error(results, ctx->metrics, method, r.err());
                              fill_group_offsets(
                                  results.initResults(static_cast<unsigned>(r->size())), *r);
                            }));
}

kj::Promise<void> capstan_service::fetchOffsets(FetchOffsetsContext call) {
  static constexpr const char* method = "fetchOffsets";
  ctx_->metrics.count_request(method);
  auto params = call.getParams();
  if (auto s = validate_list_length(params.getPartitions().size(), "partitions"); !s) {
    set_error(call.getResults(), ctx_->metrics, method, s.err());
    return kj::READY_NOW;
  }
  std::string group = params.getGroup();
  group_offsets entries;
  for (auto tp : params.getPartitions())
    entries.push_back(group_offset{tp.getTopic(), tp.getPartition(), -1, {}, errc::none});
  call.releaseParams();
  auto check = validate_group_id(group);
  if (check) check = validate_group_entries(entries);
  if (!check) {
    set_error(call.getResults(results_size_hint), ctx_->metrics, method, check.err());
    return kj::READY_NOW;
  }
  return answered_later(ask<group_offsets>(*ctx_, ctx_->targets.groups, ctx_->admin_timeout,
                                           fetch_atom_v, std::move(group), std::move(entries))
                            .then([call, ctx = ctx_](reply<group_offsets>&& reply_) mutable {
                              auto r = std::move(reply_).take();
                              auto results = call.getResults(results_size_hint);
                              if (!r) return set_error(results, ctx->metrics, method, r.err());
                              fill_group_offsets(
                                  results.initOffsets(static_cast<unsigned>(r->size())), *r);
                            }));
}

kj::Promise<void> capstan_service::createPartitions(CreatePartitionsContext call) {
  static constexpr const char* method = "createPartitions";
  ctx_->metrics.count_request(method);
  std::string topic = call.getParams().getTopic();
  const int32_t total = call.getParams().getTotalCount();
  call.releaseParams();
  if (auto s = validate_topic_name(topic); !s) {
    set_error(call.getResults(results_size_hint), ctx_->metrics, method, s.err());
    return kj::READY_NOW;
  }
  const auto name = topic;
  auto grown = ask<bool>(*ctx_, ctx_->targets.controller, ctx_->admin_timeout, mkparts_atom_v,
                         std::move(topic), total);
  return answered_later(
      grown.then([call, ctx = ctx_, name, total](reply<bool>&& reply_) mutable -> kj::Promise<void> {
        auto r = std::move(reply_).take();
        if (!r) {
          set_error(call.getResults(results_size_hint), ctx->metrics, method, r.err());
          return kj::READY_NOW;
        }
        return await_cached(ctx, name, static_cast<size_t>(total)).attach(kj::mv(call));
      }));
}

namespace {

// Per-partition outcomes (of electLeaders or reassignPartitions) into the call's results.
template <class Context>
void answer_outcomes(Context& call, const service_context& ctx, const char* method,
                     result<election_outcomes> r) {
  auto results = call.getResults(results_size_hint);
  if (!r) return set_error(results, ctx.metrics, method, r.err());
  auto out = results.initResults(static_cast<unsigned>(r->size()));
  for (unsigned i = 0; i < out.size(); ++i) {
    const auto& x = (*r)[i];
    out[i].setTopic(x.topic);
    out[i].setPartition(x.partition);
    out[i].setErrorCode(static_cast<uint8_t>(x.error));
    if (!x.message.empty()) out[i].setErrorMessage(x.message);
  }
}

} // namespace

kj::Promise<void> capstan_service::electLeaders(ElectLeadersContext call) {
  static constexpr const char* method = "electLeaders";
  ctx_->metrics.count_request(method);
  auto params = call.getParams();
  if (auto s = validate_list_length(params.getPartitions().size(), "partitions"); !s) {
    set_error(call.getResults(results_size_hint), ctx_->metrics, method, s.err());
    return kj::READY_NOW;
  }
  election_targets wanted;
  for (auto tp : params.getPartitions())
    wanted.push_back(election_target{tp.getTopic(), tp.getPartition()});
  call.releaseParams();
  auto answer = [](ElectLeadersContext& call, const service_context& ctx,
                   result<election_outcomes> r) {
    answer_outcomes(call, ctx, method, std::move(r));
  };
  return answered_later(
      ask<election_outcomes>(*ctx_, ctx_->targets.controller, ctx_->admin_timeout, elect_atom_v,
                             std::move(wanted))
          .then([call, ctx = ctx_, answer](reply<election_outcomes>&& reply_) mutable {
            answer(call, *ctx, std::move(reply_).take());
          }));
}

kj::Promise<void> capstan_service::reassignPartitions(ReassignPartitionsContext call) {
  static constexpr const char* method = "reassignPartitions";
  ctx_->metrics.count_request(method);
  auto refuse = [&](const error& why) {
    set_error(call.getResults(results_size_hint), ctx_->metrics, method, why);
    return kj::READY_NOW;
  };
  auto params = call.getParams();
  if (auto s = validate_list_length(params.getPartitions().size(), "partitions"); !s)
    return refuse(s.err());
  reassignment_items items;
  for (auto t : params.getPartitions()) {
    if (auto s = validate_list_length(t.getReplicas().size(), "replicas"); !s)
      return refuse(s.err());
    reassignment_item item{t.getTopic(), t.getPartition(), t.getCancel(), {}};
    for (auto n : t.getReplicas()) item.replicas.push_back(n);
    items.push_back(std::move(item));
  }
  call.releaseParams();
  return answered_later(ask<election_outcomes>(*ctx_, ctx_->targets.controller, ctx_->admin_timeout,
                                               reassign_atom_v, std::move(items))
                            .then([call, ctx = ctx_](reply<election_outcomes>&& reply_) mutable {
                              answer_outcomes(call, *ctx, method, std::move(reply_).take());
                            }));
}

kj::Promise<void> capstan_service::findCoordinator(FindCoordinatorContext call) {
  static constexpr const char* method = "findCoordinator";
  ctx_->metrics.count_request(method);
  std::string group = call.getParams().getGroup();
  call.releaseParams();
  call.getResults().setNodeId(-1);
  if (auto s = validate_group_id(group); !s) {
    set_error(call.getResults(), ctx_->metrics, method, s.err());
    return kj::READY_NOW;
  }
  auto cache = controller_cache(*ctx_);
  if (!cache) {
    set_error(call.getResults(), ctx_->metrics, method,
              make_error(errc::coordinator_not_available,
                         "this node holds no metadata from the controller yet"));
    return kj::READY_NOW;
  }
  auto where = find_coordinator(cache->cluster(), group);
  if (where.code == errc::none) {
    auto results = call.getResults();
    results.setNodeId(where.node);
    results.setHost(where.host);
    results.setPort(where.port);
    return kj::READY_NOW;
  }
  if (where.partition >= 0) {
    set_error(call.getResults(), ctx_->metrics, method, make_error(where.code, where.message));
    return kj::READY_NOW;
  }
  // The group's first call on this cluster: the controller creates the offsets topic, and the
  // caller retries until its partition has a leader.
  auto plan = plan_offsets_topic(ctx_->targets.offsets_partitions,
                                 ctx_->targets.offsets_replication_factor,
                                 cache->cluster().brokers.size());
  if (plan.capped)
    spdlog::warn("node {}: creating {} with replication factor {}, not the {} of "
                 "offsets.topic.replication.factor: only {} nodes are live",
                 ctx_->targets.node, consumer_offsets_topic, plan.spec.replication_factor,
                 ctx_->targets.offsets_replication_factor, cache->cluster().brokers.size());
  return answered_later(
      ask<topic_metadata>(*ctx_, ctx_->targets.controller, ctx_->admin_timeout, mktopic_atom_v,
                          plan.spec)
          .then([call, ctx = ctx_, where](reply<topic_metadata>&& reply_) mutable {
            auto r = std::move(reply_).take();
            if (r)
              spdlog::info("node {}: the controller created {} for the consumer groups",
                           ctx->targets.node, consumer_offsets_topic);
            else if (r.code() != errc::topic_already_exists)
              spdlog::warn("node {}: the controller did not create {}: {}", ctx->targets.node,
                           consumer_offsets_topic, r.err().to_string());
            set_error(call.getResults(), ctx->metrics, method,
                      make_error(errc::coordinator_not_available,
                                 where.message + "; it is being created, retry"));
          }));
}

kj::Promise<void> capstan_service::listGroups(ListGroupsContext call) {
  static constexpr const char* method = "listGroups";
  ctx_->metrics.count_request(method);
  return answered_later(
      ask<std::vector<std::string>>(*ctx_, ctx_->targets.groups, ctx_->admin_timeout,
                                    lsgroups_atom_v)
          .then([call, ctx = ctx_](reply<std::vector<std::string>>&& reply_) mutable {
            auto r = std::move(reply_).take();
            auto results = call.getResults();
            if (!r) return set_error(results, ctx->metrics, method, r.err());
            auto list = results.initGroups(static_cast<unsigned>(r->size()));
            for (unsigned i = 0; i < r->size(); ++i) list.set(i, (*r)[i]);
          }));
}

kj::Promise<void> capstan_service::unregisterNode(UnregisterNodeContext call) {
  static constexpr const char* method = "unregisterNode";
  ctx_->metrics.count_request(method);
  const int32_t node = call.getParams().getNodeId();
  call.releaseParams();
  return answered_later(
      ask<bool>(*ctx_, ctx_->targets.controller, ctx_->admin_timeout, unregister_atom_v, node)
          .then([call, ctx = ctx_](reply<bool>&& reply_) mutable {
            auto r = std::move(reply_).take();
            if (!r) set_error(call.getResults(results_size_hint), ctx->metrics, method, r.err());
          }));
}

// ---- group membership ----

namespace {

// The first bad field of a member's identity, if any.
status validate_member(const std::string& group, const std::string& member,
                       const std::string& instance) {
  if (auto s = validate_group_id(group); !s) return s;
  if (auto s = validate_member_field(member, "member id"); !s) return s;
  return validate_member_field(instance, "group instance id");
}

} // namespace

kj::Promise<void> capstan_service::joinGroup(JoinGroupContext call) {
  static constexpr const char* method = "joinGroup";
  ctx_->metrics.count_request(method);
  auto params = call.getParams();
  std::string group = params.getGroup();
  join_group_request req;
  req.member_id = params.getMemberId();
  req.group_instance_id = params.getGroupInstanceId();
  req.client_id = params.getClientId();
  req.session_timeout_ms = params.getSessionTimeoutMs();
  req.rebalance_timeout_ms = params.getRebalanceTimeoutMs();
  req.protocol_type = params.getProtocolType();
  auto check = validate_list_length(params.getProtocols().size(), "protocols");
  if (check) {
    for (auto p : params.getProtocols()) {
      auto metadata = p.getMetadata();
      req.protocols.push_back(group_protocol{p.getName(), bytes(metadata.begin(), metadata.end())});
    }
  }
  call.releaseParams();
  if (check) check = validate_member(group, req.member_id, req.group_instance_id);
  if (check) check = validate_member_field(req.client_id, "client id");
  if (check) check = validate_member_field(req.protocol_type, "protocol type");
  if (check && req.protocol_type.empty()) check = make_error(errc::invalid_request, "protocol type is empty");
  if (check && req.protocols.empty()) check = make_error(errc::invalid_request, "no protocols offered");
  for (const auto& p : req.protocols) {
    if (check) check = validate_member_field(p.name, "protocol name");
    if (check && p.name.empty()) check = make_error(errc::invalid_request, "a protocol name is empty");
  }
  if (check && req.rebalance_timeout_ms <= 0)
    check = make_error(errc::invalid_request, "rebalance timeout must be positive, not " +
                                                  std::to_string(req.rebalance_timeout_ms));
  if (!check) {
    auto results = call.getResults(results_size_hint);
    results.setMemberId(req.member_id);
    set_error(results, ctx_->metrics, method, check.err());
    return kj::READY_NOW;
  }
  // The answer waits for the join phase, which ends within the group's rebalance timeout.
  const auto wait = ctx_->admin_timeout + std::chrono::milliseconds(req.rebalance_timeout_ms);
  return answered_later(
      ask<join_group_response>(*ctx_, ctx_->targets.groups, wait, joingrp_atom_v, std::move(group),
                               std::move(req))
          .then([call, ctx = ctx_](reply<join_group_response>&& reply_) mutable {
            auto r = std::move(reply_).take();
            auto results = call.getResults(results_size_hint);
            if (!r) return set_error(results, ctx->metrics, method, r.err());
            results.setMemberId(r->member_id);
            if (r->error != errc::none)
              return set_error(results, ctx->metrics, method, make_error(r->error, r->message));
            results.setGeneration(r->generation);
            results.setProtocolName(r->protocol_name);
            results.setLeader(r->leader);
            auto members = results.initMembers(static_cast<unsigned>(r->members.size()));
            for (unsigned i = 0; i < members.size(); ++i) {
              const auto& m = r->members[i];
              members[i].setMemberId(m.member_id);
              members[i].setGroupInstanceId(m.group_instance_id);
              members[i].setMetadata(capnp::Data::Reader(m.metadata.data(), m.metadata.size()));
            }
          }));
}

kj::Promise<void> capstan_service::syncGroup(SyncGroupContext call) {
  static constexpr const char* method = "syncGroup";
  ctx_->metrics.count_request(method);
  auto params = call.getParams();
  std::string group = params.getGroup();
  sync_group_request req;
  req.member_id = params.getMemberId();
  req.group_instance_id = params.getGroupInstanceId();
  req.generation = params.getGeneration();
  auto check = validate_list_length(params.getAssignments().size(), "assignments");
  if (check) {
    for (auto a : params.getAssignments()) {
      auto data = a.getAssignment();
      req.assignments.push_back(member_assignment{a.getMemberId(), bytes(data.begin(), data.end())});
    }
  }
  call.releaseParams();
  if (check) check = validate_member(group, req.member_id, req.group_instance_id);
  if (!check) {
    set_error(call.getResults(results_size_hint), ctx_->metrics, method, check.err());
    return kj::READY_NOW;
  }
  // A follower's sync waits for the leader's, which comes within the rebalance.
  const auto wait = 2 * ctx_->admin_timeout;
  return answered_later(
      ask<sync_group_response>(*ctx_, ctx_->targets.groups, wait, syncgrp_atom_v, std::move(group),
                               std::move(req))
          .then([call, ctx = ctx_](reply<sync_group_response>&& reply_) mutable {
            auto r = std::move(reply_).take();
            auto results = call.getResults(results_size_hint);
            if (!r) return set_error(results, ctx->metrics, method, r.err());
            if (r->error != errc::none)
              return set_error(results, ctx->metrics, method, make_error(r->error, r->message));
            results.setAssignment(capnp::Data::Reader(r->assignment.data(), r->assignment.size()));
          }));
}

kj::Promise<void> capstan_service::heartbeat(HeartbeatContext call) {
  static constexpr const char* method = "heartbeat";
  ctx_->metrics.count_request(method);
  auto params = call.getParams();
  std::string group = params.getGroup();
  group_member_ref member{params.getMemberId(), params.getGroupInstanceId(), params.getGeneration()};
  call.releaseParams();
  if (auto s = validate_member(group, member.member_id, member.group_instance_id); !s) {
    set_error(call.getResults(), ctx_->metrics, method, s.err());
    return kj::READY_NOW;
  }
  return answered_later(
      ask<bool>(*ctx_, ctx_->targets.groups, ctx_->admin_timeout, beat_atom_v, std::move(group),
                std::move(member))
          .then([call, ctx = ctx_](reply<bool>&& reply_) mutable {
            auto r = std::move(reply_).take();
            if (!r) set_error(call.getResults(), ctx->metrics, method, r.err());
          }));
}

kj::Promise<void> capstan_service::leaveGroup(LeaveGroupContext call) {
  static constexpr const char* method = "leaveGroup";
  ctx_->metrics.count_request(method);
  auto params = call.getParams();
  std::string group = params.getGroup();
  group_member_ref member{params.getMemberId(), params.getGroupInstanceId(), -1};
  call.releaseParams();
  if (auto s = validate_member(group, member.member_id, member.group_instance_id); !s) {
    set_error(call.getResults(), ctx_->metrics, method, s.err());
    return kj::READY_NOW;
  }
  return answered_later(
      ask<bool>(*ctx_, ctx_->targets.groups, ctx_->admin_timeout, leavegrp_atom_v, std::move(group),
                std::move(member))
          .then([call, ctx = ctx_](reply<bool>&& reply_) mutable {
            auto r = std::move(reply_).take();
            if (!r) set_error(call.getResults(), ctx->metrics, method, r.err());
          }));
}

kj::Promise<void> capstan_service::describeGroup(DescribeGroupContext call) {
  static constexpr const char* method = "describeGroup";
  ctx_->metrics.count_request(method);
  std::string group = call.getParams().getGroup();
  call.releaseParams();
  if (auto s = validate_group_id(group); !s) {
    set_error(call.getResults(), ctx_->metrics, method, s.err());
    return kj::READY_NOW;
  }
  return answered_later(
      ask<group_summary>(*ctx_, ctx_->targets.groups, ctx_->admin_timeout, descgrp_atom_v,
                         std::move(group))
          .then([call, ctx = ctx_](reply<group_summary>&& reply_) mutable {
            auto r = std::move(reply_).take();
            auto results = call.getResults(results_size_hint);
            if (!r) return set_error(results, ctx->metrics, method, r.err());
            results.setState(r->state);
            results.setProtocolType(r->protocol_type);
            results.setProtocolName(r->protocol_name);
            results.setGeneration(r->generation);
            results.setLeader(r->leader);
            auto members = results.initMembers(static_cast<unsigned>(r->members.size()));
            for (unsigned i = 0; i < members.size(); ++i) {
              const auto& m = r->members[i];
              members[i].setMemberId(m.member_id);
              members[i].setGroupInstanceId(m.group_instance_id);
              members[i].setClientId(m.client_id);
              members[i].setAssignment(capnp::Data::Reader(m.assignment.data(), m.assignment.size()));
            }
          }));
}

kj::Promise<void> capstan_service::deleteGroup(DeleteGroupContext call) {
  static constexpr const char* method = "deleteGroup";
  ctx_->metrics.count_request(method);
  std::string group = call.getParams().getGroup();
  call.releaseParams();
  if (auto s = validate_group_id(group); !s) {
    set_error(call.getResults(), ctx_->metrics, method, s.err());
    return kj::READY_NOW;
  }
  return answered_later(
      ask<bool>(*ctx_, ctx_->targets.groups, ctx_->admin_timeout, delgrp_atom_v, std::move(group))
          .then([call, ctx = ctx_](reply<bool>&& reply_) mutable {
            auto r = std::move(reply_).take();
            if (!r) set_error(call.getResults(), ctx->metrics, method, r.err());
          }));
}

} // namespace capstan
