// The client's own thread: the kj event loop that owns every connection and in-flight call, and
// the queue through which other threads hand it work without blocking it.

#include "runtime/client/rpc_cluster_client.hpp"

#include <kj/debug.h>

namespace capstan::client {

rpc_cluster_client::rpc_cluster_client(client_config config) : cluster_client(std::move(config)) {
  std::promise<void> started;
  auto ready = started.get_future();
  thread_ = std::thread([this, &started] { run(started); });
  ready.wait();
}

rpc_cluster_client::~rpc_cluster_client() noexcept {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake();
  thread_.join();
}

void rpc_cluster_client::run(std::promise<void>& started) {
  auto io = kj::setupAsyncIo();
  kj::TaskSet tasks(*this);
  broker_connections connections(io, tasks);
  io_ = &io;
  tasks_ = &tasks;
  connections_ = &connections;
  loop_thread_ = std::this_thread::get_id();
  started.set_value();
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lock(mu_);
      if (queue_.empty() && !stopping_) {
        auto paf = kj::newPromiseAndCrossThreadFulfiller<void>();
        wake_ = kj::mv(paf.fulfiller);
        lock.unlock();
        paf.promise.wait(io.waitScope);
        lock.lock();
      }
      wake_ = nullptr;
      if (queue_.empty()) {
        if (stopping_) break;
        continue;
      }
      // One at a time: while jobs wait here, one the loop thread starts waits behind them
      // (on_loop).
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job();
  }
  connections_ = nullptr;
  tasks_ = nullptr;
  io_ = nullptr;
}

void rpc_cluster_client::taskFailed(kj::Exception&& exception) {
  KJ_LOG(WARNING, "capstan client task failed", exception);
}

void rpc_cluster_client::wake() {
  kj::Own<kj::CrossThreadPromiseFulfiller<void>> w;
  {
    std::lock_guard lock(mu_);
    w = kj::mv(wake_);
  }
  if (w) w->fulfill();
}

// Runs `job` on the loop thread: at once when called there with nothing queued, else queued.
// Jobs start in the order they were handed over, whichever thread handed them: a producer's
// batches reach the connection in the order it stamped their sequences, when a caller's thread
// queued one and the loop thread (completing an earlier batch) sends the next.
void rpc_cluster_client::on_loop(std::function<void()> job) {
  {
    std::lock_guard lock(mu_);
    if (std::this_thread::get_id() != loop_thread_ || !queue_.empty()) {
      queue_.push_back(std::move(job));
      job = nullptr;
    }
  }
  if (job)
    job();
  else
    wake();
}

} // namespace capstan::client
