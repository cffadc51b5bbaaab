#include "runtime/client/consumer_properties.hpp"

#include <charconv>
#include <functional>
#include <map>

#include "runtime/client/assignors.hpp"

namespace capstan::client {

namespace {

using setter = std::function<status(client_config&, const std::string&)>;

error bad_value(const std::string& key, const std::string& value, const std::string& wanted) {
  return make_error(errc::invalid_config, key + "=" + value + ": expected " + wanted);
}

template <class Int>
setter int_setter(Int client_config::*field, Int min) {
  return [field, min](client_config& c, const std::string& v) -> status {
    Int n = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc{} || end != v.data() + v.size() || n < min) return make_error(errc::invalid_config, "");
    c.*field = n;
    return {};
  };
}

setter bool_setter(bool client_config::*field) {
  return [field](client_config& c, const std::string& v) -> status {
    if (v != "true" && v != "false") return make_error(errc::invalid_config, "");
    c.*field = v == "true";
    return {};
  };
}

const std::map<std::string, std::pair<setter, std::string>>& setters() {
  static const std::map<std::string, std::pair<setter, std::string>> all{
      {"auto.commit.interval.ms", {int_setter(&client_config::auto_commit_interval_ms, 1), "an integer >= 1"}},
      {"client.id", {[](client_config& c, const std::string& v) -> status {
                       c.client_id = v;
                       return {};
                     },
                     "any text"}},
      {"enable.auto.commit", {bool_setter(&client_config::enable_auto_commit), "true or false"}},
      {"fetch.max.wait.ms", {int_setter(&client_config::fetch_max_wait_ms, 0), "an integer >= 0"}},
      {"fetch.min.bytes", {int_setter(&client_config::fetch_min_bytes, 1), "an integer >= 1"}},
      {"group.instance.id", {[](client_config& c, const std::string& v) -> status {
                               c.group_instance_id = v;
                               return {};
                             },
                             "any text (empty: a dynamic member)"}},
      {"heartbeat.interval.ms", {int_setter(&client_config::heartbeat_interval_ms, 1), "an integer >= 1"}},
      {"max.partition.fetch.bytes", {int_setter(&client_config::max_partition_fetch_bytes, 1), "an integer >= 1"}},
      {"max.poll.interval.ms", {int_setter(&client_config::max_poll_interval_ms, 1), "an integer >= 1"}},
      {"metadata.max.age.ms", {int_setter<int64_t>(&client_config::metadata_max_age_ms, 0), "an integer >= 0"}},
      {"partition.assignment.strategy",
       {[](client_config& c, const std::string& v) -> status {
          std::vector<std::string> names;
          std::string::size_type start = 0;
          while (start <= v.size()) {
            auto comma = v.find(',', start);
            if (comma == std::string::npos) comma = v.size();
            const auto name = v.substr(start, comma - start);
            if (!find_assignor(name)) return make_error(errc::invalid_config, "");
            names.push_back(name);
            start = comma + 1;
          }
          c.partition_assignment_strategy = std::move(names);
          return {};
        },
        "a comma-separated list of " + assignor_names()}},
      {"session.timeout.ms", {int_setter(&client_config::session_timeout_ms, 1), "an integer >= 1"}},
  };
  return all;
}

} // namespace

status set_consumer_property(client_config& config, const std::string& key, const std::string& value) {
  const auto& all = setters();
  auto it = all.find(key);
  if (it == all.end()) {
    std::string known;
    for (const auto& [name, s] : all) known += (known.empty() ? "" : ", ") + name;
    return make_error(errc::invalid_config, "no consumer property '" + key + "'; there are " + known);
  }
  if (!it->second.first(config, value)) return bad_value(key, value, it->second.second);
  return {};
}

} // namespace capstan::client
