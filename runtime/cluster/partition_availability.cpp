#include "runtime/cluster/partition_availability.hpp"

#include <algorithm>
#include <charconv>

namespace capstan {

namespace {

std::vector<int32_t> live_of(const std::vector<int32_t>& ids, const std::set<int32_t>& live) {
  std::vector<int32_t> out;
  for (auto id : ids)
    if (live.count(id)) out.push_back(id);
  return out;
}

} // namespace

std::string join_node_ids(const std::vector<int32_t>& ids) {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? "," : "") + std::to_string(ids[i]);
  return out;
}

std::vector<int32_t> offline_replicas(const partition_assignment& p,
                                      const std::set<int32_t>& live) {
  std::vector<int32_t> out;
  for (auto id : p.replicas)
    if (!live.count(id)) out.push_back(id);
  return out;
}

std::string why_offline(const partition_assignment& p, const std::set<int32_t>& live,
                        const std::map<std::string, std::string>& configs) {
  if (p.leader >= 0) return {};
  if (auto alive = live_of(p.isr, live); !alive.empty())
    return "ISR member " + join_node_ids(alive) +
           " is live; the controller has not elected it yet";
  const std::string isr = p.isr.empty() ? std::string("none") : join_node_ids(p.isr);
  if (auto u = configs.find("unclean.leader.election.enable");
      u != configs.end() && u->second == "true")
    return "no ISR member (" + isr + ") is live; unclean election takes the first live replica";
  const auto rf = static_cast<int32_t>(p.replicas.size());
  std::string needed = "RF - min.insync.replicas + 1";
  if (auto m = configs.find("min.insync.replicas"); m != configs.end()) {
    int32_t min_isr = 0;
    const auto* end = m->second.data() + m->second.size();
    if (auto [ptr, ec] = std::from_chars(m->second.data(), end, min_isr);
        ec == std::errc{} && ptr == end && min_isr >= 1)
      needed = std::to_string(rf - std::min(min_isr, rf) + 1);
  }
  // A wiped replica's log may lack acknowledged records: recovery does not count it.
  std::vector<int32_t> counted;
  for (auto id : p.replicas)
    if (std::find(p.wiped.begin(), p.wiped.end(), id) == p.wiped.end()) counted.push_back(id);
  const auto back = live_of(counted, live);
  const auto live_now = back.empty() ? std::string("none") : join_node_ids(back);
  const auto of = needed + " of replicas " + (counted.empty() ? "none" : join_node_ids(counted)) +
                  " to report their logs (live now: " + live_now + ")" +
                  (p.wiped.empty() ? "" : "; " + join_node_ids(p.wiped) +
                                            " came back on a new data dir and count only once "
                                            "back in the ISR");
  if (p.isr.empty())
    return "its last ISR member came back after an unclean shutdown or on a new data dir; waits "
           "for " + of;
  return "no ISR member (" + isr + ") is live; waits for one, or for " + of;
}

} // namespace capstan
