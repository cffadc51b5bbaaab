#include "actors/node/single_node_import.hpp"

#include <vector>

#include "runtime/cluster/metadata_store.hpp"
#include "runtime/cluster/topic_validation.hpp"
#include "runtime/storage/file_handle.hpp"

namespace capstan {

namespace fs = std::filesystem;

result<std::optional<controller::import_topics_msg>> stage_single_node_import(
  const fs::path& data_dir, node_id node) {
  const auto store_file = data_dir / metadata_store_file;
  const auto import_file = data_dir / single_node_import_file;
  auto store = read_metadata_store(store_file);
  if (!store) return store.err();
  cluster_metadata kept = *store;
  kept.topics.clear();
  kept.next_producer_id = 0;
  cluster_metadata moved = *store;
  moved.topics.clear();
  // Its node-local __consumer_offsets too: it becomes the cluster's, with the groups' commits.
  for (auto& [name, t] : store->topics) moved.topics.emplace(name, t);

  std::error_code ec;
  const bool staged = fs::exists(import_file, ec);
  if (!staged && moved.topics.empty() && moved.next_producer_id == 0) return std::optional<controller::import_topics_msg>{};
  if (!staged)
    if (auto s = write_metadata_store(import_file, moved); !s) return s.err();
  if (!moved.topics.empty() || moved.next_producer_id != 0)
    if (auto s = write_metadata_store(store_file, kept); !s) return s.err();

  auto pending = read_metadata_store(import_file);
  if (!pending) return pending.err();
  controller::import_topics_msg out;
  out.node = node;
  out.next_producer_id = pending->next_producer_id;
  for (auto& [name, t] : pending->topics) out.topics.push_back(std::move(t));
  return std::optional<controller::import_topics_msg>{std::move(out)};
}

status refuse_node_local_offsets(const fs::path& data_dir, node_id node) {
  const auto store_file = data_dir / metadata_store_file;
  std::error_code ec;
  if (!fs::exists(store_file, ec)) return {};
  auto store = read_metadata_store(store_file);
  if (!store) return store.err();
  auto it = store->topics.find(consumer_offsets_topic);
  if (it == store->topics.end()) return {};
  return make_error(
      errc::invalid_config,
      "node " + std::to_string(node.value()) + " holds a node-local " + consumer_offsets_topic +
          " of " + std::to_string(it->second.partitions.size()) +
          " partitions from an earlier version, which the cluster's replicated " +
          consumer_offsets_topic + " cannot take over: its commits are the groups' on this node "
          "alone. To start, move the directories " + consumer_offsets_topic + "-* out of " +
          data_dir.string() + " and remove [topics." + consumer_offsets_topic + "] from " +
          store_file.string() + " (docs/operations.md, \"Group offsets from an earlier version\")");
}

status finish_single_node_import(const fs::path& data_dir) {
  if (auto s = remove_file(data_dir / single_node_import_file); !s) return s;
  return sync_directory(data_dir);
}

} // namespace capstan
