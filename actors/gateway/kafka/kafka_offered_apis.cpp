#include "actors/gateway/kafka/kafka_offered_apis.hpp"

#include <algorithm>
#include <array>

#include "actors/gateway/kafka/kafka_error_code.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/message_codec.hpp"

namespace capstan {

namespace {

constexpr std::array<offered_api, 21> offered{{
    {kafka::api_key::produce, 3, 8},
    {kafka::api_key::fetch, 4, 11},
    {kafka::api_key::list_offsets, 1, 5},
    {kafka::api_key::metadata, 0, 9},
    {kafka::api_key::offset_commit, 2, 8},
    {kafka::api_key::offset_fetch, 1, 7},
    {kafka::api_key::find_coordinator, 0, 3},
    {kafka::api_key::join_group, 0, 7},
    {kafka::api_key::heartbeat, 0, 4},
    {kafka::api_key::leave_group, 0, 4},
    {kafka::api_key::sync_group, 0, 5},
    {kafka::api_key::describe_groups, 0, 5},
    {kafka::api_key::list_groups, 0, 4},
    {kafka::api_key::api_versions, 0, 3},
    {kafka::api_key::init_producer_id, 0, 4},
    {kafka::api_key::delete_groups, 0, 2},
    {kafka::api_key::create_topics, 2, 7},
    {kafka::api_key::delete_topics, 1, 6},
    {kafka::api_key::create_partitions, 0, 3},
    {kafka::api_key::describe_configs, 1, 4},
    {kafka::api_key::offset_for_leader_epoch, 2, 4},
}};

} // namespace

std::span<const offered_api> offered_apis() {
  return offered;
}

std::optional<offered_api> find_offered_api(int16_t key) {
  for (const auto& api : offered)
    if (api.key == key) return api;
  return std::nullopt;
}

kafka::struct_value api_versions_response(errc error) {
  using kafka::value;
  auto body = kafka::make_message(kafka::api_versions_api, kafka::message_kind::response);
  body["ErrorCode"] = value(int64_t{kafka_error_code(error)});
  const auto& entry_fields = kafka::api_versions_api.response[1].fields;
  value::array_type keys;
  for (const auto& api : offered) {
    kafka::struct_value e(entry_fields);
    e["ApiKey"] = value(int64_t{api.key});
    e["MinVersion"] = value(int64_t{api.min_version});
    e["MaxVersion"] = value(int64_t{api.max_version});
    keys.emplace_back(std::move(e));
  }
  body["ApiKeys"] = value(std::move(keys));
  return body;
}

} // namespace capstan
