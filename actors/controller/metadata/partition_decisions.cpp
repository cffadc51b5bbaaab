#include "actors/controller/metadata/partition_decisions.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "actors/controller/metadata/partition_change.hpp"
#include "actors/controller/metadata/reassignment_decisions.hpp"
#include "runtime/cluster/metadata_store.hpp"
#include "runtime/storage/partition_metadata.hpp"

namespace capstan::controller {

namespace {

std::string name_of(const std::string& topic, partition_id p) {
  return topic + "-" + std::to_string(p.value());
}

// The topic an AlterPartition item names, or why none.
result<const topic_image*> find_topic(const metadata_image& image,
                                      const alter_partition_item& item) {
  const auto& name = item.tp.first;
  if (item.id == topic_id{}) {
    if (auto t = image.topic_by_name(name)) return t;
    return make_error(errc::unknown_topic_or_partition, "topic '" + name + "' does not exist");
  }
  auto t = image.topic(item.id);
  if (t == nullptr)
    return make_error(errc::unknown_topic_or_partition, "no topic with id " + to_base64_uuid(item.id));
  if (name != t->name)
    return make_error(errc::inconsistent_topic_id,
                      "topic id " + to_base64_uuid(item.id) + " is '" + t->name + "', not '" + name + "'");
  return t;
}

status check_item(const metadata_image& image, node_id sender, const topic_image& topic,
                  const partition_state& p, const alter_partition_item& item) {
  const auto name = name_of(topic.name, partition_id{item.tp.second});
  auto refuse = [&](errc code, const std::string& why) {
    return make_error(code, "AlterPartition from node " + std::to_string(sender.value()) +
                              " for " + name + ": " + why);
  };
  const partition_epoch proposed{item.partition_epoch};
  const auto epochs = "leader epoch " + std::to_string(item.epoch.value()) +
                      " and partition epoch " + std::to_string(proposed.value()) +
                      "; the controller has " + std::to_string(p.leader_epoch.value()) + " and " +
                      std::to_string(p.partition_epoch.value());
  if (item.epoch > p.leader_epoch || proposed > p.partition_epoch)
    return refuse(errc::not_controller, epochs + " (it is behind)");
  if (item.epoch < p.leader_epoch) return refuse(errc::fenced_leader_epoch, epochs);
  if (sender != p.leader)
    return refuse(errc::not_leader_or_follower,
                  "the leader is node " + std::to_string(p.leader.value()));
  if (proposed < p.partition_epoch) return refuse(errc::invalid_update_version, epochs);
  std::set<node_id> seen;
  for (auto n : item.new_isr) {
    if (!p.has_replica(n) || !seen.insert(n).second)
      return refuse(errc::invalid_request, "ISR " + to_string(item.new_isr) +
                                             " is not a set of the replicas " +
                                             to_string(p.replicas));
  }
  if (seen.count(p.leader) == 0)
    return refuse(errc::invalid_request,
                  "ISR " + to_string(item.new_isr) + " leaves out the leader");
  for (auto n : item.new_isr)
    if (!image.is_unfenced(n))
      return refuse(errc::ineligible_replica,
                    "ISR member " + std::to_string(n.value()) +
                      (image.broker(n) == nullptr ? " is not registered" : " is fenced"));
  // KIP-903: a member joining on the strength of fetches from an earlier process of its node
  // (which restarted since, and may have lost what it fetched) does not join. Members already
  // in the ISR keep their place: their leaving is the fencing's and the leader's business.
  if (item.new_isr_incarnations.size() == item.new_isr.size())
    for (size_t i = 0; i < item.new_isr.size(); ++i) {
      const auto n = item.new_isr[i];
      const auto& named = item.new_isr_incarnations[i];
      if (p.in_isr(n) || named == incarnation_id{} || image.broker(n)->incarnation == named)
        continue;
      return refuse(errc::ineligible_replica,
                    "ISR member " + std::to_string(n.value()) +
                      " joins on fetches of an earlier process of its node (incarnation " +
                      to_hex(named) + ", registered " + to_hex(image.broker(n)->incarnation) + ")");
    }
  return {};
}

} // namespace

alter_partition_decision alter_partition(const metadata_image& image,
                                         const alter_partition_msg& request) {
  alter_partition_decision out;
  std::set<std::pair<topic_id, partition_id>> done;
  for (const auto& item : request.partitions) {
    const partition_id partition{item.tp.second};
    auto topic = find_topic(image, item);
    if (!topic) {
      out.outcomes.push_back(topic.err());
      continue;
    }
    const auto& t = **topic;
    auto p = image.partition(t.id, partition);
    if (p == nullptr) {
      out.outcomes.push_back(make_error(errc::unknown_topic_or_partition,
                                        "no partition " + name_of(t.name, partition)));
      continue;
    }
    if (!done.insert({t.id, partition}).second) {
      out.outcomes.push_back(make_error(
        errc::invalid_request,
        "partition " + name_of(t.name, partition) + " appears twice in one AlterPartition"));
      continue;
    }
    if (auto s = check_item(image, request.broker, t, *p, item); !s) {
      out.outcomes.push_back(s.err());
      continue;
    }
    // An ISR that now holds every target replica of a reassignment completes it.
    if (auto change = complete_reassignment(
          image, t.id, partition, *p,
          make_partition_change(t.id, partition, *p, p->leader, item.new_isr)))
      out.changes.records.push_back(std::move(*change));
    out.outcomes.push_back(error{});
  }
  return out;
}

alter_partition_response_msg answer_alter_partition(const metadata_image& committed,
                                                    const alter_partition_msg& request,
                                                    const std::vector<error>& outcomes) {
  alter_partition_response_msg out;
  for (size_t i = 0; i < request.partitions.size(); ++i) {
    const auto& item = request.partitions[i];
    alter_partition_result_item r;
    r.tp = item.tp;
    const error outcome = i < outcomes.size() ? outcomes[i] : error{};
    r.error = outcome.code;
    r.message = outcome.message;
    if (r.error == errc::none) {
      const partition_id partition{item.tp.second};
      auto topic = find_topic(committed, item);
      auto p = topic ? committed.partition((*topic)->id, partition) : nullptr;
      if (p == nullptr) {
        r.error = errc::unknown_topic_or_partition;
        r.message = "partition " + name_of(item.tp.first, partition) + " no longer exists";
      } else {
        r.leader = p->leader;
        r.epoch = p->leader_epoch;
        r.isr = p->isr;
        r.partition_epoch = p->partition_epoch.value();
      }
    }
    out.partitions.push_back(std::move(r));
  }
  return out;
}

preferred_election elect_preferred_leaders(const metadata_image& image,
                                           const std::optional<std::vector<partition_ref>>& partitions) {
  std::vector<partition_ref> wanted;
  if (partitions) {
    wanted = *partitions;
  } else {
    for (const auto& [id, t] : image.topics())
      for (size_t i = 0; i < t.partitions.size(); ++i)
        wanted.push_back(partition_ref{t.name, partition_id{static_cast<int32_t>(i)}});
  }
  preferred_election out;
  std::set<std::pair<std::string, partition_id>> done;
  for (const auto& ref : wanted) {
    const auto name = name_of(ref.topic, ref.partition);
    auto topic = image.topic_by_name(ref.topic);
    auto p = topic ? image.partition(topic->id, ref.partition) : nullptr;
    error outcome;
    if (p == nullptr) {
      outcome = make_error(errc::unknown_topic_or_partition, "no partition " + name);
    } else if (p->leader == p->preferred()) {
      outcome = make_error(errc::election_not_needed,
                           "the preferred replica " + std::to_string(p->preferred().value()) +
                             " leads " + name + " already");
    } else if (!image.is_unfenced(p->preferred()) || !p->in_isr(p->preferred())) {
      outcome = make_error(errc::preferred_leader_not_available,
                           "the preferred replica " + std::to_string(p->preferred().value()) +
                             " of " + name + " is " +
                             (image.is_unfenced(p->preferred()) ? "not in the ISR " + to_string(p->isr)
                                                                : std::string("fenced")));
    } else if (done.insert({ref.topic, ref.partition}).second) {
      if (auto change =
            make_partition_change(topic->id, ref.partition, *p, p->preferred(), p->isr))
        out.changes.records.push_back(std::move(*change));
    }
    out.results.push_back(preferred_election_result{ref, std::move(outcome)});
  }
  return out;
}

std::vector<partition_ref> imbalanced_partitions(const metadata_image& image,
                                                 int32_t imbalance_percentage) {
  struct node_share {
    int64_t preferred = 0;
    std::vector<partition_ref> not_leading;
  };
  std::map<node_id, node_share> shares;
  for (const auto& [id, t] : image.topics())
    for (size_t i = 0; i < t.partitions.size(); ++i) {
      const auto& p = t.partitions[i];
      if (p.replicas.empty() || !image.is_unfenced(p.preferred())) continue;
      auto& share = shares[p.preferred()];
      ++share.preferred;
      if (p.leader != p.preferred())
        share.not_leading.push_back(partition_ref{t.name, partition_id{static_cast<int32_t>(i)}});
    }
  std::vector<partition_ref> out;
  for (auto& [node, share] : shares) {
    // not_leading / preferred > percentage / 100, in integers.
    const auto off = static_cast<int64_t>(share.not_leading.size());
    if (off * 100 > share.preferred * static_cast<int64_t>(imbalance_percentage))
      out.insert(out.end(), share.not_leading.begin(), share.not_leading.end());
  }
  return out;
}

} // namespace capstan::controller
