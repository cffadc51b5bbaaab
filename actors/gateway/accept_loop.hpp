#pragma once

// The accept loop of the node's kj servers (client RPC, metrics). It never ends on its own: a
// listener that stops accepting would leave the node up but unreachable until restarted.

#include <kj/async-io.h>
#include <kj/function.h>
#include <kj/timer.h>

namespace capstan {

// Accepts connections from `listener` and hands each to `serve`, until the returned promise is
// cancelled. A failed accept — kj throws EMFILE and other errors from accept() itself, not only
// through the promise — or a `serve` that throws is reported to `failed`, and accepting goes on
// after `pause`: an exhausted descriptor table stays exhausted for a while, and retrying at once
// would spin. Connections waiting meanwhile stay in the listen backlog.
// REQUIRES: `listener` and `timer` outlive the returned promise; called on their kj thread.
kj::Promise<void> accept_forever(kj::ConnectionReceiver& listener, kj::Timer& timer,
                                 kj::Function<void(kj::Own<kj::AsyncIoStream>)> serve,
                                 kj::Function<void(const kj::Exception&)> failed,
                                 kj::Duration pause = 100 * kj::MILLISECONDS);

} // namespace capstan
