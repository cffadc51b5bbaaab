#include "runtime/cluster/metadata_store.hpp"

#include <cerrno>
#include <fstream>
#include <limits>
#include <sstream>

#include <toml++/toml.h>

#include "runtime/cluster/topic_validation.hpp"
#include "runtime/storage/file_handle.hpp"
#include "runtime/storage/partition_metadata.hpp"

namespace capstan {

namespace {

constexpr int64_t store_version = 1;

error store_error(const std::filesystem::path& file, const std::string& what) {
  return make_error(errc::kafka_storage_error, file.string() + ": " + what);
}

toml::array to_toml(const std::vector<int32_t>& ids) {
  toml::array out;
  for (int32_t id : ids) out.push_back(static_cast<int64_t>(id));
  return out;
}

toml::table to_toml(const topic_metadata& topic) {
  toml::table configs;
  for (const auto& [k, v] : topic.configs) configs.insert_or_assign(k, v);
  toml::array partitions;
  for (const auto& p : topic.partitions) {
    partitions.push_back(toml::table{
      {"partition", static_cast<int64_t>(p.partition)},
      {"replicas", to_toml(p.replicas)},
      {"leader", static_cast<int64_t>(p.leader)},
      {"leader_epoch", static_cast<int64_t>(p.leader_epoch)},
      {"isr", to_toml(p.isr)},
    });
  }
  return toml::table{
    {"id", to_base64_uuid(topic.id)},
    {"internal", topic.internal},
    {"configs", std::move(configs)},
    {"partitions", std::move(partitions)},
  };
}

// Reads the fields of one topic; `where` names it in errors.
class topic_reader {
public:
  explicit topic_reader(std::string where) : where_(std::move(where)) {}

  result<topic_metadata> read(const std::string& name, const toml::table& t) {
    topic_metadata topic;
    topic.name = name;
    if (auto s = validate_topic_name(name); !s) return bad(s.err().message);
    auto id = t["id"].value<std::string>();
    if (!id) return bad("missing id");
    auto parsed_id = parse_topic_id(*id);
    if (!parsed_id) return bad(parsed_id.err().message);
    topic.id = *parsed_id;
    topic.internal = t["internal"].value_or(false);
    if (const auto* configs = t["configs"].as_table()) {
      for (const auto& [k, v] : *configs) {
        auto text = v.value<std::string>();
        if (!text) return bad("config " + std::string(k.str()) + " is not a string");
        topic.configs.emplace(std::string(k.str()), *text);
      }
    }
    const auto* partitions = t["partitions"].as_array();
    if (partitions == nullptr || partitions->empty()) return bad("no partitions");
    for (const auto& node : *partitions) {
      const auto* p = node.as_table();
      if (p == nullptr) return bad("a partition is not a table");
      partition_assignment a;
      auto partition = int_field(*p, "partition");
      auto leader = int_field(*p, "leader");
      auto epoch = int_field(*p, "leader_epoch");
      auto replicas = ids_field(*p, "replicas");
      auto isr = ids_field(*p, "isr");
      if (!partition || !leader || !epoch || !replicas || !isr)
        return bad("partition " + std::to_string(topic.partitions.size()) + " is malformed");
      a.partition = *partition;
      a.leader = *leader;
      a.leader_epoch = *epoch;
      a.replicas = std::move(*replicas);
      a.isr = std::move(*isr);
      if (a.partition != static_cast<int32_t>(topic.partitions.size()))
        return bad("partitions are not numbered 0, 1, ...");
      topic.partitions.push_back(std::move(a));
    }
    return topic;
  }

private:
  static std::optional<int32_t> int_field(const toml::table& t, std::string_view key) {
    auto v = t[key].value<int64_t>();
    if (!v || *v < std::numeric_limits<int32_t>::min() || *v > std::numeric_limits<int32_t>::max())
      return std::nullopt;
    return static_cast<int32_t>(*v);
  }
  static std::optional<std::vector<int32_t>> ids_field(const toml::table& t, std::string_view key) {
    const auto* arr = t[key].as_array();
    if (arr == nullptr) return std::nullopt;
    std::vector<int32_t> out;
    for (const auto& n : *arr) {
      auto v = n.value<int64_t>();
      if (!v || *v < 0 || *v > std::numeric_limits<int32_t>::max()) return std::nullopt;
      out.push_back(static_cast<int32_t>(*v));
    }
    return out;
  }
  error bad(const std::string& why) const { return make_error(errc::kafka_storage_error, where_ + ": " + why); }

  std::string where_;
};

} // namespace

std::string to_hex(const topic_id& id) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(id.size() * 2);
  for (uint8_t b : id) {
    out.push_back(digits[b >> 4]);
    out.push_back(digits[b & 0xf]);
  }
  return out;
}

result<topic_id> parse_topic_id(const std::string& text) {
  if (text.size() != 32) {
    auto id = parse_base64_uuid(text);
    if (!id)
      return make_error(errc::kafka_storage_error,
                        "topic id '" + text +
                            "' is neither 22 characters of URL-safe base64 nor 32 hex digits");
    return *id;
  }
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  topic_id id{};
  for (size_t i = 0; i < id.size(); ++i) {
    int hi = nibble(text[2 * i]);
    int lo = nibble(text[2 * i + 1]);
    if (hi < 0 || lo < 0)
      return make_error(errc::kafka_storage_error, "topic id '" + text + "' is not 32 hex digits");
    id[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return id;
}

result<cluster_metadata> read_metadata_store(const std::filesystem::path& file) {
  cluster_metadata out;
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) {
    if (ec) return store_error(file, ec.message());
    return out;
  }
  toml::table root;
  try {
    root = toml::parse_file(file.string());
  } catch (const toml::parse_error& e) {
    std::ostringstream where;
    where << e.source().begin;
    return store_error(file, std::string(e.description()) + " at " + where.str());
  }
  if (root["version"].value<int64_t>() != store_version)
    return store_error(file, "unsupported version (expected " + std::to_string(store_version) + ")");
  auto cluster_id = root["cluster_id"].value<std::string>();
  if (!cluster_id) return store_error(file, "missing cluster_id");
  out.cluster_id = *cluster_id;
  // Missing in stores written before producer ids: none handed out yet.
  if (const auto* next = root.get("next_producer_id")) {
    auto v = next->value<int64_t>();
    if (!v || *v < 0) return store_error(file, "next_producer_id is not an integer >= 0");
    out.next_producer_id = *v;
  }
  if (const auto* topics = root["topics"].as_table()) {
    for (const auto& [name, node] : *topics) {
      const auto* t = node.as_table();
      std::string topic_name(name.str());
      if (t == nullptr) return store_error(file, "topic " + topic_name + " is not a table");
      auto topic = topic_reader(file.string() + ": topic " + topic_name).read(topic_name, *t);
      if (!topic) return topic.err();
      out.topics.emplace(topic_name, std::move(*topic));
    }
  }
  return out;
}

status write_metadata_store(const std::filesystem::path& file, const cluster_metadata& metadata) {
  toml::table topics;
  for (const auto& [name, topic] : metadata.topics) topics.insert_or_assign(name, to_toml(topic));
  toml::table root{
      {"version", store_version},
      {"cluster_id", metadata.cluster_id},
      {"next_producer_id", metadata.next_producer_id},
      {"topics", std::move(topics)},
  };
  std::ostringstream text;
  text << "# capstan cluster metadata: written by the controller, do not edit while the node runs\n"
       << root << '\n';
  return write_file_atomically(file, text.str());
}

} // namespace capstan
