#pragma once

// How a voter drives its active controller (docs/controller.md, "The active controller"): the
// queue of requests decided one at a time, proposals and their outcomes, becoming active and
// stopping being so as the quorum member's status says, session expiries and leader recoveries
// put ahead of the queue, and the numbered control streams to the nodes. It is the controller
// actor's logic without its messaging: the actor feeds it what arrives and carries out what it
// asks through a controller_io, and the controller simulation
// (tests/unit/controller/controller_simulation) drives the very same class over an in-memory
// network, so what the simulation checks is what a node runs.
//
// A generation number, bumped whenever the driver becomes active or stops being so, tells late
// answers of an earlier activity from current ones. Times are milliseconds of any monotonic
// clock; the class never reads one. Not thread-safe.

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/controller/active_controller.hpp"
#include "actors/controller/control_streams.hpp"
#include "actors/controller/quorum_member.hpp"

namespace capstan::controller {

// What the driver asks of its shell, from within any of the driver's inputs. The shell answers
// through the inputs named below, later or (a message its fault switch drops) from within the
// call.
class controller_io {
public:
  virtual ~controller_io() = default;
  // Delivers a request's answer; `reply` is what the shell passed with the request.
  virtual void reply(uint64_t reply, const controller_answer& answer) = 0;
  // Proposes `records` through the quorum member. The shell answers with proposal_committed or
  // proposal_failed, naming `token`.
  virtual void propose(uint64_t token, const std::vector<metadata_record>& records) = 0;
  // Reads the member's committed image for activation; the shell answers with activate() (or
  // activation_failed()).
  virtual void read_image() = 0;
  // The nodes registered in `image` are where control messages go next.
  virtual void learn_nodes(const metadata_image& image) = 0;
  // Sends `m` to `to`. The shell answers with answered(to, generation, applied) once `to` applied
  // it, or refused it, or it failed, timed out or was lost.
  virtual void send(node_id to, uint64_t generation, control_streams::sendable m) = 0;
};

class controller_driver {
public:
  // `io` must outlive the driver.
  controller_driver(active_controller_options options, controller_io& io);

  controller_driver(const controller_driver&) = delete;
  controller_driver& operator=(const controller_driver&) = delete;

  // A node's request, or why it could not be read (then `shape` is its kind, for the refusal).
  // `reply`: the shell's name for where the answer goes; 0 when nobody waits for one.
  void request(result<controller_request> request, const controller_request& shape, uint64_t reply,
               int64_t now_ms);

  // The member's status, read periodically: stops being active when the member no longer leads
  // that term (or hands its leadership over); asks for the image to become active when it leads
  // and has applied its whole log (its own no-op included, so the image holds every entry
  // earlier leaders committed); while active, puts expired sessions ahead of the queue (also
  // while a request is being decided: under a steady load of requests a dead node's leaderships
  // would otherwise wait behind them) and queues a leader recovery when one is due.
  void status(const quorum_status& s, int64_t now_ms);
  // The connection to node `node` closed: while active, its session ends now and its fencing goes
  // ahead of the queue (broker_sessions::connection_lost).
  void connection_lost(node_id node, int64_t now_ms);
  // The image read_image() asked for: becomes the active controller of the term the member led
  // when it was asked for (a later status() stops that if the member no longer leads it).
  void activate(metadata_image image, int64_t now_ms);
  void activation_failed();

  // The proposal `token` committed, and `image` is the member's image after it (`applied`: the
  // error its records failed to apply with). A proposal of an earlier activity is answered as
  // committed all the same (active_controller::committed_answer).
  void proposal_committed(uint64_t token, metadata_image image, const error& applied,
                          int64_t now_ms);
  // The proposal `token` did not commit, or its fate is unknown (NOT_CONTROLLER,
  // REQUEST_TIMED_OUT): its request is refused so, and the driver stops being active.
  void proposal_failed(uint64_t token, errc code, const std::string& why,
                       std::optional<int32_t> leader_hint);

  // The message out to `to` in `generation` was applied there, or not; the next goes.
  void answered(node_id to, uint64_t generation, bool applied);

  // The periodic preferred leader election (auto.leader.rebalance.enable).
  void rebalance(int64_t now_ms);

  const active_controller& core() const { return core_; }
  bool active() const { return core_.active(); }
  // The quorum leader as last heard of, for refusals; -1: none known.
  int32_t leader_hint() const { return leader_hint_; }
  // Requests waiting to be decided, and whether one is being decided (tests, reports).
  size_t queued() const { return queue_.size(); }
  bool busy() const { return busy_; }
  // The request proposed as `token` while its outcome is unknown, decided; null otherwise (the
  // simulation's checks of what was decided).
  const prepared_request* proposal(uint64_t token) const {
    auto it = proposals_.find(token);
    return it == proposals_.end() ? nullptr : &it->second.prepared;
  }

private:
  struct queued_request {
    controller_request request;
    uint64_t reply = 0;
  };
  struct proposed {
    queued_request q;
    prepared_request prepared;
    uint64_t generation = 0;
  };

  void answer(const queued_request& q, const controller_answer& a);
  void refuse_all(errc code, const std::string& why);
  void deactivate(const std::string& why);
  void dispatch(std::vector<outgoing_message> messages);
  void drain(node_id to);
  void settle(const queued_request& q, const prepared_request& p,
              std::optional<metadata_image> image, const error& applied, int64_t now_ms);
  void pump(int64_t now_ms);
  // Puts a fence of every node whose session expired by `now_ms` ahead of the queue.
  void queue_expiries(int64_t now_ms);
  // Queues the driver's own request of `Request`'s kind unless one is queued already.
  template <class Request>
  void queue_once(Request r);

  active_controller_options opts_;
  controller_io& io_;
  active_controller core_;
  control_streams streams_;
  int32_t leader_hint_ = -1;
  uint64_t generation_ = 0;
  bool activating_ = false;
  int32_t activating_term_ = 0;
  bool busy_ = false;
  uint64_t next_token_ = 0;
  std::deque<queued_request> queue_;
  std::map<uint64_t, proposed> proposals_;
};

} // namespace capstan::controller
