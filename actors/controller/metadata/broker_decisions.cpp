#include "actors/controller/metadata/broker_decisions.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include "actors/controller/metadata/leader_election.hpp"
#include "actors/controller/metadata/partition_change.hpp"

namespace capstan::controller {

namespace {

std::string node_text(node_id n) { return "node " + std::to_string(n.value()); }

bool is_heard(const heard_from& heard, node_id n) { return !heard || heard(n); }

// Whose change in liveness a decision carries out.
struct liveness_change {
  // No longer live: leaves the ISRs (leadership_change's `leaving`).
  std::optional<node_id> leaving;
  // Live though still fenced in the image: the node being unfenced.
  std::optional<node_id> returning;
  // `leaving` is replaced by a process on its own data dir: it stays in every ISR no other
  // member is heard from in, and no unclean leader is elected for it.
  bool same_data_dir = false;
};

// The change of partition `p` of `topic` for `change`, by leadership_change with the live nodes
// as the active controller knows them (heard_from).
std::optional<partition_change_record> change_of(const metadata_image& image,
                                                 const topic_image& topic, partition_id p,
                                                 const heard_from& heard,
                                                 const liveness_change& change,
                                                 const decision_options& options,
                                                 std::vector<std::string>& warnings) {
  const auto& current = topic.partitions[static_cast<size_t>(p.value())];
  auto unfenced = [&](node_id n) { return n == change.returning || image.is_unfenced(n); };
  auto live = [&](node_id n) {
    return n != change.leaving && unfenced(n) &&
           (n == current.leader || n == change.returning || is_heard(heard, n));
  };
  auto other_member = [&](auto&& pred) {
    return std::any_of(current.isr.begin(), current.isr.end(),
                       [&](node_id n) { return n != change.leaving && pred(n); });
  };
  const bool unclean =
      !change.same_data_dir && !other_member(unfenced) &&
      unclean_leader_election_enabled(topic, options.unclean_leader_election_enable);
  auto leaving = change.leaving;
  if (change.same_data_dir &&
      !other_member([&](node_id n) { return unfenced(n) && is_heard(heard, n); }))
    leaving.reset();
  // A partition that waits for the new process, which leads it or follows again with its first
  // heartbeat, needs no operator warning for that moment.
  std::vector<std::string> transient;
  return leadership_change(topic, p, live, leaving, unclean,
                           change.same_data_dir ? transient : warnings);
}

// The partition changes for `change`, over every partition `affected` selects.
template <class Affected>
void leadership_changes(const metadata_image& image, const heard_from& heard,
                        const liveness_change& change, const decision_options& options,
                        Affected affected, decision& out) {
  for (const auto& [id, topic] : image.topics())
    for (size_t i = 0; i < topic.partitions.size(); ++i) {
      if (!affected(topic.partitions[i])) continue;
      auto c = change_of(image, topic, partition_id{static_cast<int32_t>(i)}, heard, change,
                         options, out.warnings);
      if (c) out.records.push_back(std::move(*c));
    }
}

// `node` leaves the ISRs and leaderships it holds (the last member of an ISR stays, see
// leadership_change), unless `same_data_dir` keeps it where no other member is heard from.
void leave_isrs(const metadata_image& image, node_id node, const decision_options& options,
                const heard_from& heard, bool same_data_dir, decision& out) {
  leadership_changes(image, heard, liveness_change{node, std::nullopt, same_data_dir}, options,
                     [&](const partition_state& p) { return p.in_isr(node) || p.leader == node; },
                     out);
}

// fence_broker's partition changes, and FenceBroker.
decision fencing(const metadata_image& image, node_id node, broker_epoch epoch,
                 const decision_options& options, const heard_from& heard, bool same_data_dir) {
  decision out;
  leave_isrs(image, node, options, heard, same_data_dir, out);
  out.records.push_back(fence_broker_record{node, epoch});
  return out;
}

// A leader for each leaderless partition `node` is a replica of, with `node` live.
void elect_where_leaderless(const metadata_image& image, node_id node,
                            const decision_options& options, const heard_from& heard,
                            decision& out) {
  leadership_changes(image, heard, liveness_change{std::nullopt, node, false}, options,
                     [&](const partition_state& p) {
                       return p.leader == no_leader && p.has_replica(node);
                     },
                     out);
}

// KIP-966's unclean-shutdown rule for the last ISR member: a node whose new process's log may lack
// what its old one held (after a crash, or on a new data dir) leaves the ISR of each leaderless
// partition it was the last member of. The ISR is then empty and no clean election can pick it on
// its own say: the partition waits for enough of its replicas to report their logs and comes back
// on the most up-to-date (leader_recovery.hpp), or with unclean.leader.election.enable on the first
// live replica. `image` holds the node's fencing (if any) already.
void leave_isrs_as_last_member(const metadata_image& image, node_id node, decision& out) {
  for (const auto& [id, topic] : image.topics())
    for (size_t i = 0; i < topic.partitions.size(); ++i) {
      const auto& p = topic.partitions[i];
      if (p.leader != no_leader || p.isr != std::vector<node_id>{node}) continue;
      auto c = make_partition_change(topic.id, partition_id{static_cast<int32_t>(i)}, p, no_leader,
                                     {});
      if (!c) continue;
      out.warnings.push_back("node " + std::to_string(node.value()) + " was the last in-sync "
                             "replica of " + topic.name + "-" + std::to_string(i) +
                             " and comes back after an unclean shutdown or on a new data dir: "
                             "the partition waits for enough replicas to report their logs");
      out.records.push_back(std::move(*c));
    }
}

} // namespace

status check_broker_epoch(const metadata_image& image, node_id node, broker_epoch epoch) {
  auto b = image.broker(node);
  if (b == nullptr)
    return make_error(errc::stale_broker_epoch, node_text(node) + " is not registered");
  if (b->epoch != epoch)
    return make_error(errc::stale_broker_epoch,
                      node_text(node) + " is registered with broker epoch " +
                        std::to_string(b->epoch.value()) + ", not " +
                        std::to_string(epoch.value()));
  return {};
}

result<decision> register_broker(const metadata_image& image,
                                 const broker_registration_request& request, bool session_alive,
                                 const decision_options& options, const heard_from& heard) {
  if (request.cluster_id != image.cluster_id())
    return make_error(errc::inconsistent_cluster_id,
                      "expected cluster id '" + image.cluster_id() + "', but " +
                        node_text(request.node) + " has cluster id '" + request.cluster_id + "'");
  if (request.node.value() < 0 || request.client_host.empty() || request.cluster_host.empty() ||
      request.client_port == 0 || request.cluster_port == 0)
    return make_error(errc::invalid_request,
                      "registration of " + node_text(request.node) +
                        " needs a node id >= 0 and client and cluster endpoints with a host and "
                        "a port");
  decision out;
  // A process started on a data dir that named no earlier incarnation marks its replicas wiped,
  // once: its later registrations (after a fencing, say) are of logs it has been filling since.
  // So does one whose data dir names an incarnation other than the registered one: a data dir
  // restored from a backup made before the last process started, whose logs may lack records the
  // node acknowledged since. (Also, rarely, the next process of one that crashed between its
  // registration and keeping its incarnation: a log then not counted on that is whole.)
  const auto* existing = image.broker(request.node);
  const bool same_process = existing != nullptr && existing->incarnation == request.incarnation;
  const bool named = request.previous_incarnation != incarnation_id{};
  const bool successor = existing != nullptr && named &&
                         request.previous_incarnation == existing->incarnation;
  const bool new_data_dir = !same_process && (!named || (existing != nullptr && !successor));
  if (existing != nullptr) {
    if (!same_process && !successor && session_alive)
      return make_error(errc::duplicate_broker_registration,
                        "another process is registered as " + node_text(request.node) +
                          " and still heartbeats (its incarnation id is neither this process's "
                          "nor the one this process's data dir last registered with)");
    // The old registration's replicas are this process's own logs: kept in the ISRs nobody else
    // is heard from in when they are whole (the same process, or a predecessor that stopped
    // cleanly). After a crash the logs may lack what the page cache held, so they leave the ISRs
    // as any fenced node's do; a partition left without a live member then comes back on the
    // most up-to-date replica (leader_recovery.hpp).
    const bool whole_log = same_process || (successor && request.previous_clean_shutdown);
    if (!existing->fenced)
      out = fencing(image, request.node, existing->epoch, options, heard, whole_log);
    else if (!whole_log)
      // Fenced already, it may still be in ISRs with other members: a clean restart kept it
      // where no other member was heard from. Its log is no longer known whole: it leaves them.
      leave_isrs(image, request.node, options, heard, false, out);
    if (!whole_log) {
      if (out.records.empty()) {
        leave_isrs_as_last_member(image, request.node, out);
      } else {
        auto fenced = image;
        if (auto s = fenced.apply(out.records); !s) return s.err();
        leave_isrs_as_last_member(fenced, request.node, out);
      }
    }
  }
  out.records.push_back(register_broker_record{
    request.node, request.incarnation, request.cluster_id, request.client_host,
    request.client_port, request.cluster_host, request.cluster_port, request.rack,
    next(image.max_broker_epoch()), new_data_dir, request.kafka_host, request.kafka_port});
  return out;
}

result<decision> unregister_broker(const metadata_image& image, node_id node,
                                   bool session_alive) {
  auto b = image.broker(node);
  if (b == nullptr)
    return make_error(errc::broker_id_not_registered, node_text(node) + " is not registered");
  if (!b->fenced)
    return make_error(errc::invalid_request,
                      node_text(node) + " is unfenced: stop it, and unregister it once its "
                                        "session has expired and the controller fenced it");
  if (session_alive)
    return make_error(errc::invalid_request,
                      node_text(node) + " is fenced but still heartbeats: stop it first");
  // A fenced node stays in an ISR only as its last member, and then the partition waits for it:
  // were the id registered again by a new machine with an empty disk, it would be elected
  // cleanly (it is in the ISR) and the others would truncate to its empty log.
  std::string held;
  size_t count = 0;
  for (const auto& [id, topic] : image.topics())
    for (size_t i = 0; i < topic.partitions.size(); ++i)
      if (topic.partitions[i].in_isr(node) && count++ < 5)
        held += (held.empty() ? "" : ", ") + topic.name + "-" + std::to_string(i);
  if (count > 0)
    return make_error(errc::invalid_request,
                      node_text(node) + " is the last in-sync replica of " + held +
                        (count > 5 ? " and " + std::to_string(count - 5) + " more" : "") +
                        ": those partitions wait for it (with unclean.leader.election.enable "
                        "another replica can take over, losing what only it holds)");
  decision out;
  out.records.push_back(unregister_broker_record{node, b->epoch});
  return out;
}

result<decision> fence_broker(const metadata_image& image, node_id node, broker_epoch epoch,
                              const decision_options& options, const heard_from& heard) {
  if (auto s = check_broker_epoch(image, node, epoch); !s) return s.err();
  if (image.broker(node)->fenced) return decision{};
  return fencing(image, node, epoch, options, heard, false);
}

result<decision> unfence_broker(const metadata_image& image, node_id node, broker_epoch epoch,
                                const decision_options& options, const heard_from& heard) {
  if (auto s = check_broker_epoch(image, node, epoch); !s) return s.err();
  decision out;
  if (!image.broker(node)->fenced) return out;
  out.records.push_back(unfence_broker_record{node, epoch});
  elect_where_leaderless(image, node, options, heard, out);
  return out;
}

result<decision> elect_leaderless(const metadata_image& image, node_id node, broker_epoch epoch,
                                  const decision_options& options, const heard_from& heard) {
  if (auto s = check_broker_epoch(image, node, epoch); !s) return s.err();
  decision out;
  if (image.broker(node)->fenced) return out;
  elect_where_leaderless(image, node, options, heard, out);
  return out;
}

result<decision> take_replicas_offline(const metadata_image& image, node_id node,
                                       broker_epoch epoch, const offline_replicas& offline,
                                       const decision_options& options, const heard_from& heard) {
  if (auto s = check_broker_epoch(image, node, epoch); !s) return s.err();
  decision out;
  // A replica named twice must not change its partition twice from the same state.
  std::set<std::pair<topic_id, int32_t>> seen;
  for (const auto& r : offline) {
    const auto* topic = image.topic(r.topic);
    const partition_id p{r.partition};
    const auto* current = image.partition(r.topic, p);
    if (current == nullptr || !(current->in_isr(node) || current->leader == node)) continue;
    if (!seen.emplace(r.topic, r.partition).second) continue;
    auto change = change_of(image, *topic, p, heard, liveness_change{node, std::nullopt, false},
                            options, out.warnings);
    if (change) out.records.push_back(std::move(*change));
  }
  return out;
}

} // namespace capstan::controller
