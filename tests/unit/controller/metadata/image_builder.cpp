#include "tests/unit/controller/metadata/image_builder.hpp"

#include <catch2/catch.hpp>

namespace capstan::controller::test {

std::vector<node_id> ids(std::initializer_list<int32_t> values) {
  std::vector<node_id> out;
  for (auto v : values) out.push_back(node_id{v});
  return out;
}

topic_id make_topic_id(uint8_t seed) {
  topic_id id{};
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<uint8_t>(seed + i);
  return id;
}

incarnation_id make_incarnation(uint8_t seed) {
  incarnation_id id{};
  id.fill(seed);
  return id;
}

register_broker_record registration(int32_t node, broker_epoch epoch, std::string rack,
                                    uint8_t incarnation) {
  return register_broker_record{node_id{node},
                                make_incarnation(incarnation),
                                test_cluster_id,
                                "client" + std::to_string(node) + ".example",
                                static_cast<uint16_t>(9000 + node),
                                "cluster" + std::to_string(node) + ".example",
                                static_cast<uint16_t>(9500 + node),
                                std::move(rack),
                                epoch,
                                false,
                                "kafka" + std::to_string(node) + ".example",
                                static_cast<uint16_t>(9800 + node)};
}

image_builder& image_builder::apply(const metadata_record& r) {
  auto s = image_.apply(r);
  INFO(s.err().to_string());
  REQUIRE(s.ok());
  return *this;
}

image_builder& image_builder::node(int32_t node, std::string rack, bool fenced) {
  const auto epoch = next(image_.max_broker_epoch());
  apply(registration(node, epoch, std::move(rack)));
  if (!fenced) apply(unfence_broker_record{node_id{node}, epoch});
  return *this;
}

image_builder& image_builder::nodes(std::initializer_list<int32_t> nodes) {
  for (auto n : nodes) node(n);
  return *this;
}

image_builder& image_builder::topic(const std::string& name, uint8_t id_seed,
                                    const std::vector<std::vector<node_id>>& replicas,
                                    std::map<std::string, std::string> configs) {
  const auto id = make_topic_id(id_seed);
  apply(topic_record{name, id, false, std::move(configs)});
  for (size_t i = 0; i < replicas.size(); ++i)
    apply(partition_record{id, partition_id{static_cast<int32_t>(i)}, replicas[i], replicas[i],
                           replicas[i].front(), leader_epoch{0}, partition_epoch{0}, {}, {}});
  return *this;
}

metadata_image applied(const metadata_image& image, const std::vector<metadata_record>& records) {
  metadata_image out = image;
  auto s = out.apply(records);
  INFO(s.err().to_string());
  REQUIRE(s.ok());
  return out;
}

} // namespace capstan::controller::test
