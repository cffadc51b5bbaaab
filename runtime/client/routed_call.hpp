#pragma once

// A call routed to a partition leader and its retries after a metadata refresh until its
// deadline: in a header, as each data call instantiates them (data_calls.cpp). Internal to
// runtime/client.

#include "runtime/client/rpc_cluster_client.hpp"

namespace capstan::client {

inline bool retriable(errc code) {
  return code == errc::not_leader_or_follower || code == errc::unknown_topic_or_partition ||
         code == errc::network_exception || code == errc::not_enough_replicas ||
         code == errc::fenced_leader_epoch || code == errc::unknown_leader_epoch ||
         code == errc::kafka_storage_error;
}

template <class T>
struct rpc_cluster_client::routed_call {
  std::string topic;
  int32_t partition = 0;
  steady::time_point deadline;
  // No retry starts after this (the caller's own bound); an attempt in flight keeps `deadline`.
  steady::time_point retry_until = steady::time_point::max();
  std::function<kj::Promise<result<T>>(capnp_cap&)> call;
  std::function<void(result<T>)> done;
  std::optional<error> last;
  // Asked for metadata at once after a NOT_LEADER_OR_FOLLOWER or a lost connection (and
  // retried at a moved leader without the back-off) once: never again, so two nodes that each
  // name the other while metadata settles are not asked in a tight loop.
  bool followed_move = false;
};

// A failed metadata refresh is the error to report, unless it only says the topic is unknown
// (the call's own error says more).
template <class T>
void rpc_cluster_client::keep_refresh_error(routed_call<T>& state,
                                            const result<cluster_metadata>& md) {
  if (!md && md.code() != errc::unknown_topic_or_partition) state.last = md.err();
}

template <class T>
void rpc_cluster_client::start_routed(const std::string& topic, int32_t partition,
                                      int64_t budget_ms,
                                      std::function<kj::Promise<result<T>>(capnp_cap&)> call,
                                      std::function<void(result<T>)> done,
                                      steady::time_point retry_until) {
  auto state = std::make_shared<routed_call<T>>();
  state->topic = topic;
  state->partition = partition;
  state->deadline = steady::now() + std::chrono::milliseconds(budget_ms);
  state->retry_until = retry_until;
  state->call = std::move(call);
  state->done = std::move(done);
  on_loop([this, state] {
    tasks_->add(
        attempt(state).then([state](result<T>&& r) { state->done(std::move(r)); },
                            [state](kj::Exception&& e) { state->done(from_exception(e)); }));
  });
}

template <class T>
kj::Promise<result<T>> rpc_cluster_client::attempt(std::shared_ptr<routed_call<T>> state) {
  auto address = leader_address(state->topic, state->partition);
  if (!address) {
    if (!state->last) {
      // First miss: the cache may just not know the topic yet.
      state->last =
          make_error(errc::unknown_topic_or_partition, "no leader known for " + state->topic + "-" +
                                                           std::to_string(state->partition));
      return refresh_metadata({state->topic}).then([this, state](result<cluster_metadata>&& md) {
        keep_refresh_error(*state, md);
        return attempt(state);
      });
    }
    return retry_later(state);
  }
  auto remaining =
      std::chrono::duration_cast<std::chrono::milliseconds>(state->deadline - steady::now())
          .count();
  auto timeout = std::max<int64_t>(1, std::min<int64_t>(config_.request_timeout_ms, remaining));
  auto& conn = connections_->connection(*address);
  // Judged by the metadata this attempt was routed with: an answer to another request of the
  // topic may have dropped the topic from the cache by the time this one's answer arrives.
  const bool can_move = leadership_can_move(state->topic, state->partition);
  return with_timeout(state->call(conn.cap), timeout)
      .catch_([](kj::Exception&& e) { return result<T>(from_exception(e)); })
      .then([this, state, address = *address, id = conn.id, can_move,
             clipped =
                 timeout < config_.request_timeout_ms](result<T>&& r) -> kj::Promise<result<T>> {
        // An attempt cut short by the caller's deadline says nothing new about the broker:
        // the caller gets the error that made it retry.
        if (!r && clipped && r.code() == errc::request_timed_out && state->last)
          return result<T>(*state->last);
        if (r || !retriable(r.code())) return kj::mv(r);
        if (r.code() == errc::kafka_storage_error && !can_move) return kj::mv(r);
        if (r.code() == errc::network_exception) connections_->forget(address, id);
        forget_topic(state->topic);
        state->last = r.err();
        const bool may_have_moved =
            r.code() == errc::not_leader_or_follower || r.code() == errc::network_exception;
        if (may_have_moved && !state->followed_move) return retry_at_moved_leader(state, address);
        return retry_later(state);
      });
}

// NOT_LEADER_OR_FOLLOWER mostly means the leadership moved (a controlled shutdown, an
// election) and the metadata already says where: asks at once and, if it names another node,
// retries there without the back-off, as Kafka's client does since KIP-951 (which carries the
// new leader in the response instead). So does a lost connection: a node that stops cleanly
// moves its leaderships first and then closes its connections, often with a produce in
// flight. After NOT_LEADER_OR_FOLLOWER the Metadata comes from the node that refused first:
// it has just applied the change (a node takes UpdateMetadata before LeaderAndIsr), while
// another node's may not have arrived yet (KIP-951's reason to carry the leader in the
// response). Metadata that still names the node that refused (not updated yet, a killed node,
// no leader) leaves the usual back-off, and so does every later refusal of the call.
template <class T>
kj::Promise<result<T>>
rpc_cluster_client::retry_at_moved_leader(std::shared_ptr<routed_call<T>> state,
                                          std::string refused) {
  state->followed_move = true;
  std::optional<std::string> ask_first;
  if (state->last && state->last->code == errc::not_leader_or_follower) ask_first = refused;
  return follow_move(state, std::move(refused), std::move(ask_first));
}

// One Metadata refresh, from `ask_first` first when given. A leader other than `refused`: tries
// there at once. Otherwise, after asking `ask_first`, refreshes once more the usual way (the
// node that refused may not know the new leader either: its LeaderAndIsr never came), else
// backs off.
template <class T>
kj::Promise<result<T>> rpc_cluster_client::follow_move(std::shared_ptr<routed_call<T>> state,
                                                       std::string refused,
                                                       std::optional<std::string> ask_first) {
  const auto within_bounds = [state] {
    const auto now = steady::now();
    return now < state->deadline && now < state->retry_until;
  };
  if (!within_bounds()) return result<T>(*state->last);
  const bool asked_refuser = ask_first.has_value();
  return refresh_metadata({state->topic}, std::move(ask_first))
      .then([this, state, refused = std::move(refused), within_bounds,
             asked_refuser](result<cluster_metadata>&& md) mutable -> kj::Promise<result<T>> {
        keep_refresh_error(*state, md);
        // The refresh took time of its own: a retry starts only within the bounds.
        if (!within_bounds()) return result<T>(*state->last);
        const auto moved = leader_address(state->topic, state->partition);
        if (moved && *moved != refused) return attempt(state);
        if (asked_refuser) return follow_move(state, std::move(refused), std::nullopt);
        return retry_later(state);
      });
}

// Waits retry.backoff.ms, refreshes the topic's metadata and tries again, or gives up with the
// last error once the deadline or the caller's retry bound would pass.
template <class T>
kj::Promise<result<T>> rpc_cluster_client::retry_later(std::shared_ptr<routed_call<T>> state) {
  const auto backoff = std::chrono::milliseconds(config_.retry_backoff_ms);
  const auto next = steady::now() + backoff;
  if (next >= state->deadline || next >= state->retry_until) return result<T>(*state->last);
  return io_->provider->getTimer()
      .afterDelay(config_.retry_backoff_ms * kj::MILLISECONDS)
      .then([this, state] { return refresh_metadata({state->topic}); })
      .then([this, state](result<cluster_metadata>&& md) {
        keep_refresh_error(*state, md);
        return attempt(state);
      });
}

} // namespace capstan::client
