#pragma once

// An in-process `node` for cluster tests: every listener on 127.0.0.1 with a free port, and a
// library client bootstrapped at it.

#include <cstdint>
#include <filesystem>
#include <memory>

#include "actors/node/node.hpp"
#include "runtime/client/cluster_client.hpp"

namespace capstan::test {

node_config loopback_node_config(const std::filesystem::path& data_dir, int32_t node_id = 1);

// REQUIREs that the client connects.
std::unique_ptr<client::cluster_client> connect_client(const node& n);

} // namespace capstan::test
