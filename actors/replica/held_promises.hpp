#pragma once

// The response promises a partition replica holds while it waits on its log for the answer
// (log_call.hpp). CAF 0.17 drops an undelivered promise silently when its actor quits, and the
// log's exit message may overtake its answer, so the replica's exit handler answers every promise
// still held here with the reason it dies; a caller then gets that error instead of waiting out
// its own timeout. Used on the replica's actor only.

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <utility>

#include <caf/error.hpp>
#include <caf/typed_response_promise.hpp>

namespace capstan::replica_detail {

class held_promises {
public:
  held_promises() = default;
  held_promises(const held_promises&) = delete;
  held_promises& operator=(const held_promises&) = delete;
  held_promises(held_promises&&) = default;
  held_promises& operator=(held_promises&&) = default;

  // Holds a copy of `rp` until release(key) or fail_all; returns that key. The caller keeps its
  // own copy to deliver the answer with, and delivers it only if release says it still may.
  template <class... Ts>
  uint64_t hold(caf::typed_response_promise<Ts...> rp) {
    const auto key = next_key_++;
    held_.emplace(key,
                  [rp = std::move(rp)](const caf::error& reason) mutable { rp.deliver(reason); });
    return key;
  }

  // True iff `key` was held (fail_all has not answered it): its holder answers it now.
  bool release(uint64_t key) { return held_.erase(key) > 0; }

  // REQUIRES: `reason` is an error. Answers every held promise with it and holds none after.
  void fail_all(const caf::error& reason) {
    auto held = std::exchange(held_, {});
    for (auto& [key, fail] : held) fail(reason);
  }

private:
  std::unordered_map<uint64_t, std::function<void(const caf::error&)>> held_;
  uint64_t next_key_ = 0;
};

} // namespace capstan::replica_detail
