#pragma once

// How a partition replica asks its log while a caller waits on one of its response promises:
//
//   ask_log(self, rp, read_atom_v, read_request{...})
//     .then([rp](log_slice& slice) mutable { rp.deliver(...); });
//
// `rp` stays in the replica's held_promises (held_promises.hpp) until the log answers, so that the
// exit handler answers it if the log dies first. A handler runs only if its promise is still held;
// without an error handler, a failed request answers `rp` with its error. Internal to
// actors/replica; include it only where caf/all.hpp is.
//
// A request the replica `await`s (a new epoch, a truncation, a reset) does not go through here:
// CAF 0.17 holds back every other message during an await, the log's exit and even a kill among
// them, so no exit handler could answer it. Its answer comes from the log, which answers every
// request it took before it quits on a storage failure (partition_log_actor.cpp, fail), or from
// CAF, which bounces what is still in a dead log's mailbox.

#include <utility>

#include "actors/replica/partition_replica_state.hpp"

namespace capstan::replica_detail {

template <class T, class Handle>
class log_call;

template <class T, class Self, class... Answer>
class log_call<T, caf::response_handle<Self, caf::detail::type_list<Answer...>, false>> {
public:
  using handle_type = caf::response_handle<Self, caf::detail::type_list<Answer...>, false>;

  log_call(self_ptr self, handle_type handle, caf::typed_response_promise<T> rp)
      : self_(self), handle_(handle), rp_(std::move(rp)) {}

  // Runs `on_answer` with the log's answer, or `on_error` (by default: deliver it to rp) with the
  // error of a failed request; neither once the exit handler answered rp.
  template <class OnAnswer>
  void then(OnAnswer on_answer) && {
    std::move(*this).then(std::move(on_answer), deliver_error());
  }
  template <class OnAnswer, class OnError>
  void then(OnAnswer on_answer, OnError on_error) && {
    const auto key = self_->state.held.hold(rp_);
    handle_.then(guarded(key, std::move(on_answer)), guarded_error(key, std::move(on_error)));
  }

private:
  auto deliver_error() {
    return [rp = rp_](caf::error& e) mutable { rp.deliver(std::move(e)); };
  }
  template <class OnAnswer>
  auto guarded(uint64_t key, OnAnswer on_answer) {
    return [self = self_, key, on_answer = std::move(on_answer)](Answer&... answer) mutable {
      if (self->state.held.release(key)) on_answer(answer...);
    };
  }
  template <class OnError>
  auto guarded_error(uint64_t key, OnError on_error) {
    return [self = self_, key, on_error = std::move(on_error)](caf::error& e) mutable {
      if (self->state.held.release(key)) on_error(e);
    };
  }

  self_ptr self_;
  handle_type handle_;
  caf::typed_response_promise<T> rp_;
};

// Sends `args` to the replica's log, without a timeout (the log answers every request, or dies
// and the exit handler answers `rp`); the answer goes to the handler given to then.
template <class T, class... Args>
auto ask_log(self_ptr self, caf::typed_response_promise<T> rp, Args&&... args) {
  auto handle = self->request(self->state.log, caf::infinite, std::forward<Args>(args)...);
  return log_call<T, decltype(handle)>(self, handle, std::move(rp));
}

} // namespace capstan::replica_detail
