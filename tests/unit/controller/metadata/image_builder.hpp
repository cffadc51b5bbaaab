#pragma once

// Builds metadata images for the controller's decision tests: nodes registered and unfenced
// through records, topics with hand-placed partitions. Every change goes through
// metadata_image::apply, so a test image is one the log could have produced.

#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "actors/controller/metadata/metadata_image.hpp"
#include "actors/controller/metadata/metadata_records.hpp"

namespace capstan::controller::test {

inline constexpr const char* test_cluster_id = "cluster-a";

std::vector<node_id> ids(std::initializer_list<int32_t> values);

topic_id make_topic_id(uint8_t seed);

incarnation_id make_incarnation(uint8_t seed);

register_broker_record registration(int32_t node, broker_epoch epoch, std::string rack = {},
                                    uint8_t incarnation = 1);

class image_builder {
public:
  image_builder() : image_(test_cluster_id) {}

  // Registers `node` (epoch = the next one) and unfences it unless `fenced`.
  image_builder& node(int32_t node, std::string rack = {}, bool fenced = false);
  image_builder& nodes(std::initializer_list<int32_t> nodes);
  // A topic whose partition i has replicas[i], ISR = replicas, leader = the first, epochs 0.
  image_builder& topic(const std::string& name, uint8_t id_seed,
                       const std::vector<std::vector<node_id>>& replicas,
                       std::map<std::string, std::string> configs = {});
  // Applies `r`; REQUIREs success.
  image_builder& apply(const metadata_record& r);

  const metadata_image& image() const { return image_; }

private:
  metadata_image image_;
};

// Applies a decision's records to a copy of `image`; REQUIREs success.
metadata_image applied(const metadata_image& image, const std::vector<metadata_record>& records);

} // namespace capstan::controller::test
