#pragma once

// cluster_client over Cap'n Proto RPC: one kj event-loop thread owns every connection, the
// metadata cache and every in-flight call. Other threads hand it work through a queue woken by a
// cross-thread fulfiller (never blocking the loop); blocking calls wait on a std::future that the
// loop completes. Every call is bounded by request.timeout.ms; routed calls (produce, fetch,
// listOffsets) retry retriable errors after a metadata refresh until their deadline.
//
// One class, its members defined by concern in the files named beside each group below, so that
// no file mixes connections, routing, retries, coordinator lookup and every call. Internal to
// runtime/client: only its own .cpp files include this header, which keeps capnp and kj out of
// cluster_client.hpp.

// GCC 12 reports std::variant (inside capstan::result) held in kj::Maybe inside kj promise nodes
// as maybe-uninitialized; kj only destroys the value it constructed (false positive). Here, ahead
// of the kj headers, it covers every file of this class.
#if defined(__GNUC__) && !defined(__clang__) // clang has no such warning
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "runtime/client/cluster_client.hpp"

#include <chrono>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <kj/async-io.h>

#include "runtime/client/broker_connections.hpp"
#include "runtime/client/rpc_errors.hpp"
#include "schema/client.capnp.h"

namespace capstan::client {

using steady = std::chrono::steady_clock;

class rpc_cluster_client final : public cluster_client, private kj::TaskSet::ErrorHandler {
public:
  // client_loop.cpp
  explicit rpc_cluster_client(client_config config);
  ~rpc_cluster_client() noexcept override;

  rpc_cluster_client(const rpc_cluster_client&) = delete;
  rpc_cluster_client& operator=(const rpc_cluster_client&) = delete;

  // bootstrap.cpp
  status bootstrap();

  // admin_calls.cpp
  result<cluster_metadata> metadata(const std::vector<std::string>& topics) override;
  result<topic_metadata> create_topic(const topic_spec& spec) override;
  status delete_topic(const std::string& name) override;
  result<std::vector<std::string>> list_topics() override;
  result<std::map<std::string, std::string>> describe_configs(const std::string& topic) override;
  status alter_configs(const std::string& topic, const std::map<std::string, std::string>& configs,
                       const std::vector<std::string>& deleted) override;
  status create_partitions(const std::string& topic, int32_t total) override;
  result<std::vector<election_result>>
  elect_leaders(const std::vector<std::pair<std::string, int32_t>>& partitions) override;
  result<std::vector<election_result>>
  reassign_partitions(const std::vector<reassignment_request>& partitions) override;
  status unregister_node(int32_t node) override;
  status add_voter(int32_t node, const std::string& endpoint) override;
  status remove_voter(int32_t node) override;
  result<producer_identity> init_producer_id() override;
  result<cluster_description> describe_cluster() override;
  status inject_fault(const fault_request& fault) override;

  // data_calls.cpp
  void produce(const std::string& topic, int32_t partition, int16_t acks,
               std::shared_ptr<const bytes> data,
               std::function<void(result<produce_response>)> done) override;
  void fetch(const std::string& topic, int32_t partition, offset from,
             leader_epoch last_fetched_epoch, int32_t max_bytes, int32_t min_bytes,
             int32_t max_wait_ms, steady::time_point retry_until,
             std::function<void(result<fetch_response>)> done) override;
  result<int64_t> list_offsets(const std::string& topic, int32_t partition,
                               int64_t timestamp) override;

  // group_calls.cpp
  result<std::vector<committed_offset>> commit_offsets(const std::string& group,
                                                       const std::vector<committed_offset>& offsets,
                                                       const group_member_ref& member) override;
  result<std::vector<committed_offset>>
  fetch_offsets(const std::string& group,
                const std::vector<std::pair<std::string, int32_t>>& partitions) override;
  result<join_group_response> join_group(const std::string& group,
                                         const join_group_request& join) override;
  result<sync_group_response> sync_group(const std::string& group,
                                         const sync_group_request& sync) override;
  status heartbeat(const std::string& group, const group_member_ref& member) override;
  status leave_group(const std::string& group, const group_member_ref& member) override;
  status delete_group(const std::string& group) override;
  result<group_summary> describe_group(const std::string& group) override;
  result<std::vector<std::string>> list_groups() override;

private:
  // group_calls.cpp
  status member_call(const std::string& group, const group_member_ref& member, bool leave);
  kj::Promise<result<std::vector<std::string>>> list_groups_at(std::vector<std::string> nodes,
                                                               size_t i,
                                                               std::vector<std::string> found,
                                                               steady::time_point deadline);
  static std::vector<committed_offset> to_offsets(capnp::List<rpc::GroupOffset>::Reader list);

  // client_loop.cpp; run_sync and with_timeout below, as every call instantiates them.
  void run(std::promise<void>& started);
  void taskFailed(kj::Exception&& exception) override;
  void wake();
  void on_loop(std::function<void()> job);
  bool on_client_thread() const override { return std::this_thread::get_id() == loop_thread_; }
  // Runs `start` on the loop thread and waits for its result (cluster_client::await).
  template <class T>
  result<T> run_sync(std::function<kj::Promise<result<T>>()> start);
  template <class T>
  kj::Promise<result<T>> with_timeout(kj::Promise<result<T>> p, int64_t ms = -1);

  // admin_calls.cpp
  template <class Build>
  status run_status(Build build);
  capnp_cap admin_cap();

  // bootstrap.cpp
  kj::Promise<result<bool>> handshake(const std::string& address);

  // metadata_routing.cpp
  kj::Promise<result<cluster_metadata>> metadata_call(capnp_cap cap,
                                                      std::vector<std::string> topics, bool all);
  void forget_topic(const std::string& topic);
  kj::Promise<result<cluster_metadata>> refresh_metadata(std::vector<std::string> topics,
                                                         std::optional<std::string> first = {});
  std::vector<std::string> addresses_to_ask(std::optional<std::string> first = {});
  // Calls `candidates[i]`, then the next while one cannot be reached (NETWORK_EXCEPTION,
  // REQUEST_TIMED_OUT), for the calls every node answers alike from its metadata cache
  // (metadata, describeConfigs). Instantiated in metadata_routing.cpp.
  template <class T>
  kj::Promise<result<T>> at_first_reachable(std::vector<std::string> candidates, size_t i,
                                            std::function<kj::Promise<result<T>>(capnp_cap)> call);
  int32_t leader_epoch_of(const std::string& topic, int32_t partition) const;
  bool leadership_can_move(const std::string& topic, int32_t partition) const;
  std::optional<std::string> leader_address(const std::string& topic, int32_t partition) const;

  // at_coordinator.hpp (the templates group_calls.cpp instantiates) and find_coordinator.cpp
  template <class T>
  kj::Promise<result<T>> at_coordinator(std::string group,
                                        std::function<kj::Promise<result<T>>(capnp_cap)> call,
                                        steady::time_point deadline, int64_t call_timeout_ms = -1);
  static bool coordinator_retriable(errc code);
  template <class T>
  kj::Promise<result<T>>
  coordinator_retry(std::string group, std::function<kj::Promise<result<T>>(capnp_cap)> call,
                    steady::time_point deadline, error last, int64_t call_timeout_ms);
  kj::Promise<result<std::string>> find_coordinator(std::string group);
  kj::Promise<result<std::string>>
  try_find_coordinator(std::string group, std::vector<std::string> candidates, size_t i);

  // routed_call.hpp (the templates data_calls.cpp instantiates)
  template <class T>
  struct routed_call;
  template <class T>
  static void keep_refresh_error(routed_call<T>& state, const result<cluster_metadata>& md);
  template <class T>
  void start_routed(const std::string& topic, int32_t partition, int64_t budget_ms,
                    std::function<kj::Promise<result<T>>(capnp_cap&)> call,
                    std::function<void(result<T>)> done,
                    steady::time_point retry_until = steady::time_point::max());
  template <class T>
  kj::Promise<result<T>> attempt(std::shared_ptr<routed_call<T>> state);
  template <class T>
  kj::Promise<result<T>> retry_at_moved_leader(std::shared_ptr<routed_call<T>> state,
                                               std::string refused);
  template <class T>
  kj::Promise<result<T>> follow_move(std::shared_ptr<routed_call<T>> state, std::string refused,
                                     std::optional<std::string> ask_first);
  template <class T>
  kj::Promise<result<T>> retry_later(std::shared_ptr<routed_call<T>> state);

  std::thread thread_;
  std::thread::id loop_thread_;

  std::mutex mu_; // guards the fields below up to loop-only state
  // Jobs for the loop thread, run one at a time in the order queued (on_loop).
  std::deque<std::function<void()>> queue_;
  kj::Own<kj::CrossThreadPromiseFulfiller<void>> wake_;
  bool stopping_ = false;
  std::string admin_address_;

  // Loop-thread only.
  kj::AsyncIoContext* io_ = nullptr;
  kj::TaskSet* tasks_ = nullptr;
  broker_connections* connections_ = nullptr;
  cluster_metadata cache_;
  // Each group's coordinator as last found (its client address).
  std::map<std::string, std::string> coordinators_;
};

template <class T>
result<T> rpc_cluster_client::run_sync(std::function<kj::Promise<result<T>>()> start) {
  return await<T>([&](std::function<void(result<T>)> done) {
    on_loop([this, start = std::move(start), done = std::move(done)] {
      tasks_->add(kj::evalNow(start).then([done](result<T>&& r) { done(std::move(r)); },
                                          [done](kj::Exception&& e) { done(from_exception(e)); }));
    });
  });
}

template <class T>
kj::Promise<result<T>> rpc_cluster_client::with_timeout(kj::Promise<result<T>> p, int64_t ms) {
  if (ms < 0) ms = config_.request_timeout_ms;
  return p.exclusiveJoin(io_->provider->getTimer().afterDelay(ms * kj::MILLISECONDS).then([ms]() {
    return result<T>(
        make_error(errc::request_timed_out, "no response within " + std::to_string(ms) + " ms"));
  }));
}

} // namespace capstan::client
