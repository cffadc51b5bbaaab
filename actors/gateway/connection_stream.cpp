#include "actors/gateway/connection_stream.hpp"

#include <vector>

namespace capstan {

kj::Promise<size_t> connection_stream::tryRead(void* buffer, size_t min_bytes, size_t max_bytes) {
  KJ_IF_MAYBE (backlogged, backlogged_) {
    if ((*backlogged)())
      return timer_.afterDelay(hold_poll).then([this, buffer, min_bytes, max_bytes] {
        return tryRead(buffer, min_bytes, max_bytes);
      });
  }
  return inner_->tryRead(buffer, min_bytes, max_bytes);
}

kj::Promise<void> connection_stream::write(const void* buffer, size_t size) {
  return inner_->write(buffer, size);
}

kj::Promise<void> connection_stream::write(
    kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>> pieces) {
  if (pins_->owners.empty()) return inner_->write(pieces);
  std::vector<std::shared_ptr<const void>> held;
  for (auto piece : pieces) {
    auto it = pins_->owners.find(piece.begin());
    if (it == pins_->owners.end()) continue;
    held.push_back(std::move(it->second));
    pins_->owners.erase(it);
  }
  if (held.empty()) return inner_->write(pieces);
  return inner_->write(pieces).attach(kj::mv(held));
}

kj::Promise<void> connection_stream::whenWriteDisconnected() {
  return inner_->whenWriteDisconnected();
}

void connection_stream::shutdownWrite() {
  inner_->shutdownWrite();
}

void connection_stream::abortRead() {
  inner_->abortRead();
}

} // namespace capstan
