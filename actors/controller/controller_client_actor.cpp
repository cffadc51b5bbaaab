// The controller client actor: see controller_client_actor.hpp. Each request is a pending entry
// keyed by a number; an attempt's answer either finishes it or schedules its next attempt.

#include "actors/controller/controller_client_actor.hpp"

#include <map>
#include <memory>
#include <set>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "runtime/actor/caf_error.hpp"
#include "runtime/cluster/link_faults.hpp"
#include "runtime/cluster/producer_id_pool.hpp"

namespace capstan {

namespace {

using clock_type = std::chrono::steady_clock;

struct pending_request {
  enum class kind {
    create,
    remove,
    alter,
    grow,
    elect,
    reassign,
    unregister,
    add_voter,
    remove_voter,
    allocate_producer_ids
  };
  kind what = kind::create;
  std::string topic;
  capnp_frame frame;
  clock_type::time_point deadline;
  // The voter to ask next: a leader hint, or -1 for the next voter in turn.
  int32_t hint = -1;
  size_t next_voter = 0;
  // Whether a NOT_CONTROLLER answer already sent it on to the voter it named without a pause.
  bool redirected = false;
  std::string last_refusal = "no voter asked yet";
  caf::typed_response_promise<topic_metadata> created;
  // Answers a delete, an alter, a grow, an unregister or a voter change.
  caf::typed_response_promise<bool> done;
  // Answers an election or a reassignment.
  caf::typed_response_promise<election_outcomes> elected;
};

struct client_state {
  static inline const char* name = "capstan.controller_client";
  controller_client_options opts;
  uint64_t next_id = 0;
  std::map<uint64_t, pending_request> pending;
  // The voter that last answered as the active controller, or that a refusal named as it; -1:
  // none known. A new request goes there first (Kafka's NodeToControllerChannelManager keeps
  // the active controller the same way): asking the voters in turn from the first cost a
  // refusal and a retry pause on every request from a node whose first voter does not lead.
  int32_t known_controller = -1;
  // The producer id block this node hands out from, and the initProducerId requests waiting for
  // the next block while an AllocateProducerIds is out (allocating).
  producer_id_pool producer_ids;
  std::vector<caf::typed_response_promise<int64_t>> waiting_for_ids;
  bool allocating = false;
};

using client_ptr = controller_client_actor::stateful_pointer<client_state>;

// The AllocateProducerIds answer (or its failure): every waiting request gets an id of the new
// block, or the error. Requests beyond the block ask for the next one.
void producer_ids_arrived(client_ptr self, const allocate_producer_ids_response_msg& answer);

void finish(client_ptr self, uint64_t id, const topic_response_msg& answer) {
  auto it = self->state.pending.find(id);
  if (it == self->state.pending.end()) return;
  auto& p = it->second;
  if (p.what == pending_request::kind::allocate_producer_ids) {
    self->state.pending.erase(it);
    return producer_ids_arrived(
        self, allocate_producer_ids_response_msg{answer.error, answer.message, 0, 0, -1});
  }
  if (answer.error != errc::none) {
    auto err = to_caf_error(make_error(answer.error, answer.message));
    if (p.what == pending_request::kind::create)
      p.created.deliver(err);
    else if (p.what == pending_request::kind::elect || p.what == pending_request::kind::reassign)
      p.elected.deliver(err);
    else
      p.done.deliver(err);
  } else if (p.what == pending_request::kind::create) {
    topic_metadata t;
    t.name = p.topic;
    t.id = answer.id;
    p.created.deliver(std::move(t));
  } else {
    p.done.deliver(true);
  }
  self->state.pending.erase(it);
}

// The attempt failed or was refused: try again after the backoff while time is left.
void retry(client_ptr self, uint64_t id, std::string why) {
  auto it = self->state.pending.find(id);
  if (it == self->state.pending.end()) return;
  auto& p = it->second;
  p.last_refusal = std::move(why);
  const auto backoff = self->state.opts.retry_backoff;
  if (clock_type::now() + backoff >= p.deadline) {
    topic_response_msg timed_out;
    timed_out.error = errc::request_timed_out;
    timed_out.message = "no active controller answered within " +
                        std::to_string(self->state.opts.request_timeout.count()) +
                        " ms; last: " + p.last_refusal;
    return finish(self, id, timed_out);
  }
  self->delayed_send(self, backoff, cretry_atom_v, id);
}

void attempt(client_ptr self, uint64_t id);

// A voter that could not be reached or did not answer is no longer taken for the controller.
void unreachable(client_ptr self, uint64_t id, node_id target, const caf::error& err) {
  if (self->state.known_controller == target.value()) self->state.known_controller = -1;
  retry(self, id, "voter " + std::to_string(target.value()) + ": " + caf::to_string(err));
}

// A voter's answer: NOT_CONTROLLER tries the voter it names next (or the next voter in turn);
// any other answer marks the voter as the active controller. True iff the answer was such a
// refusal (and the next attempt is under way or scheduled).
bool refused_as_not_controller(client_ptr self, uint64_t id, node_id target, errc error,
                               int32_t leader_hint, const std::string& message) {
  auto& st = self->state;
  if (error != errc::not_controller) {
    st.known_controller = target.value();
    return false;
  }
  const int32_t named = leader_hint == target.value() ? -1 : leader_hint;
  st.known_controller = named;
  auto pit = st.pending.find(id);
  if (pit != st.pending.end()) {
    pit->second.hint = named;
    // The first redirect to a named voter goes at once; a second means the voters disagree (an
    // election is under way) and waits, so two voters naming each other cannot spin.
    if (named >= 0 && !pit->second.redirected) {
      pit->second.redirected = true;
      pit->second.last_refusal = "voter " + std::to_string(target.value()) + ": " + message;
      attempt(self, id);
      return true;
    }
  }
  retry(self, id, "voter " + std::to_string(target.value()) + ": " + message);
  return true;
}

void ask_endpoint(client_ptr self, uint64_t id, node_id target, const node_endpoint_actor& ep) {
  auto it = self->state.pending.find(id);
  if (it == self->state.pending.end()) return;
  auto& p = it->second;
  auto failed = [self, id, target](caf::error& err) { unreachable(self, id, target, err); };
  const auto wait = self->state.opts.attempt_timeout;
  if (p.what == pending_request::kind::allocate_producer_ids) {
    auto allocated = [self, id, target](const capnp_frame& f) {
      auto answer = decode_allocate_producer_ids_response(f);
      if (!answer) return retry(self, id, answer.err().to_string());
      if (refused_as_not_controller(self, id, target, answer->error, answer->leader_hint,
                                    answer->message))
        return;
      // Timed out before this answer came: its waiters already heard so, the block goes unused.
      if (self->state.pending.erase(id) == 0) return;
      producer_ids_arrived(self, *answer);
    };
    self->request(ep, wait, allocpid_atom_v, p.frame).then(allocated, failed);
    return;
  }
  if (p.what == pending_request::kind::elect || p.what == pending_request::kind::reassign) {
    auto elected = [self, id, target](const capnp_frame& f) {
      auto answer = decode_elect_leaders_response(f);
      if (!answer) return retry(self, id, answer.err().to_string());
      if (refused_as_not_controller(self, id, target, answer->error, answer->leader_hint,
                                    answer->message))
        return;
      auto it = self->state.pending.find(id);
      if (it == self->state.pending.end()) return;
      if (answer->error != errc::none)
        it->second.elected.deliver(to_caf_error(make_error(answer->error, answer->message)));
      else
        it->second.elected.deliver(std::move(answer->results));
      self->state.pending.erase(it);
    };
    if (p.what == pending_request::kind::elect)
      self->request(ep, wait, elect_atom_v, p.frame).then(elected, failed);
    else
      self->request(ep, wait, reassign_atom_v, p.frame).then(elected, failed);
    return;
  }
  auto ok = [self, id, target](const capnp_frame& f) {
    auto answer = decode_topic_response(f);
    if (!answer) return retry(self, id, answer.err().to_string());
    if (refused_as_not_controller(self, id, target, answer->error, answer->leader_hint,
                                  answer->message))
      return;
    finish(self, id, *answer);
  };
  switch (p.what) {
  case pending_request::kind::create:
    self->request(ep, wait, mktopic_atom_v, p.frame).then(ok, failed);
    break;
  case pending_request::kind::remove:
    self->request(ep, wait, rmtopic_atom_v, p.frame).then(ok, failed);
    break;
  case pending_request::kind::alter:
    self->request(ep, wait, altercfg_atom_v, p.frame).then(ok, failed);
    break;
  case pending_request::kind::grow:
    self->request(ep, wait, mkparts_atom_v, p.frame).then(ok, failed);
    break;
  case pending_request::kind::unregister:
    self->request(ep, wait, unregister_atom_v, p.frame).then(ok, failed);
    break;
  // The active controller answers a voter change only once it committed, which waits for an
  // added node to catch up: longer than other requests take.
  case pending_request::kind::add_voter:
    self->request(ep, self->state.opts.voter_change_timeout, add_voter_atom_v, p.frame)
        .then(ok, failed);
    break;
  case pending_request::kind::remove_voter:
    self->request(ep, self->state.opts.voter_change_timeout, remove_voter_atom_v, p.frame)
        .then(ok, failed);
    break;
  case pending_request::kind::elect:
  case pending_request::kind::reassign:
  case pending_request::kind::allocate_producer_ids:
    break;
  }
}

void attempt(client_ptr self, uint64_t id) {
  auto& st = self->state;
  auto it = st.pending.find(id);
  if (it == st.pending.end()) return;
  auto& p = it->second;
  node_id target{p.hint};
  if (p.hint < 0) {
    target = st.opts.voters[p.next_voter % st.opts.voters.size()].node;
    ++p.next_voter;
  }
  p.hint = -1;
  if (target == st.opts.node && st.opts.self_endpoint)
    return ask_endpoint(self, id, target, st.opts.self_endpoint);
  if (link_faults::instance().dropped(st.opts.node, target))
    return retry(self, id,
                 "voter " + std::to_string(target.value()) + ": the fault switch cuts the link");
  self->request(st.opts.peers, st.opts.attempt_timeout, endpoint_atom_v, target)
      .then([self, id, target](node_endpoint_actor& ep) { ask_endpoint(self, id, target, ep); },
            [self, id, target](caf::error& err) { unreachable(self, id, target, err); });
}

// One `cluster describe`: the voters' answers so far and how many are still out.
struct describe_round {
  caf::typed_response_promise<cluster_description_ptr> promise;
  std::vector<voter_answer> answers;
  size_t waiting = 0;
  std::set<int32_t> asked;
  // Whether the voters in effect that the bootstrap voters named were asked too.
  bool widened = false;
};

void ask_voter(client_ptr self, const std::shared_ptr<describe_round>& round, node_id voter);

// Once every voter asked has answered: the voters in effect that no --controller-quorum names
// (added by `cluster add-voter`) are asked in a second round, so that an active controller among
// them is heard; then the answers are merged.
void voter_answered(client_ptr self, const std::shared_ptr<describe_round>& round,
                    voter_answer answer) {
  round->answers.push_back(std::move(answer));
  if (--round->waiting > 0) return;
  if (!round->widened) {
    round->widened = true;
    std::set<int32_t> more;
    for (const auto& a : round->answers)
      if (a.state)
        for (auto v : a.state->voters)
          if (round->asked.count(v) == 0) more.insert(v);
    if (!more.empty()) {
      round->waiting = more.size();
      for (auto v : more) ask_voter(self, round, node_id{v});
      return;
    }
  }
  round->promise.deliver(std::make_shared<const cluster_description>(
      merge_voter_answers(std::move(round->answers))));
}

void ask_voter_state(client_ptr self, const std::shared_ptr<describe_round>& round, node_id voter,
                     const node_endpoint_actor& ep) {
  self->request(ep, self->state.opts.attempt_timeout, descquorum_atom_v,
                self->state.opts.node.value())
      .then(
          [self, round, voter](const capnp_frame& f) {
            auto s = decode_voter_state(f);
            if (!s)
              return voter_answered(self, round,
                                    {voter.value(), std::nullopt, s.err().to_string()});
            voter_answered(self, round, {voter.value(), std::move(*s), {}});
          },
          [self, round, voter](caf::error& err) {
            voter_answered(self, round,
                           {voter.value(), std::nullopt, from_caf_error(err).to_string()});
          });
}

void ask_voter(client_ptr self, const std::shared_ptr<describe_round>& round, node_id voter) {
  auto& st = self->state;
  round->asked.insert(voter.value());
  if (voter == st.opts.node && st.opts.self_endpoint)
    return ask_voter_state(self, round, voter, st.opts.self_endpoint);
  if (link_faults::instance().dropped(st.opts.node, voter))
    return voter_answered(self, round,
                          {voter.value(), std::nullopt, "the fault switch cuts the link"});
  self->request(st.opts.peers, st.opts.attempt_timeout, endpoint_atom_v, voter)
      .then([self, round, voter](node_endpoint_actor& ep) { ask_voter_state(self, round, voter, ep); },
            [self, round, voter](caf::error& err) {
              voter_answered(self, round,
                             {voter.value(), std::nullopt, from_caf_error(err).to_string()});
            });
}

caf::result<cluster_description_ptr> describe_quorum(client_ptr self) {
  auto& st = self->state;
  auto round = std::make_shared<describe_round>();
  round->promise = self->make_response_promise<cluster_description_ptr>();
  round->waiting = st.opts.voters.size();
  auto rp = round->promise;
  for (const auto& v : st.opts.voters) ask_voter(self, round, v.node);
  return rp;
}

uint64_t add(client_ptr self, pending_request p) {
  auto& st = self->state;
  p.deadline = clock_type::now() + st.opts.request_timeout;
  p.hint = st.known_controller;
  const auto id = st.next_id++;
  st.pending.emplace(id, std::move(p));
  attempt(self, id);
  return id;
}

void allocate_producer_ids(client_ptr self) {
  auto& st = self->state;
  if (st.allocating) return;
  st.allocating = true;
  pending_request p;
  p.what = pending_request::kind::allocate_producer_ids;
  p.frame = encode(allocate_producer_ids_msg{st.opts.node});
  add(self, std::move(p));
}

void producer_ids_arrived(client_ptr self, const allocate_producer_ids_response_msg& answer) {
  auto& st = self->state;
  st.allocating = false;
  auto waiting = std::move(st.waiting_for_ids);
  st.waiting_for_ids.clear();
  if (answer.error != errc::none) {
    spdlog::warn("node {}: no producer id block from the controller: {}", st.opts.node.value(),
                 answer.message);
    auto err = to_caf_error(make_error(answer.error, answer.message));
    for (auto& rp : waiting) rp.deliver(err);
    return;
  }
  spdlog::info("node {}: producer ids [{}, {}) from the controller", st.opts.node.value(),
               answer.first_id, answer.first_id + answer.size);
  st.producer_ids.refill(producer_id_block{answer.first_id, answer.size});
  for (auto& rp : waiting) {
    if (auto pid = st.producer_ids.take()) {
      rp.deliver(*pid);
      continue;
    }
    st.waiting_for_ids.push_back(std::move(rp));
  }
  if (!st.waiting_for_ids.empty()) allocate_producer_ids(self);
}

controller_client_actor::behavior_type client_behavior(client_ptr self,
                                                       controller_client_options opts) {
  self->state.opts = std::move(opts);
  return {
      [self](mktopic_atom, topic_spec& spec) -> caf::result<topic_metadata> {
        pending_request p;
        p.what = pending_request::kind::create;
        p.topic = spec.name;
        p.frame = encode(spec, self->state.opts.node);
        p.created = self->make_response_promise<topic_metadata>();
        auto rp = p.created;
        add(self, std::move(p));
        return rp;
      },
      [self](rmtopic_atom, std::string& name) -> caf::result<bool> {
        pending_request p;
        p.what = pending_request::kind::remove;
        p.topic = name;
        p.frame = encode(delete_topic_msg{name}, self->state.opts.node);
        p.done = self->make_response_promise<bool>();
        auto rp = p.done;
        add(self, std::move(p));
        return rp;
      },
      [self](altercfg_atom, std::string& name, std::map<std::string, std::string>& configs,
             std::vector<std::string>& deleted) -> caf::result<bool> {
        pending_request p;
        p.what = pending_request::kind::alter;
        p.topic = name;
        p.frame = encode(alter_configs_msg{name, std::move(configs), std::move(deleted)},
                         self->state.opts.node);
        p.done = self->make_response_promise<bool>();
        auto rp = p.done;
        add(self, std::move(p));
        return rp;
      },
      [self](mkparts_atom, std::string& name, int32_t total) -> caf::result<bool> {
        pending_request p;
        p.what = pending_request::kind::grow;
        p.topic = name;
        p.frame = encode(create_partitions_msg{name, total}, self->state.opts.node);
        p.done = self->make_response_promise<bool>();
        auto rp = p.done;
        add(self, std::move(p));
        return rp;
      },
      [self](elect_atom, election_targets& partitions) -> caf::result<election_outcomes> {
        pending_request p;
        p.what = pending_request::kind::elect;
        p.frame = encode(elect_leaders_msg{std::move(partitions)}, self->state.opts.node);
        p.elected = self->make_response_promise<election_outcomes>();
        auto rp = p.elected;
        add(self, std::move(p));
        return rp;
      },
      [self](reassign_atom, reassignment_items& partitions) -> caf::result<election_outcomes> {
        pending_request p;
        p.what = pending_request::kind::reassign;
        p.frame = encode(reassign_partitions_msg{std::move(partitions)}, self->state.opts.node);
        p.elected = self->make_response_promise<election_outcomes>();
        auto rp = p.elected;
        add(self, std::move(p));
        return rp;
      },
      [self](unregister_atom, int32_t node) -> caf::result<bool> {
        pending_request p;
        p.what = pending_request::kind::unregister;
        p.frame = encode(unregister_broker_msg{node_id{node}}, self->state.opts.node);
        p.done = self->make_response_promise<bool>();
        auto rp = p.done;
        add(self, std::move(p));
        return rp;
      },
      [self](add_voter_atom, int32_t voter, std::string& endpoint) -> caf::result<bool> {
        pending_request p;
        p.what = pending_request::kind::add_voter;
        p.frame = encode(add_voter_msg{node_id{voter}, std::move(endpoint)}, self->state.opts.node);
        p.done = self->make_response_promise<bool>();
        auto rp = p.done;
        add(self, std::move(p));
        return rp;
      },
      [self](remove_voter_atom, int32_t voter) -> caf::result<bool> {
        pending_request p;
        p.what = pending_request::kind::remove_voter;
        p.frame = encode(remove_voter_msg{node_id{voter}}, self->state.opts.node);
        p.done = self->make_response_promise<bool>();
        auto rp = p.done;
        add(self, std::move(p));
        return rp;
      },
      [self](initpid_atom) -> caf::result<int64_t> {
        auto& st = self->state;
        if (auto pid = st.producer_ids.take()) return *pid;
        auto rp = self->make_response_promise<int64_t>();
        st.waiting_for_ids.push_back(rp);
        allocate_producer_ids(self);
        return rp;
      },
      [self](descquorum_atom) { return describe_quorum(self); },
      [self](cretry_atom, uint64_t id) { attempt(self, id); },
  };
}

} // namespace

controller_client_actor spawn_controller_client(caf::actor_system& sys,
                                                controller_client_options options) {
  return sys.spawn(client_behavior, std::move(options));
}

} // namespace capstan
