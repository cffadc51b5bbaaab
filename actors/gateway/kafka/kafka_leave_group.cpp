#include "actors/gateway/kafka/kafka_leave_group.hpp"

#include "actors/gateway/kafka/kafka_error_code.hpp"
#include "actors/gateway/kafka/kafka_response_support.hpp"
#include "runtime/kafka/api_schemas.hpp"
#include "runtime/kafka/message_codec.hpp"

namespace capstan {

namespace {

constexpr kafka::api_version batch_from = 3;

bool coordinator_error(errc e) {
  return e == errc::not_coordinator || e == errc::coordinator_not_available ||
         e == errc::coordinator_load_in_progress;
}

} // namespace

std::vector<group_member_ref> leaving_members(const kafka::request& req) {
  std::vector<group_member_ref> out;
  if (req.header.version < batch_from) {
    group_member_ref m;
    m.member_id = req.body["MemberId"].as_string();
    out.push_back(std::move(m));
    return out;
  }
  for (const auto& e : req.body["Members"].as_array()) {
    group_member_ref m;
    m.member_id = e.as_struct()["MemberId"].as_string();
    m.group_instance_id = string_or_empty(e.as_struct()["GroupInstanceId"]);
    out.push_back(std::move(m));
  }
  return out;
}

kafka::struct_value leave_group_response_body(const std::vector<group_member_ref>& leaving,
                                              const std::vector<answer<bool>>& answers,
                                              kafka::api_version version) {
  using kafka::value;
  auto body = kafka::make_message(kafka::leave_group_api, kafka::message_kind::response);
  body["ThrottleTimeMs"] = value(int64_t{0});
  if (version < batch_from) {
    body["ErrorCode"] = value(int64_t{kafka_error_code(answers.at(0).err.code)});
    return body;
  }
  errc top = errc::none;
  value::array_type members;
  for (size_t i = 0; i < leaving.size(); ++i) {
    const auto code = answers.at(i).err.code;
    if (top == errc::none && coordinator_error(code)) top = code;
    auto e = element_of(body, "Members");
    e["MemberId"] = value(leaving[i].member_id);
    e["GroupInstanceId"] = nullable_string(leaving[i].group_instance_id);
    e["ErrorCode"] = value(int64_t{kafka_error_code(code)});
    members.emplace_back(std::move(e));
  }
  body["ErrorCode"] = value(int64_t{kafka_error_code(top)});
  body["Members"] = value(std::move(members));
  return body;
}

kj::Promise<bytes> serve_kafka_leave_group(const client_session& s, kafka::request req) {
  auto leaving = leaving_members(req);
  const auto group = req.body["GroupId"].as_string();
  auto calls = kj::heapArrayBuilder<kj::Promise<answer<bool>>>(leaving.size());
  for (const auto& m : leaving) calls.add(handle_leave_group(s, group, m));
  return kj::joinPromises(calls.finish())
      .then([req = std::move(req), leaving = std::move(leaving)](kj::Array<answer<bool>> done) {
        std::vector<answer<bool>> answers;
        for (auto& a : done) answers.push_back(kj::mv(a));
        return response_frame(kafka::leave_group_api, req,
                              leave_group_response_body(leaving, answers, req.header.version));
      });
}

} // namespace capstan
