// The fetcher manager: see fetcher_manager_actor.hpp.

#include "actors/replica/fetcher_manager_actor.hpp"

#include <map>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/countdown.hpp"
#include "runtime/cluster/java_hash.hpp"

namespace capstan {

namespace {

using fetcher_key = std::pair<int32_t, int32_t>; // leader node, fetcher index

struct fetcher_manager_state {
  static inline const char* name = "capstan.fetcher_manager";

  fetcher_manager_options opts;
  std::map<fetcher_key, replica_fetcher_actor> fetchers;
  std::map<fetcher_key, size_t> load; // partitions per fetcher
  std::map<topic_partition, fetcher_key> placement;
  // The latest assign or unassign of each partition still waiting for its old fetcher to let go
  // (a number never reused): an assignment is placed only if no later one (or an unassignment)
  // came meanwhile, so a partition never ends on two fetchers, nor on the older leader's.
  std::map<topic_partition, uint64_t> latest;
  uint64_t next_ticket = 1;
};

using self_ptr = fetcher_manager_actor::stateful_pointer<fetcher_manager_state>;

// Removes `tps` from their fetchers; `done` runs once every fetcher confirmed. Fetchers left
// without partitions are stopped (Kafka's shutdownIdleFetcherThreads).
void remove_from_fetchers(self_ptr self, const std::vector<topic_partition>& tps,
                          std::function<void()> done) {
  auto& st = self->state;
  std::map<fetcher_key, std::vector<topic_partition>> by_fetcher;
  for (const auto& tp : tps) {
    auto it = st.placement.find(tp);
    if (it == st.placement.end()) continue;
    by_fetcher[it->second].push_back(tp);
    --st.load[it->second];
    st.placement.erase(it);
  }
  auto pending = std::make_shared<countdown>(countdown{by_fetcher.size() + 1, std::move(done)});
  for (auto& [key, list] : by_fetcher) {
    auto fetcher = st.fetchers.at(key);
    if (st.load[key] == 0) {
      st.fetchers.erase(key);
      st.load.erase(key);
    }
    const auto idle = st.fetchers.count(key) == 0;
    self->request(fetcher, caf::infinite, unassign_atom_v, std::move(list))
      .then(
        [self, fetcher, idle, pending](bool) {
          if (idle) {
            // Unlinked first: its exit must not take the manager down.
            self->unlink_from(fetcher);
            caf::anon_send_exit(fetcher, caf::exit_reason::user_shutdown);
          }
          pending->arrive();
        },
        [pending](caf::error&) { pending->arrive(); });
  }
  pending->arrive();
}

fetcher_manager_actor::behavior_type manager_behavior(self_ptr self, fetcher_manager_options opts) {
  self->state.opts = std::move(opts);
  return {
    [self](assign_atom, int32_t leader, std::vector<fetch_assignment>& assignments) -> caf::result<bool> {
      auto rp = self->make_response_promise<bool>();
      std::vector<topic_partition> moving;
      const auto ticket = self->state.next_ticket++;
      for (const auto& a : assignments) {
        moving.push_back(a.tp);
        self->state.latest[a.tp] = ticket;
      }
      // A partition that had another leader leaves its old fetcher first.
      remove_from_fetchers(self, moving, [self, leader, ticket, assignments = std::move(assignments), rp]() mutable {
        auto& st = self->state;
        std::map<fetcher_key, std::vector<fetch_assignment>> by_fetcher;
        for (auto& a : assignments) {
          auto latest = st.latest.find(a.tp);
          if (latest == st.latest.end() || latest->second != ticket) continue; // overtaken
          st.latest.erase(latest);
          fetcher_key key{leader, fetcher_index_for(a.tp.first, a.tp.second, st.opts.num_fetchers)};
          st.placement[a.tp] = key;
          ++st.load[key];
          by_fetcher[key].push_back(std::move(a));
        }
        for (auto& [key, list] : by_fetcher) {
          auto it = st.fetchers.find(key);
          if (it == st.fetchers.end()) {
            replica_fetcher_options fo;
            fo.node = st.opts.node;
            fo.leader = node_id{key.first};
            fo.index = key.second;
            fo.incarnation = st.opts.incarnation;
            fo.config = st.opts.config;
            fo.sessions = st.opts.sessions;
            fo.routes = st.opts.routes;
            it = st.fetchers.emplace(key, spawn_replica_fetcher(self->system(), std::move(fo))).first;
            self->link_to(it->second);
          }
          self->send(it->second, assign_atom_v, std::move(list));
        }
        rp.deliver(true);
      });
      return rp;
    },
    [self](unassign_atom, const std::vector<topic_partition>& tps) -> caf::result<bool> {
      auto rp = self->make_response_promise<bool>();
      for (const auto& tp : tps) self->state.latest.erase(tp); // overtakes an assignment in progress
      remove_from_fetchers(self, tps, [rp]() mutable { rp.deliver(true); });
      return rp;
    },
    [self](stop_atom) -> bool {
      for (auto& [key, f] : self->state.fetchers) {
        self->unlink_from(f);
        caf::anon_send_exit(f, caf::exit_reason::user_shutdown);
      }
      self->state.fetchers.clear();
      self->state.placement.clear();
      self->state.load.clear();
      self->quit();
      return true;
    },
  };
}

} // namespace

fetcher_manager_actor spawn_fetcher_manager(caf::actor_system& sys, fetcher_manager_options options) {
  return sys.spawn(manager_behavior, std::move(options));
}

} // namespace capstan
