#pragma once

#include <cstdint>

namespace capstan::test {

// A port that was free on 127.0.0.1 a moment ago, chosen at random below the kernel's ephemeral
// range (ip_local_port_range): a port handed out by bind(0) is the kind every outgoing connection
// of a parallel test also takes, and one did take a node's metrics port between the pick and the
// node's bind in a CI run. Never one it returned before in this process; only another test
// process's pick can still collide.
uint16_t free_port();

} // namespace capstan::test
