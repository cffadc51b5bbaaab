#include "tests/unit/controller/controller_invariant_checker.hpp"

#include <algorithm>

#include "actors/controller/metadata/leader_election.hpp"

namespace capstan::controller::test {

namespace {

struct hasher {
  uint64_t h = 0xcbf29ce484222325ULL;
  void add(uint64_t v) {
    for (int i = 0; i < 8; ++i) h = (h ^ ((v >> (8 * i)) & 0xff)) * 0x100000001b3ULL;
  }
  void add(const std::string& s) {
    add(s.size());
    for (char c : s) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ULL;
  }
  template <size_t N>
  void add(const std::array<uint8_t, N>& a) {
    for (uint8_t b : a) h = (h ^ b) * 0x100000001b3ULL;
  }
  void add(const std::vector<node_id>& nodes) {
    add(nodes.size());
    for (node_id n : nodes) add(static_cast<uint64_t>(n.value()));
  }
};

bool contains(const std::vector<node_id>& nodes, node_id n) {
  return std::find(nodes.begin(), nodes.end(), n) != nodes.end();
}

std::string name(const topic_image& t, size_t p) {
  return t.name + "-" + std::to_string(p);
}

} // namespace

uint64_t fingerprint(const metadata_image& image) {
  hasher h;
  h.add(image.cluster_id());
  for (const auto& [id, b] : image.brokers()) {
    h.add(static_cast<uint64_t>(id.value()));
    h.add(b.incarnation);
    h.add(static_cast<uint64_t>(b.epoch.value()));
    h.add(b.client_host + ":" + std::to_string(b.client_port) + "/" + b.cluster_host + ":" +
          std::to_string(b.cluster_port) + "/" + b.rack);
    h.add(b.fenced ? 1 : 0);
  }
  for (const auto& [id, t] : image.topics()) {
    h.add(id);
    h.add(t.name);
    h.add(t.internal ? 1 : 0);
    for (const auto& [k, v] : t.configs) h.add(k + "=" + v);
    for (const auto& p : t.partitions) {
      h.add(p.replicas);
      h.add(p.isr);
      h.add(static_cast<uint64_t>(p.leader.value()));
      h.add(static_cast<uint64_t>(p.leader_epoch.value()));
      h.add(static_cast<uint64_t>(p.partition_epoch.value()));
    }
  }
  h.add(static_cast<uint64_t>(image.next_producer_id()));
  return h.h;
}

void controller_invariant_checker::on_caught_up(const topic_id& topic, partition_id p,
                                                node_id replica, partition_epoch epoch) {
  caught_up_.emplace(topic, p.value(), replica.value(), epoch.value());
}

void controller_invariant_checker::on_recovery_decided(const topic_id& topic, partition_id p,
                                                       leader_epoch epoch, node_id leader) {
  recoveries_.emplace(topic, p.value(), epoch.value(), leader.value());
}

std::optional<std::string> controller_invariant_checker::check_image(node_id voter,
                                                                     raft::log_index index,
                                                                     const metadata_image& image) {
  const auto where = "voter " + std::to_string(voter.value()) + " at index " +
                     std::to_string(index.value()) + ": ";
  const uint64_t mine = fingerprint(image);
  auto [fp, fresh] = fingerprints_.emplace(index, mine);
  if (!fresh && fp->second != mine)
    return "equal images: " + where + "the image differs from another voter's at that index";
  for (const auto& [id, t] : image.topics()) {
    for (size_t i = 0; i < t.partitions.size(); ++i) {
      const auto& p = t.partitions[i];
      const auto part = where + name(t, i) + " ";
      if (p.isr.empty() && p.leader != no_leader)
        return "partition state: " + part + "has a leader and an empty ISR";
      for (node_id n : p.isr)
        if (!contains(p.replicas, n))
          return "partition state: " + part + "has ISR member " + std::to_string(n.value()) +
                 " that is not a replica";
      if (p.leader != no_leader && !contains(p.isr, p.leader))
        return "partition state: " + part + "is led by node " + std::to_string(p.leader.value()) +
               " outside its ISR " + to_string(p.isr);
      if (p.leader != no_leader && !image.is_unfenced(p.leader))
        return "partition state: " + part + "is led by node " + std::to_string(p.leader.value()) +
               ", which is fenced or not registered";
      if (p.isr.size() > 1)
        for (node_id n : p.isr)
          if (!image.is_unfenced(n))
            return "partition state: " + part + "has fenced node " + std::to_string(n.value()) +
                   " in its ISR " + to_string(p.isr);
      if (p.leader == no_leader) continue;
      auto [l, added] = leaders_.emplace(
          std::tuple{id, static_cast<int32_t>(i), p.leader_epoch.value()}, p.leader);
      if (!added && l->second != p.leader)
        return "one leader: " + part + "has leaders " + std::to_string(l->second.value()) +
               " and " + std::to_string(p.leader.value()) + " in leader epoch " +
               std::to_string(p.leader_epoch.value());
    }
  }
  return std::nullopt;
}

std::optional<std::string> controller_invariant_checker::on_applied(node_id voter,
                                                                    raft::log_index index,
                                                                    const metadata_image& before,
                                                                    const metadata_image& after,
                                                                    const status& applied) {
  if (!applied)
    return "batches apply: voter " + std::to_string(voter.value()) + " could not apply entry " +
           std::to_string(index.value()) + ": " + applied.err().to_string();
  if (auto bad = check_image(voter, index, after)) return bad;
  for (const auto& [id, t] : after.topics()) {
    const auto* old = before.topic(id);
    if (old == nullptr) continue;
    const bool unclean = unclean_leader_election_enabled(t, false);
    for (size_t i = 0; i < std::min(t.partitions.size(), old->partitions.size()); ++i) {
      const auto& was = old->partitions[i];
      const auto& is = t.partitions[i];
      const auto part = "voter " + std::to_string(voter.value()) + " at index " +
                        std::to_string(index.value()) + ": " + name(t, i) + " ";
      if (is.leader != was.leader && is.leader != no_leader && !unclean &&
          !contains(was.isr, is.leader)) {
        if (!recoveries_.count(
                {id, static_cast<int32_t>(i), is.leader_epoch.value(), is.leader.value()}))
          return "clean election: " + part + "got leader " + std::to_string(is.leader.value()) +
                 " from outside its ISR " + to_string(was.isr);
        // Last replica standing counts no wiped replica and elects one alone in the ISR.
        if (was.is_wiped(is.leader) || is.isr != std::vector{is.leader})
          return "clean election: " + part + "recovered on node " +
                 std::to_string(is.leader.value()) + " with ISR " + to_string(is.isr) + "; wiped " +
                 to_string(was.wiped);
      }
      if (is.leader != was.leader || is.leader_epoch != was.leader_epoch) continue;
      for (node_id n : is.isr)
        if (!contains(was.isr, n) && !caught_up_.count({id, static_cast<int32_t>(i), n.value(),
                                                        was.partition_epoch.value()}))
          return "ISR expansion: " + part + "took node " + std::to_string(n.value()) +
                 " into its ISR at partition epoch " + std::to_string(was.partition_epoch.value()) +
                 ", at which it never caught up with the leader";
    }
  }
  return std::nullopt;
}

std::optional<std::string> controller_invariant_checker::on_loaded(node_id voter,
                                                                   raft::log_index index,
                                                                   const metadata_image& image) {
  return check_image(voter, index, image);
}

} // namespace capstan::controller::test
