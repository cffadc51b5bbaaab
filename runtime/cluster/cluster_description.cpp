#include "runtime/cluster/cluster_description.hpp"

#include <algorithm>
#include <sstream>
#include <tuple>

namespace capstan {

namespace {

std::string hex(const std::array<uint8_t, 16>& bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (auto b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 0xf];
  }
  return out;
}

} // namespace

cluster_description merge_voter_answers(std::vector<voter_answer> answers) {
  std::sort(answers.begin(), answers.end(),
            [](const voter_answer& a, const voter_answer& b) { return a.node < b.node; });
  cluster_description out;
  const voter_state* active = nullptr;
  const voter_state* latest = nullptr;
  for (const auto& a : answers) {
    quorum_member_state m;
    m.node = a.node;
    if (!a.state) {
      m.failure = a.failure.empty() ? "no answer" : a.failure;
      out.members.push_back(std::move(m));
      continue;
    }
    const auto& s = *a.state;
    m.reachable = true;
    m.role = s.role;
    m.term = s.term;
    m.commit_index = s.commit_index;
    m.leader = s.leader;
    out.members.push_back(std::move(m));
    if (s.active && (active == nullptr || s.term > active->term)) active = &s;
    if (latest == nullptr ||
        std::tie(s.term, s.commit_index) > std::tie(latest->term, latest->commit_index))
      latest = &s;
  }
  if (const auto* view = active != nullptr ? active : latest) {
    out.voters = view->voters;
    std::sort(out.voters.begin(), out.voters.end());
  }
  if (active != nullptr) {
    out.active_controller = active->node;
    out.nodes_known = true;
    out.nodes = active->nodes;
    std::sort(out.nodes.begin(), out.nodes.end(),
              [](const registered_node& a, const registered_node& b) { return a.node < b.node; });
  }
  return out;
}

std::string format_cluster_description(const cluster_description& d) {
  std::ostringstream out;
  if (d.members.empty()) {
    out << "Quorum: none (a single-node cluster; its metadata actor is the controller)\n";
    return out.str();
  }
  out << "Active controller: "
      << (d.active_controller < 0 ? std::string("none") : std::to_string(d.active_controller))
      << "\n";
  out << "Voters: ";
  if (d.voters.empty()) out << "unknown (no quorum member answered)";
  for (size_t i = 0; i < d.voters.size(); ++i) out << (i ? ", " : "") << d.voters[i];
  out << "\n";
  out << "Quorum members:\n";
  for (const auto& m : d.members) {
    if (!m.reachable) {
      out << "\t" << m.node << "\tunreachable\t(" << m.failure << ")\n";
      continue;
    }
    out << "\t" << m.node << "\t" << m.role << "\tTerm: " << m.term
        << "\tCommit index: " << m.commit_index
        << "\tLeader: " << (m.leader < 0 ? std::string("none") : std::to_string(m.leader)) << "\n";
  }
  if (!d.nodes_known) {
    out << "Registered nodes: unknown (no active controller answered)\n";
    return out.str();
  }
  out << "Registered nodes:\n";
  for (const auto& n : d.nodes)
    out << "\t" << n.node << "\t" << (n.fenced ? "fenced" : "unfenced")
        << "\tBroker epoch: " << n.broker_epoch << "\tIncarnation: " << hex(n.incarnation) << "\n";
  return out.str();
}

} // namespace capstan
