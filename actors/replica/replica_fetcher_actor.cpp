// The replica fetcher: one per (leader node, fetcher index). See replica_fetcher_actor.hpp for
// what a round does; docs/replication.md for the rules.
//
// At most one round (a session request, a truncation or a fetch) is in flight: a follower's next
// fetch must carry the log end its appends produced, so the leader learns it from the fetch
// itself (the follower's LEO is its fetch offset).

#include "actors/replica/replica_fetcher_actor.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <optional>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/armed_tick.hpp"
#include "actors/countdown.hpp"
#include "actors/replica/fetch_codec.hpp"
#include "actors/replica/fetch_states.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/cluster/link_faults.hpp"

namespace capstan {

namespace {

struct fetcher_state {
  static inline const char* name = "capstan.replica_fetcher";

  replica_fetcher_options opts;
  std::string log_name;
  fetch_states parts;
  fetch_session_actor session;
  bool busy = false;
  armed_tick<timestamp_ms> tick;
  // The number of the latest round's request (a late answer to an earlier one is dropped) and,
  // while it is unanswered, its deadline and what its timeout does. The fetcher keeps this
  // deadline itself rather than giving CAF a timeout per request: CAF's clock thread would be
  // woken to set and to cancel one for every fetch.
  uint64_t round = 0;
  struct unanswered {
    timestamp_ms deadline;
    std::function<void(const error&)> timed_out;
  };
  std::optional<unanswered> waiting;
  // Work due at a time (a send the fault switch delays, a timeout it simulates), run by tick.
  std::multimap<timestamp_ms, std::function<void()>> deferred;
};

using self_ptr = replica_fetcher_actor::stateful_pointer<fetcher_state>;

timestamp_ms now_ms(self_ptr self) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
           self->clock().now().time_since_epoch())
    .count();
}

std::string name_of(const topic_partition& tp) { return tp.first + "-" + std::to_string(tp.second); }

void pump(self_ptr self);

void round_done(self_ptr self) {
  auto& st = self->state;
  st.busy = false;
  pump(self);
}

void defer(self_ptr self, std::chrono::milliseconds after, std::function<void()> f) {
  self->state.deferred.emplace(now_ms(self) + after.count(), std::move(f));
  self->delayed_send(self, after, tick_atom_v);
}

void run_deferred(self_ptr self) {
  auto& st = self->state;
  const auto now = now_ms(self);
  while (!st.deferred.empty() && st.deferred.begin()->first <= now) {
    auto f = std::move(st.deferred.begin()->second);
    st.deferred.erase(st.deferred.begin());
    f();
  }
}

void arm_tick(self_ptr self, int64_t after_ms) {
  auto& st = self->state;
  after_ms = std::max<int64_t>(after_ms, 1);
  if (st.tick.arm(now_ms(self) + after_ms))
    self->delayed_send(self, std::chrono::milliseconds(after_ms), tick_atom_v);
}

// Ends the round in flight as timed out if its deadline has passed.
void check_round_deadline(self_ptr self) {
  auto& st = self->state;
  if (!st.waiting) return;
  const auto now = now_ms(self);
  if (now < st.waiting->deadline) {
    arm_tick(self, st.waiting->deadline - now);
    return;
  }
  auto timed_out = std::move(st.waiting->timed_out);
  st.waiting.reset();
  ++st.round;
  timed_out(make_error(errc::request_timed_out, "the leader did not answer in time"));
}

std::optional<partition_replica_actor> local_replica(self_ptr self, const topic_partition& tp) {
  auto table = self->state.opts.routes();
  auto it = table->find(tp);
  if (it == table->end() || !it->second) return std::nullopt;
  return it->second;
}

// What the fault switch says about the link from this node to the leader: a dropped request is
// never sent (the round times out as if it were lost), a delayed one waits first.
link_fault outgoing_fault(self_ptr self) {
  return link_faults::instance().check(self->state.opts.node, self->state.opts.leader);
}

void back_off(self_ptr self, const topic_partition& tp, leader_epoch epoch, const std::string& why,
              int64_t wait_ms) {
  spdlog::warn("{}: {} backs off {} ms: {}", self->state.log_name, name_of(tp), wait_ms, why);
  self->state.parts.delay(tp, epoch, now_ms(self) + wait_ms);
}

void back_off(self_ptr self, const topic_partition& tp, leader_epoch epoch,
              const std::string& why) {
  back_off(self, tp, epoch, why, self->state.opts.config.backoff_ms);
}

// How soon a partition is fetched again after the leader answered UNKNOWN_LEADER_EPOCH: the
// follower learned of the leadership before the leader did, which applies the same metadata within
// milliseconds. Kafka waits replica.fetch.backoff.ms here too, and with an ISR that needs this
// follower, every acks=all produce waits with it.
constexpr int64_t leader_behind_retry_ms = 10;

// The leader refused `tp` with `code`.
void back_off_refused(self_ptr self, const topic_partition& tp, leader_epoch epoch, errc code,
                      const std::string& message) {
  const auto backoff_ms = self->state.opts.config.backoff_ms;
  back_off(self, tp, epoch, std::string(to_string(code)) + ": " + message,
           code == errc::unknown_leader_epoch ? std::min(leader_behind_retry_ms, backoff_ms)
                                              : backoff_ms);
}

void back_off_all(self_ptr self, const std::string& why) {
  auto& st = self->state;
  spdlog::warn("{}: backs off {} ms: {}", st.log_name, st.opts.config.backoff_ms, why);
  st.parts.delay_all(now_ms(self) + st.opts.config.backoff_ms);
}

// The local replica closed (its node stops, the partition went offline or was deleted) before the
// fetcher manager unassigned it: stop fetching it, as the unassign that follows would.
void forget_closed(self_ptr self, const topic_partition& tp, leader_epoch epoch) {
  spdlog::info("{}: {} has no local replica any more; stops fetching it", self->state.log_name,
               name_of(tp));
  self->state.parts.remove(tp, epoch);
}

void open_session(self_ptr self) {
  auto& st = self->state;
  st.busy = true;
  self->request(st.opts.sessions, std::chrono::milliseconds(st.opts.config.request_timeout_ms),
                session_atom_v, st.opts.leader, caf::actor_cast<caf::actor>(self))
    .then(
      [self](fetch_session_actor& session) {
        auto& st = self->state;
        st.session = session;
        self->monitor(session);
        spdlog::info("{}: fetch session open", st.log_name);
        round_done(self);
      },
      [self](caf::error& e) {
        back_off_all(self, "cannot open a fetch session: " + from_caf_error(e).to_string());
        round_done(self);
      });
}

// After a request the link lost or the leader never answered: forget the session, so the next
// round opens a new one, and back off.
void session_failed(self_ptr self, const caf::error& e) {
  auto& st = self->state;
  st.session = nullptr;
  back_off_all(self, "the leader did not answer: " + from_caf_error(e).to_string());
}

// Sends `frame` under `atom` to the session, honouring the fault switch; `on_reply` gets the
// answer, `on_error` a timeout or a lost session.
template <class Atom, class OnReply, class OnError>
void send_round(self_ptr self, Atom atom, capnp_frame frame, int64_t wait_ms, OnReply on_reply,
                OnError on_error) {
  auto& st = self->state;
  auto fault = outgoing_fault(self);
  const auto timeout = std::chrono::milliseconds(wait_ms + st.opts.config.request_timeout_ms);
  if (fault.what == link_fault::kind::drop) {
    // The request is lost on the way: the fetcher learns it only when its timeout passes.
    defer(self, timeout, [on_error]() mutable {
      on_error(make_error(errc::request_timed_out, "the link to the leader dropped the request"));
    });
    return;
  }
  auto send = [self, atom, frame, timeout, on_reply, on_error]() mutable {
    auto& st = self->state;
    const auto round = ++st.round;
    st.waiting = fetcher_state::unanswered{now_ms(self) + timeout.count(), on_error};
    arm_tick(self, timeout.count());
    // Answered by the deadline or dropped: a lost link never answers, and the deadline ends
    // the round instead.
    auto current = [self, round] {
      auto& st = self->state;
      if (st.round != round) return false;
      st.waiting.reset();
      return true;
    };
    self->request(st.session, caf::infinite, atom, std::move(frame))
        .then(
            [self, current, on_reply](capnp_frame& reply) mutable {
              // An answer the link from the leader drops on arrival is never seen: the deadline
              // ends the round.
              const auto& o = self->state.opts;
              if (link_faults::instance().dropped(o.leader, o.node)) return;
              if (current()) on_reply(reply);
            },
            [current, on_error](caf::error& e) mutable {
              if (current()) on_error(from_caf_error(e));
            });
  };
  if (fault.what == link_fault::kind::delay) {
    // Delay by parking the send in a timer: the actor stays responsive meanwhile.
    defer(self, fault.delay, std::move(send));
    return;
  }
  send();
}

void truncate_round(self_ptr self, std::vector<topic_partition> tps);
void fetch_round(self_ptr self, std::vector<topic_partition> tps);

void pump(self_ptr self) {
  auto& st = self->state;
  if (st.busy || st.parts.empty()) return;
  if (!st.session) {
    open_session(self);
    return;
  }
  const auto now = now_ms(self);
  if (auto tps = st.parts.ready(fetch_phase::truncating, now); !tps.empty()) {
    truncate_round(self, std::move(tps));
    return;
  }
  if (auto tps = st.parts.ready(fetch_phase::fetching, now); !tps.empty()) {
    fetch_round(self, std::move(tps));
    return;
  }
  if (auto wake = st.parts.next_wakeup(now)) arm_tick(self, *wake - now);
}

// ---- truncation (KIP-101/279) ----

void apply_epoch_answers(self_ptr self, const std::map<topic_partition, leader_epoch>& asked,
                         std::vector<epoch_answer> answers) {
  auto pending = std::make_shared<countdown>(countdown{answers.size() + 1, [self] { round_done(self); }});
  for (auto& a : answers) {
    auto it = asked.find(a.tp);
    const auto* s = self->state.parts.find(a.tp);
    if (it == asked.end() || !s || s->epoch != it->second) {
      pending->arrive();
      continue;
    }
    const auto epoch = it->second;
    if (a.error == errc::fenced_leader_epoch) {
      spdlog::info("{}: {} is fenced at epoch {}; waiting for a newer LeaderAndIsr",
                   self->state.log_name, name_of(a.tp), epoch.value());
      self->state.parts.remove(a.tp, epoch);
      pending->arrive();
      continue;
    }
    if (a.error != errc::none) {
      back_off_refused(self, a.tp, epoch, a.error, a.message);
      pending->arrive();
      continue;
    }
    auto replica = local_replica(self, a.tp);
    if (!replica) {
      self->state.parts.remove(a.tp, epoch);
      pending->arrive();
      continue;
    }
    self->request(*replica, caf::infinite, ftruncate_atom_v, epoch, a.end)
      .then(
        [self, tp = a.tp, epoch, pending](const truncation_decision& d) {
          self->state.parts.truncated(tp, epoch, d.truncate_to, d.complete);
          pending->arrive();
        },
        [self, tp = a.tp, epoch, pending](caf::error& e) {
          back_off(self, tp, epoch, "truncation failed: " + from_caf_error(e).to_string());
          pending->arrive();
        });
  }
  pending->arrive();
}

void truncate_round(self_ptr self, std::vector<topic_partition> tps) {
  auto& st = self->state;
  st.busy = true;
  // Ask each local replica for its latest epoch; an empty log has none and needs no truncation.
  auto queries = std::make_shared<std::vector<epoch_query>>();
  auto asked = std::make_shared<std::map<topic_partition, leader_epoch>>();
  auto pending = std::make_shared<countdown>(countdown{tps.size() + 1, nullptr});
  pending->done = [self, queries, asked] {
    auto& st = self->state;
    if (queries->empty()) {
      round_done(self);
      return;
    }
    send_round(
      self, epochend_atom_v, encode_epoch_queries(st.opts.node, *queries), 0,
      [self, asked](capnp_frame& reply) {
        auto answers = decode_epoch_answers(reply);
        if (!answers) {
          back_off_all(self, "malformed OffsetsForLeaderEpoch answer: " + answers.err().to_string());
          round_done(self);
          return;
        }
        apply_epoch_answers(self, *asked, std::move(*answers));
      },
      [self](const error& e) {
        session_failed(self, to_caf_error(e));
        round_done(self);
      });
  };
  for (const auto& tp : tps) {
    const auto* s = st.parts.find(tp);
    if (!s) {
      pending->arrive();
      continue;
    }
    const auto epoch = s->epoch;
    auto replica = local_replica(self, tp);
    if (!replica) {
      // Forgotten, not skipped: a partition left waiting here would be ready again at once, and
      // the round that completes without a request would pump itself until the stack overflows.
      forget_closed(self, tp, epoch);
      pending->arrive();
      continue;
    }
    self->request(*replica, caf::infinite, position_atom_v)
      .then(
        [self, tp, epoch, queries, asked, pending](const follower_position& pos) {
          if (pos.latest_epoch.value() < 0) {
            self->state.parts.truncated(tp, epoch, pos.log_end, true);
          } else {
            queries->push_back(epoch_query{tp, epoch, pos.latest_epoch});
            asked->emplace(tp, epoch);
          }
          pending->arrive();
        },
        [self, tp, epoch, pending](caf::error& e) {
          back_off(self, tp, epoch, "no position: " + from_caf_error(e).to_string());
          pending->arrive();
        });
  }
  pending->arrive();
}

// ---- fetching ----

// REQUIRES: the response frame that `parts` point into lives until this returns.
void apply_fetched(self_ptr self, const std::map<topic_partition, leader_epoch>& asked,
                   std::vector<fetched_partition> parts) {
  auto pending = std::make_shared<countdown>(countdown{parts.size() + 1, [self] { round_done(self); }});
  for (auto& p : parts) {
    auto it = asked.find(p.tp);
    auto replica = local_replica(self, p.tp);
    const auto* s = self->state.parts.find(p.tp);
    // Unassigned (or re-assigned under another epoch) while the fetch was out: not ours now.
    if (it == asked.end() || !s || s->epoch != it->second) {
      pending->arrive();
      continue;
    }
    const auto epoch = it->second;
    if (!replica) {
      forget_closed(self, p.tp, epoch);
      pending->arrive();
      continue;
    }
    const auto tp = p.tp;
    switch (p.error) {
      case errc::none:
        break;
      case errc::fenced_leader_epoch:
        spdlog::info("{}: {} is fenced at epoch {}; waiting for a newer LeaderAndIsr",
                     self->state.log_name, name_of(tp), epoch.value());
        self->state.parts.remove(tp, epoch);
        pending->arrive();
        continue;
      case errc::offset_out_of_range: {
        if (p.log_start > s->fetch_offset) {
          // Below the leader's log start (retention moved it): start over there.
          self->request(*replica, caf::infinite, restart_atom_v, epoch, p.log_start)
            .then(
              [self, tp, epoch, pending](offset end) {
                self->state.parts.advanced(tp, epoch, end);
                pending->arrive();
              },
              [self, tp, epoch, pending](caf::error& e) {
                back_off(self, tp, epoch, "restart failed: " + from_caf_error(e).to_string());
                pending->arrive();
              });
          continue;
        }
        // Past the leader's log end: truncate by epoch before fetching again.
        self->state.parts.needs_truncation(tp, epoch);
        pending->arrive();
        continue;
      }
      default:
        back_off_refused(self, tp, epoch, p.error, p.message);
        pending->arrive();
        continue;
    }
    const uint64_t taker = (*replica)->id();
    if (p.records.empty() && fetch_states::nothing_new(*s, p.high_watermark, p.log_start, taker)) {
      pending->arrive();
      continue;
    }
    // The bytes live in the reply frame; the log takes its own copy of them (a follower appends
    // the leader's batches verbatim).
    batch_buffer batches;
    if (!p.records.empty()) batches = batch_buffer::of(bytes(p.records.data, p.records.data + p.records.size));
    replicate_request req{epoch, std::move(batches), p.high_watermark, p.log_start};
    self->request(*replica, caf::infinite, replicate_atom_v, std::move(req))
      .then(
        [self, tp, epoch, pending, hw = p.high_watermark, start = p.log_start, taker](offset end) {
          self->state.parts.handed(tp, epoch, handed_over{end, hw, start, taker});
          pending->arrive();
        },
        [self, tp, epoch, from = s->fetch_offset, pending](caf::error& e) {
          auto err = from_caf_error(e);
          if (err.code == errc::fenced_leader_epoch || err.code == errc::not_leader_or_follower) {
            self->state.parts.remove(tp, epoch);
          } else if (err.code == errc::offset_out_of_range) {
            self->state.parts.needs_truncation(tp, epoch);
          } else if (err.code == errc::corrupt_message) {
            // The log validated every fetched batch (CRC included) and appended none: a bit
            // flipped on the leader's disk or on the way is never taken for data. As Kafka's
            // AbstractFetcherThread, the partition is fetched again after the back-off, when
            // the leader may read its copy correctly.
            back_off(self, tp, epoch,
                     "the batches fetched from offset " + std::to_string(from.value()) +
                       " are corrupt and none was appended: " + err.to_string());
          } else {
            back_off(self, tp, epoch, "append failed: " + err.to_string());
          }
          pending->arrive();
        });
  }
  pending->arrive();
}

void fetch_round(self_ptr self, std::vector<topic_partition> tps) {
  auto& st = self->state;
  st.busy = true;
  fetch_message fetch;
  fetch.replica = st.opts.node;
  fetch.incarnation = st.opts.incarnation;
  fetch.max_wait_ms = st.opts.config.max_wait_ms;
  fetch.min_bytes = st.opts.config.min_bytes;
  fetch.max_bytes = st.opts.config.response_max_bytes;
  std::map<topic_partition, leader_epoch> asked;
  for (const auto& tp : tps) {
    const auto* s = st.parts.find(tp);
    fetch.partitions.push_back(fetch_partition{tp, s->epoch, s->fetch_offset, offset{-1},
                                               st.opts.config.partition_max_bytes});
    asked.emplace(tp, s->epoch);
  }
  send_round(
    self, fetch_atom_v, encode_fetch(fetch), st.opts.config.max_wait_ms,
    [self, asked](capnp_frame& reply) {
      auto parts = decode_fetch_response(reply);
      if (!parts) {
        back_off_all(self, "malformed FetchResponse: " + parts.err().to_string());
        round_done(self);
        return;
      }
      apply_fetched(self, asked, std::move(*parts));
    },
    [self](const error& e) {
      session_failed(self, to_caf_error(e));
      round_done(self);
    });
}

replica_fetcher_actor::behavior_type fetcher_behavior(self_ptr self, replica_fetcher_options opts) {
  auto& st = self->state;
  st.opts = std::move(opts);
  st.log_name = "fetcher " + std::to_string(st.opts.index) + " of node " +
                std::to_string(st.opts.node.value()) + " from node " +
                std::to_string(st.opts.leader.value());
  self->set_down_handler([self](const caf::down_msg& msg) {
    auto& st = self->state;
    if (st.session && msg.source == st.session.address()) {
      spdlog::warn("{}: fetch session lost: {}", st.log_name, caf::to_string(msg.reason));
      st.session = nullptr;
    }
  });
  return {
      [self](assign_atom, std::vector<fetch_assignment>& assignments) {
        auto& st = self->state;
        for (const auto& a : assignments) {
          st.parts.add(a.tp, a.epoch, a.log_end, a.truncate_first);
          spdlog::info("{}: fetches {} at offset {} under leader epoch {}", st.log_name,
                       name_of(a.tp), a.log_end.value(), a.epoch.value());
        }
        pump(self);
      },
      [self](unassign_atom, const std::vector<topic_partition>& tps) {
        // An answer still in flight for these partitions is ignored when it arrives (they are no
        // longer here), and the replica refuses what the fetcher would append under the old epoch.
        for (const auto& tp : tps) self->state.parts.remove(tp);
        return true;
      },
      [self](tick_atom) {
        auto& st = self->state;
        st.tick.arrived(now_ms(self));
        run_deferred(self);
        check_round_deadline(self);
        pump(self);
      },
  };
}

} // namespace

replica_fetcher_actor spawn_replica_fetcher(caf::actor_system& sys, replica_fetcher_options options) {
  return sys.spawn(fetcher_behavior, std::move(options));
}

} // namespace capstan
