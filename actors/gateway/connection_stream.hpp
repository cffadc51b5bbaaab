#pragma once

// The byte stream under one client connection's Cap'n Proto network. It does two things the
// network cannot: it keeps zero-copy fetch data alive until it is written, and it stops reading
// from a client that does not read its answers.
//
// Threads: the RPC server's kj thread only.

#include <map>
#include <memory>

#include <kj/async-io.h>
#include <kj/function.h>
#include <kj/timer.h>

namespace capstan {

// Owners of log bytes that fetch responses of one connection refer to, keyed by the bytes'
// address. A fetch response refers to log bytes without copying them
// (Orphanage::referenceExternalData), and Cap'n Proto writes the response after the call has
// returned, with no hook telling when; so the service pins the owner here and the connection's
// stream releases it once the write whose pieces start at those bytes completes. A response that
// is never written (the client cancelled the call) stays pinned until the connection closes.
struct fetch_pins {
  std::multimap<const void*, std::shared_ptr<const void>> owners;
};

class connection_stream final : public kj::AsyncIoStream {
public:
  // How often a held-back read looks again whether it may go on.
  static constexpr kj::Duration hold_poll = 10 * kj::MILLISECONDS;

  // REQUIRES: `timer` outlives the stream.
  connection_stream(kj::Own<kj::AsyncIoStream> inner, std::shared_ptr<fetch_pins> pins,
                    kj::Timer& timer)
      : inner_(kj::mv(inner)), pins_(std::move(pins)), timer_(timer) {}
  connection_stream(const connection_stream&) = delete;
  connection_stream& operator=(const connection_stream&) = delete;
  ~connection_stream() = default;

  // From now on a read waits while `backlogged()` says so: the connection's answers are piling up
  // unsent, so reading more requests would only add to them. The client that reads its answers
  // lets the reads go on; one that does not waits in its own send buffer.
  void hold_reads_while(kj::Function<bool()> backlogged) { backlogged_ = kj::mv(backlogged); }

  kj::Promise<size_t> tryRead(void* buffer, size_t min_bytes, size_t max_bytes) override;
  kj::Promise<void> write(const void* buffer, size_t size) override;
  kj::Promise<void> write(kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>> pieces) override;
  kj::Promise<void> whenWriteDisconnected() override;
  void shutdownWrite() override;
  void abortRead() override;

private:
  kj::Own<kj::AsyncIoStream> inner_;
  std::shared_ptr<fetch_pins> pins_;
  kj::Timer& timer_;
  kj::Maybe<kj::Function<bool()>> backlogged_;
};

} // namespace capstan
