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
  for (auto& [name, t] : store->topics)
    (t.internal || is_internal_topic(name) ? kept : moved).topics.emplace(name, t);

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

status finish_single_node_import(const fs::path& data_dir) {
  if (auto s = remove_file(data_dir / single_node_import_file); !s) return s;
  return sync_directory(data_dir);
}

} // namespace capstan
