#pragma once

// Consumer settings by their Kafka names (`consume --consumer-property KEY=VALUE`, as
// kafka-console-consumer's), into a client_config.

#include <string>

#include "runtime/client/client_config.hpp"
#include "runtime/result.hpp"

namespace capstan::client {

// INVALID_CONFIG for a key this consumer does not have (naming those it does) or a value that is
// not one for it.
status set_consumer_property(client_config& config, const std::string& key, const std::string& value);

} // namespace capstan::client
