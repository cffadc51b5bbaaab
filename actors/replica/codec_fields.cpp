#include "actors/replica/codec_fields.hpp"

#include "runtime/cluster/metadata.hpp"

namespace capstan::codec {

error invalid(std::string what) { return make_error(errc::invalid_request, std::move(what)); }

void set_tp(schema::TopicPartition::Builder b, const topic_partition& tp) {
  b.setTopic(tp.first);
  b.setPartition(tp.second);
}

result<topic_partition> read_tp(schema::TopicPartition::Reader r) {
  std::string topic = r.getTopic();
  if (auto s = validate_topic_name(topic); !s) return s.err();
  if (r.getPartition() < 0) return invalid("partition " + std::to_string(r.getPartition()) + " of " + topic);
  return topic_partition{std::move(topic), r.getPartition()};
}

} // namespace capstan::codec
