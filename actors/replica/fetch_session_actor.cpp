// The fetch session: see fetch_session_actor.hpp.
//
// Reads go to every partition of a fetch at once; an answer is assembled when all replied. The
// response budget (the Fetch's maxBytes) is applied after the reads, starting at a partition
// that rotates with each fetch so every partition gets its turn (Kafka rotates partitions in
// its fetch sessions for the same reason).

#include "actors/replica/fetch_session_actor.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/armed_tick.hpp"
#include "actors/countdown.hpp"
#include "actors/replica/fetch_codec.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/cluster/link_faults.hpp"

namespace capstan {

namespace {

struct parked_fetch_request {
  fetch_message request;
  caf::typed_response_promise<capnp_frame> rp;
  std::chrono::steady_clock::time_point deadline;
  uint64_t id = 0;
};

struct session_state {
  static inline const char* name = "capstan.fetch_session";

  fetch_session_options opts;
  std::string log_name;
  std::optional<parked_fetch_request> parked;
  uint64_t next_id = 1;
  // A read is in flight for the parked fetch (notifications meanwhile set `reread`).
  bool reading = false;
  bool reread = false;
  size_t rotation = 0;
  // Answers the fault switch holds back, by when they go out.
  std::multimap<std::chrono::steady_clock::time_point,
                std::pair<caf::typed_response_promise<capnp_frame>, capnp_frame>>
    delayed;
  // The timer for parked fetches' deadlines: a caught-up follower's fetch parks at every batch.
  armed_tick<std::chrono::steady_clock::time_point> tick;
};

using self_ptr = fetch_session_actor::stateful_pointer<session_state>;

fetch_session_actor self_handle(self_ptr self) { return caf::actor_cast<fetch_session_actor>(self); }

// True iff the fault switch drops what the follower sends here: its request is left unanswered,
// as a lost one would be (the fetcher's own timeout ends it).
bool cut_off(self_ptr self) {
  return link_faults::instance().dropped(self->state.opts.follower, self->state.opts.node);
}

// Delivers `frame` to `rp`, unless the fault switch drops or delays the link to the follower.
void answer(self_ptr self, caf::typed_response_promise<capnp_frame> rp, capnp_frame frame) {
  auto fault = link_faults::instance().check(self->state.opts.node, self->state.opts.follower);
  if (fault.what == link_fault::kind::drop) return;
  if (fault.what == link_fault::kind::delay) {
    self->state.delayed.emplace(self->clock().now() + fault.delay,
                                std::make_pair(std::move(rp), std::move(frame)));
    self->delayed_send(self, fault.delay, tick_atom_v);
    return;
  }
  rp.deliver(std::move(frame));
}

void send_delayed(self_ptr self) {
  auto& st = self->state;
  const auto now = self->clock().now();
  while (!st.delayed.empty() && st.delayed.begin()->first <= now) {
    auto [rp, frame] = std::move(st.delayed.begin()->second);
    st.delayed.erase(st.delayed.begin());
    rp.deliver(std::move(frame));
  }
}

using reads_done = std::function<void(std::vector<fetched_partition>)>;

// Asks every partition's replica for its data; `done` gets the answers in request order.
void read_all(self_ptr self, const fetch_message& req, bool watch, reads_done done) {
  auto results = std::make_shared<std::vector<fetched_partition>>(req.partitions.size());
  auto pending =
    std::make_shared<countdown>(countdown{req.partitions.size() + 1, [results, done] { done(std::move(*results)); }});
  auto table = self->state.opts.routes();
  for (size_t i = 0; i < req.partitions.size(); ++i) {
    const auto& p = req.partitions[i];
    auto& out = (*results)[i];
    out.tp = p.tp;
    auto it = table->find(p.tp);
    if (it == table->end() || !it->second) {
      out.error = errc::unknown_topic_or_partition;
      out.message = "node " + std::to_string(self->state.opts.node.value()) + " has no replica of " +
                    p.tp.first + "-" + std::to_string(p.tp.second);
      pending->arrive();
      continue;
    }
    follower_fetch_request r{req.replica,  p.current_leader_epoch,
                             p.fetch_offset, p.max_bytes,
                             watch ? self_handle(self) : fetch_session_actor{}, req.incarnation};
    self->request(it->second, caf::infinite, ffetch_atom_v, std::move(r))
      .then(
        [results, i, pending](follower_fetch_result& res) {
          auto& out = (*results)[i];
          out.error = res.error;
          out.message = std::move(res.message);
          out.high_watermark = res.high_watermark;
          out.log_start = res.log_start;
          out.log_end = res.log_end;
          out.records = std::move(res.records);
          pending->arrive();
        },
        [results, i, pending](caf::error& e) {
          auto err = from_caf_error(e);
          // A replica gone between the lookup and the read (its topic was deleted).
          (*results)[i].error = err.code == errc::request_timed_out ? errc::not_leader_or_follower : err.code;
          (*results)[i].message = err.message;
          pending->arrive();
        });
  }
  pending->arrive();
}

// Applies the response budget: partitions keep their data while the total stays within
// `max_bytes`, the first one with data always (as Kafka: a batch larger than the limit still
// goes, so a follower can never get stuck on it).
int64_t apply_budget(std::vector<fetched_partition>& parts, int32_t max_bytes, size_t start) {
  int64_t total = 0;
  bool first = true;
  for (size_t k = 0; k < parts.size(); ++k) {
    auto& p = parts[(start + k) % parts.size()];
    if (p.records.empty()) continue;
    const auto size = static_cast<int64_t>(p.records.size);
    if (!first && total + size > max_bytes) {
      p.records = log_slice{{}, nullptr, 0, p.records.first_offset, p.records.first_offset};
      continue;
    }
    total += size;
    first = false;
  }
  return total;
}

// Makes sure a tick comes by `due`.
void arm_tick(self_ptr self, std::chrono::steady_clock::time_point due) {
  if (self->state.tick.arm(due))
    self->delayed_send(self, std::max(due - self->clock().now(), caf::timespan{0}), tick_atom_v);
}

void finish_parked(self_ptr self, std::vector<fetched_partition> parts) {
  auto& st = self->state;
  if (!st.parked) return;
  auto rp = st.parked->rp;
  st.parked.reset();
  answer(self, rp, encode_fetch_response(parts));
}

// Reads the parked fetch again; answers it if it is now satisfied or past its deadline.
void retry_parked(self_ptr self) {
  auto& st = self->state;
  if (!st.parked) return;
  if (st.reading) {
    st.reread = true;
    return;
  }
  st.reading = true;
  const auto id = st.parked->id;
  const bool expired = self->clock().now() >= st.parked->deadline;
  read_all(self, st.parked->request, !expired, [self, id](std::vector<fetched_partition> parts) {
    auto& st = self->state;
    st.reading = false;
    if (!st.parked || st.parked->id != id) return;
    const auto& req = st.parked->request;
    const auto total = apply_budget(parts, req.max_bytes, st.rotation++);
    if (total >= std::max(1, req.min_bytes) || self->clock().now() >= st.parked->deadline) {
      finish_parked(self, std::move(parts));
      return;
    }
    if (st.reread) {
      st.reread = false;
      retry_parked(self);
    }
  });
}

caf::result<capnp_frame> on_fetch(self_ptr self, const capnp_frame& frame) {
  auto& st = self->state;
  auto req = decode_fetch(frame);
  if (!req) {
    spdlog::warn("{}: malformed Fetch: {}", st.log_name, req.err().to_string());
    return to_caf_error(req.err());
  }
  if (req->replica != st.opts.follower)
    return to_caf_error(make_error(errc::invalid_request,
                                   "this session serves node " + std::to_string(st.opts.follower.value()) +
                                     ", not " + std::to_string(req->replica.value())));
  // A new fetch supersedes a parked one: its fetcher gave up on it.
  if (st.parked) finish_parked(self, {});
  req->max_wait_ms = std::clamp(req->max_wait_ms, 0, st.opts.max_wait_cap_ms);
  auto rp = self->make_response_promise<capnp_frame>();
  const auto id = st.next_id++;
  const bool may_wait = req->max_wait_ms > 0;
  st.parked = parked_fetch_request{*req, rp,
                                   self->clock().now() + std::chrono::milliseconds(req->max_wait_ms), id};
  st.reading = true;
  read_all(self, *req, may_wait, [self, id, may_wait](std::vector<fetched_partition> parts) {
    auto& st = self->state;
    st.reading = false;
    if (!st.parked || st.parked->id != id) return;
    const auto& req = st.parked->request;
    const auto total = apply_budget(parts, req.max_bytes, st.rotation++);
    if (!may_wait || total >= std::max(1, req.min_bytes)) {
      finish_parked(self, std::move(parts));
      return;
    }
    arm_tick(self, st.parked->deadline);
    if (st.reread) {
      st.reread = false;
      retry_parked(self);
    }
  });
  return rp;
}

caf::result<capnp_frame> on_epochs(self_ptr self, const capnp_frame& frame) {
  auto& st = self->state;
  auto queries = decode_epoch_queries(frame);
  if (!queries) {
    spdlog::warn("{}: malformed OffsetsForLeaderEpoch: {}", st.log_name, queries.err().to_string());
    return to_caf_error(queries.err());
  }
  auto rp = self->make_response_promise<capnp_frame>();
  auto answers = std::make_shared<std::vector<epoch_answer>>(queries->size());
  auto pending = std::make_shared<countdown>(
    countdown{queries->size() + 1, [self, rp, answers] { answer(self, rp, encode_epoch_answers(*answers)); }});
  auto table = st.opts.routes();
  for (size_t i = 0; i < queries->size(); ++i) {
    const auto& q = (*queries)[i];
    auto& out = (*answers)[i];
    out.tp = q.tp;
    auto it = table->find(q.tp);
    if (it == table->end() || !it->second) {
      out.error = errc::unknown_topic_or_partition;
      pending->arrive();
      continue;
    }
    self->request(it->second, caf::infinite, epochend_atom_v, q.current_leader_epoch, q.requested)
      .then(
        [answers, i, pending](const epoch_end& end) {
          (*answers)[i].end = end;
          pending->arrive();
        },
        [answers, i, pending](caf::error& e) {
          auto err = from_caf_error(e);
          (*answers)[i].error = err.code;
          (*answers)[i].message = err.message;
          pending->arrive();
        });
  }
  pending->arrive();
  return rp;
}

fetch_session_actor::behavior_type session_behavior(self_ptr self, fetch_session_options opts) {
  auto& st = self->state;
  st.opts = std::move(opts);
  st.log_name = "fetch session of node " + std::to_string(st.opts.follower.value()) + " on node " +
                std::to_string(st.opts.node.value());
  if (st.opts.fetcher) {
    self->monitor(st.opts.fetcher);
    self->set_down_handler([self](const caf::down_msg&) {
      spdlog::info("{}: the fetcher is gone; session ends", self->state.log_name);
      self->quit();
    });
  }
  return {
    [self](fetch_atom, const capnp_frame& frame) -> caf::result<capnp_frame> {
      if (cut_off(self)) return self->make_response_promise<capnp_frame>();
      return on_fetch(self, frame);
    },
    [self](epochend_atom, const capnp_frame& frame) -> caf::result<capnp_frame> {
      if (cut_off(self)) return self->make_response_promise<capnp_frame>();
      return on_epochs(self, frame);
    },
    [self](notify_atom) { retry_parked(self); },
    [self](tick_atom) {
      auto& st = self->state;
      const auto now = self->clock().now();
      st.tick.arrived(now);
      send_delayed(self);
      if (!st.parked) return;
      if (now >= st.parked->deadline)
        retry_parked(self);
      else
        arm_tick(self, st.parked->deadline);
    },
  };
}

} // namespace

fetch_session_actor spawn_fetch_session(caf::actor_system& sys, fetch_session_options options) {
  return sys.spawn(session_behavior, std::move(options));
}

} // namespace capstan
