#include "actors/controller/metadata/metadata_records.hpp"

namespace capstan::controller {

namespace {

struct kind_name {
  std::string_view operator()(const register_broker_record&) const { return "RegisterBroker"; }
  std::string_view operator()(const fence_broker_record&) const { return "FenceBroker"; }
  std::string_view operator()(const unfence_broker_record&) const { return "UnfenceBroker"; }
  std::string_view operator()(const topic_record&) const { return "Topic"; }
  std::string_view operator()(const partition_record&) const { return "Partition"; }
  std::string_view operator()(const partition_change_record&) const { return "PartitionChange"; }
  std::string_view operator()(const remove_topic_record&) const { return "RemoveTopic"; }
  std::string_view operator()(const topic_config_record&) const { return "TopicConfig"; }
  std::string_view operator()(const producer_ids_record&) const { return "ProducerIds"; }
  std::string_view operator()(const unregister_broker_record&) const { return "UnregisterBroker"; }
};

} // namespace

std::string_view record_kind(const metadata_record& record) {
  return std::visit(kind_name{}, record);
}

} // namespace capstan::controller
