#include "runtime/group/consumer_protocol.hpp"

#include <algorithm>

#include "runtime/group/record_fields.hpp"

namespace capstan {

namespace {

constexpr int16_t subscription_version = 2;
constexpr int16_t newest_subscription_read = 3;
constexpr int16_t assignment_version = 0;

void put_partitions(record_fields::writer& w, const topic_partitions& tps) {
  w.put<int32_t>(static_cast<int32_t>(tps.size()));
  for (const auto& [topic, partitions] : tps) {
    w.put_string(topic);
    w.put<int32_t>(static_cast<int32_t>(partitions.size()));
    for (auto p : partitions) w.put<int32_t>(p);
  }
}

// A topic takes at least its string's length and its array's count.
constexpr size_t min_topic_bytes = 2 + 4;

topic_partitions get_partitions(record_fields::reader& r) {
  topic_partitions out;
  const auto topics = r.get_count(min_topic_bytes);
  for (size_t i = 0; i < topics && r.ok(); ++i) {
    auto topic = r.get_string();
    auto& partitions = out[topic];
    const auto n = r.get_count(sizeof(int32_t));
    for (size_t j = 0; j < n && r.ok(); ++j) partitions.push_back(r.get<int32_t>());
    std::sort(partitions.begin(), partitions.end());
    partitions.erase(std::unique(partitions.begin(), partitions.end()), partitions.end());
  }
  return out;
}

error not_consumer_protocol(std::string_view what) {
  return make_error(errc::inconsistent_group_protocol,
                    "the " + std::string(what) + " is not in Kafka's consumer protocol");
}

} // namespace

bytes encode_subscription(const consumer_subscription& s) {
  record_fields::writer w;
  w.put<int16_t>(subscription_version);
  w.put<int32_t>(static_cast<int32_t>(s.topics.size()));
  for (const auto& t : s.topics) w.put_string(t);
  w.put_bytes(s.user_data);
  put_partitions(w, s.owned);
  w.put<int32_t>(s.generation);
  return w.take();
}

result<consumer_subscription> decode_subscription(bytes_view data) {
  record_fields::reader r(data);
  const auto version = std::min(r.get<int16_t>(), newest_subscription_read);
  if (!r.ok() || version < 0) return not_consumer_protocol("subscription");
  consumer_subscription s;
  const auto topics = r.get_count(2);
  for (size_t i = 0; i < topics && r.ok(); ++i) s.topics.push_back(r.get_string());
  s.user_data = r.get_nullable_bytes();
  if (version >= 1) s.owned = get_partitions(r);
  if (version >= 2) s.generation = r.get<int32_t>();
  if (version >= 3) r.get_nullable_string(); // the rack, which no assignor here uses
  if (!r.ok()) return not_consumer_protocol("subscription");
  return s;
}

bool same_subscription(bytes_view a, bytes_view b) {
  auto x = decode_subscription(a), y = decode_subscription(b);
  if (!x || !y) return std::equal(a.begin(), a.end(), b.begin(), b.end());
  return x->topics == y->topics && x->user_data == y->user_data;
}

bytes encode_assignment(const consumer_assignment& a) {
  record_fields::writer w;
  w.put<int16_t>(assignment_version);
  put_partitions(w, a.partitions);
  w.put_bytes(a.user_data);
  return w.take();
}

result<consumer_assignment> decode_assignment(bytes_view data) {
  if (data.empty()) return consumer_assignment{};
  record_fields::reader r(data);
  const auto version = r.get<int16_t>();
  if (!r.ok() || version < 0) return not_consumer_protocol("assignment");
  consumer_assignment a;
  a.partitions = get_partitions(r);
  a.user_data = r.get_nullable_bytes();
  if (!r.ok()) return not_consumer_protocol("assignment");
  return a;
}

} // namespace capstan
