#pragma once

// `capstan debug fault isolate|drop-outgoing|drop-incoming|drop-produce-responses|drop-control|
// delay-control|disk-full|disk-read-only|disk-io-error|clear`: the fault switch of the node named by --bootstrap
// (schema/client.capnp, injectFault), for failure tests. The node must run with
// fault.injection.enable = true (docs/operations.md, "Fault injection").

#include <CLI/App.hpp>

namespace capstan::cli {

void add_debug_command(CLI::App& app);

} // namespace capstan::cli
