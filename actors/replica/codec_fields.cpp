#include "actors/replica/codec_fields.hpp"

#include <algorithm>

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

capnp::Data::Reader incarnation_data(const incarnation_bytes& id) {
  if (std::all_of(id.begin(), id.end(), [](uint8_t b) { return b == 0; })) return {};
  return capnp::Data::Reader(id.data(), id.size());
}

result<incarnation_bytes> read_incarnation(capnp::Data::Reader d, const char* what) {
  incarnation_bytes out{};
  if (d.size() == 0) return out;
  if (d.size() != out.size())
    return invalid(std::string(what) + " has 16 bytes, not " + std::to_string(d.size()));
  std::copy(d.begin(), d.end(), out.begin());
  return out;
}

} // namespace capstan::codec
