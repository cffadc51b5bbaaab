#include "runtime/cli/groups_command.hpp"

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>

#include "runtime/cli/client_options.hpp"
#include "runtime/cli/exit_codes.hpp"
#include "runtime/cli/option_checks.hpp"
#include "runtime/datetime.hpp"
#include "runtime/group/consumer_protocol.hpp"

namespace capstan::cli {

namespace {

struct describe_flags {
  client_options client;
  std::string group;
  bool state = false;
  bool members = false;
};

// A partition's log end (its high watermark); -1 when it cannot be read now.
int64_t log_end(client::cluster_client& client, const std::string& topic, int32_t partition) {
  auto end = client.list_offsets(topic, partition, -1);
  return end ? *end : -1;
}

std::string or_dash(int64_t v) {
  return v >= 0 ? std::to_string(v) : "-";
}

std::string or_dash(const std::string& v) { return v.empty() ? "-" : v; }

// kafka-consumer-groups --describe --state: the group's state, protocol, generation and size.
void print_state(const std::string& group, const group_summary& g) {
  std::cout << "GROUP\tSTATE\tPROTOCOL\tGENERATION\tLEADER\tMEMBERS\n"
            << group << "\t" << g.state << "\t" << or_dash(g.protocol_name) << "\t"
            << g.generation << "\t" << or_dash(g.leader) << "\t" << g.members.size() << "\n";
}

// A member's assignment as kafka-consumer-groups --members --verbose shows it, "jobs(0,1)",
// with its partition count; both "-" when it is not in the consumer protocol.
std::pair<std::string, std::string> assignment_text(const std::string& protocol_type, const bytes& assignment) {
  if (protocol_type != consumer_protocol_type) return {"-", "-"};
  auto a = decode_assignment(assignment);
  if (!a) return {"-", "-"};
  size_t count = 0;
  std::string text;
  for (const auto& [topic, partitions] : a->partitions) {
    if (partitions.empty()) continue;
    text += (text.empty() ? "" : ",") + topic + "(";
    for (size_t i = 0; i < partitions.size(); ++i) text += (i ? "," : "") + std::to_string(partitions[i]);
    text += ")";
    count += partitions.size();
  }
  return {std::to_string(count), or_dash(text)};
}

// kafka-consumer-groups --describe --members --verbose: each member and what it was assigned.
void print_members(const std::string& group, const group_summary& g) {
  std::cout << "GROUP\tMEMBER-ID\tGROUP-INSTANCE-ID\tCLIENT-ID\t#PARTITIONS\tASSIGNMENT\n";
  for (const auto& m : g.members) {
    const auto [count, text] = assignment_text(g.protocol_type, m.assignment);
    std::cout << group << "\t" << m.member_id << "\t" << or_dash(m.group_instance_id) << "\t"
              << m.client_id << "\t" << count << "\t" << text << "\n";
  }
}

// Who consumes each partition now, by the members' assignments: (member id, client id).
std::map<std::pair<std::string, int32_t>, std::pair<std::string, std::string>> owners(const group_summary& g) {
  std::map<std::pair<std::string, int32_t>, std::pair<std::string, std::string>> out;
  if (g.protocol_type != consumer_protocol_type) return out;
  for (const auto& m : g.members)
    if (auto a = decode_assignment(m.assignment))
      for (const auto& [topic, partitions] : a->partitions)
        for (auto p : partitions) out[{topic, p}] = {m.member_id, m.client_id};
  return out;
}

void run_describe(const describe_flags& f) {
  auto client = connect_or_fail(make_client_config(f.client));
  auto g = client->describe_group(f.group);
  if (!g) fail(g.err());
  if (f.state || f.members) {
    if (f.state) print_state(f.group, *g);
    if (f.members) print_members(f.group, *g);
    std::cout.flush();
    return;
  }
  auto committed = client->fetch_offsets(f.group, {});
  if (!committed) fail(committed.err());
  // As Kafka: every partition with a commit or a consumer, the consumer's columns "-" for none.
  std::map<std::pair<std::string, int32_t>, int64_t> rows;
  for (const auto& c : *committed) rows[{c.topic, c.partition}] = c.offset;
  const auto consumers = owners(*g);
  for (const auto& [tp, who] : consumers) rows.emplace(tp, -1);
  if (rows.empty()) {
    std::cout << "Consumer group '" << f.group << "' has no committed offsets and no active members.\n";
    return;
  }
  std::cout << "GROUP\tTOPIC\tPARTITION\tCURRENT-OFFSET\tLOG-END-OFFSET\tLAG\tCONSUMER-ID\tCLIENT-ID\n";
  for (const auto& [tp, current] : rows) {
    const int64_t end = log_end(*client, tp.first, tp.second);
    const int64_t lag = end >= 0 && current >= 0 ? std::max<int64_t>(0, end - current) : -1;
    const auto who = consumers.find(tp);
    std::cout << f.group << "\t" << tp.first << "\t" << tp.second << "\t" << or_dash(current) << "\t"
              << or_dash(end) << "\t" << or_dash(lag) << "\t"
              << (who == consumers.end() ? "-" : who->second.first) << "\t"
              << (who == consumers.end() ? "-" : who->second.second) << "\n";
  }
  std::cout.flush();
}

struct reset_flags {
  client_options client;
  std::string group;
  std::string topic;
  bool to_earliest = false;
  bool to_latest = false;
  std::optional<int64_t> to_offset;
  std::optional<int64_t> shift_by;
  std::optional<std::string> to_datetime;
  int64_t to_timestamp = 0; // --to-datetime, parsed
  bool execute = false;
  bool dry_run = false;
};

// The offset a partition's commit (`current`, -1: none) moves to, within its log (as Kafka
// clamps it, with a note on stderr); nullopt, with the reason on stderr, when there is none.
std::optional<int64_t> target_of(client::cluster_client& client, const reset_flags& f,
                                 int32_t partition, int64_t current) {
  const auto name = f.topic + "-" + std::to_string(partition);
  auto start = client.list_offsets(f.topic, partition, -2);
  auto end = client.list_offsets(f.topic, partition, -1);
  if (!start || !end) {
    std::cerr << name << ": " << (start ? end.err() : start.err()).to_string() << "\n";
    return std::nullopt;
  }
  int64_t wanted = 0;
  if (f.to_earliest) {
    wanted = *start;
  } else if (f.to_latest) {
    wanted = *end;
  } else if (f.to_offset) {
    wanted = *f.to_offset;
  } else if (f.to_datetime) {
    // The first offset whose timestamp is at or after it; none such: the log end, as Kafka.
    auto at = client.list_offsets(f.topic, partition, f.to_timestamp);
    if (!at) {
      std::cerr << name << ": " << at.err().to_string() << "\n";
      return std::nullopt;
    }
    wanted = *at >= 0 ? *at : *end;
  } else {
    if (current < 0) {
      std::cerr << name << ": no committed offset to shift\n";
      return std::nullopt;
    }
    wanted = current + *f.shift_by;
  }
  const int64_t clamped = std::clamp(wanted, *start, *end);
  if (clamped != wanted)
    std::cerr << name << ": offset " << wanted << " is outside the log (" << *start << ".." << *end
              << "), using " << clamped << "\n";
  return clamped;
}

void run_reset(const reset_flags& f) {
  auto client = connect_or_fail(make_client_config(f.client));
  auto md = client->metadata({f.topic});
  if (!md) fail(md.err());
  auto topic = md->topics.find(f.topic);
  if (topic == md->topics.end())
    fail(make_error(errc::unknown_topic_or_partition, "topic '" + f.topic + "' does not exist"));
  std::vector<std::pair<std::string, int32_t>> partitions;
  for (const auto& p : topic->second.partitions) partitions.emplace_back(f.topic, p.partition);
  auto committed = client->fetch_offsets(f.group, partitions);
  if (!committed) fail(committed.err());
  // As Kafka: a group with members would commit over the reset, and refuses it anyway.
  auto described = client->describe_group(f.group);
  if (!described) fail(described.err());
  if (described->state != "Empty" && described->state != "Dead")
    fail(make_error(errc::invalid_request, "offsets can only be reset while group '" + f.group +
                                               "' is inactive, but its state is " +
                                               described->state));

  std::vector<client::committed_offset> moves;
  bool missing = false;
  std::cout << "GROUP\tTOPIC\tPARTITION\tNEW-OFFSET\n";
  for (const auto& c : *committed) {
    auto target = target_of(*client, f, c.partition, c.offset);
    if (!target) {
      missing = true;
      continue;
    }
    std::cout << f.group << "\t" << f.topic << "\t" << c.partition << "\t" << *target << "\n";
    moves.push_back(client::committed_offset{f.topic, c.partition, *target, {}, errc::none, -1});
  }
  std::cout.flush();
  if (!f.execute) {
    std::cerr << "Dry run: nothing was committed; --execute commits these offsets.\n";
  } else if (!moves.empty()) {
    auto done = client->commit_offsets(f.group, moves, group_member_ref{});
    if (!done) fail(done.err());
    for (const auto& r : *done)
      if (r.error != errc::none)
        fail(make_error(r.error, r.topic + "-" + std::to_string(r.partition) + ": not committed"));
  }
  if (missing) throw CLI::RuntimeError(exit_failed);
}

// kafka-consumer-groups --delete: only a group without members (GROUP_NOT_EMPTY otherwise).
void run_delete(const client_options& options, const std::string& group) {
  auto client = connect_or_fail(make_client_config(options));
  if (auto s = client->delete_group(group); !s) fail(s.err());
  std::cout << "Deletion of requested consumer groups ('" << group << "') was successful.\n";
  std::cout.flush();
}

void run_list(const client_options& options) {
  auto client = connect_or_fail(make_client_config(options));
  auto groups = client->list_groups();
  if (!groups) fail(groups.err());
  for (const auto& g : *groups) std::cout << g << "\n";
  std::cout.flush();
}

} // namespace

void add_groups_command(CLI::App& app) {
  auto* groups =
      app.add_subcommand("groups", "Inspect consumer groups, move their committed offsets and "
                                   "delete them (as kafka-consumer-groups); docs/groups.md");
  groups->require_subcommand(1);

  auto list_options = std::make_shared<client_options>();
  auto* list_cmd = groups->add_subcommand(
      "list", "The groups with committed offsets, one per line (every node's, merged)");
  add_client_options(list_cmd, *list_options);
  list_cmd->callback([list_options] { run_list(*list_options); });

  struct delete_flags {
    client_options client;
    std::string group;
  };
  auto del = std::make_shared<delete_flags>();
  auto* delete_cmd = groups->add_subcommand(
      "delete", "Delete a group without members: its committed offsets and its record go");
  delete_cmd->add_option("group", del->group, "The group id")->required();
  add_client_options(delete_cmd, del->client);
  delete_cmd->callback([del] { run_delete(del->client, del->group); });

  auto describe = std::make_shared<describe_flags>();
  auto* describe_cmd = groups->add_subcommand(
      "describe", "A group's committed offset per partition, with the partition's log end, the "
                  "lag between them and the member consuming it");
  describe_cmd->add_option("group", describe->group, "The group id")->required();
  describe_cmd->add_flag("--state", describe->state,
                         "Instead: the group's state, protocol, generation, leader and size");
  describe_cmd->add_flag("--members", describe->members,
                         "Instead: each member's id, instance id, client id and assigned partitions");
  add_client_options(describe_cmd, describe->client);
  describe_cmd->callback([describe] { run_describe(*describe); });

  auto reset = std::make_shared<reset_flags>();
  auto* reset_cmd = groups->add_subcommand(
      "reset-offsets", "Move a group's committed offsets on every partition of a topic; prints the "
                       "new offsets, and commits them only with --execute. Only while the group "
                       "has no members (its state is Empty), as Kafka");
  reset_cmd->add_option("group", reset->group, "The group id")->required();
  reset_cmd->add_option("--topic", reset->topic, "The topic whose partitions move")->required();
  auto* earliest =
      reset_cmd->add_flag("--to-earliest", reset->to_earliest, "To each partition's log start");
  auto* latest =
      reset_cmd->add_flag("--to-latest", reset->to_latest, "To each partition's log end");
  auto* to_offset = reset_cmd
                        ->add_option("--to-offset", reset->to_offset,
                                     "To this offset (clamped to each partition's log)")
                        ->check(integer_in(0));
  auto* shift = reset_cmd->add_option("--shift-by", reset->shift_by,
                                      "By this many (negative: back) from the committed offset");
  auto* to_datetime = reset_cmd->add_option(
      "--to-datetime", reset->to_datetime,
      "To the first offset of each partition whose timestamp is at or after this, "
      "YYYY-MM-DDTHH:mm:SS[.sss][Z|+HH:mm] (no zone: local time); the log end if none");
  auto modes = std::vector<CLI::Option*>{earliest, latest, to_offset, shift, to_datetime};
  for (auto* a : modes)
    for (auto* b : modes)
      if (a != b) a->excludes(b);
  auto* execute = reset_cmd->add_flag("--execute", reset->execute, "Commit the new offsets");
  auto* dry_run =
      reset_cmd->add_flag("--dry-run", reset->dry_run, "Only print the new offsets (the default)");
  execute->excludes(dry_run);
  add_client_options(reset_cmd, reset->client);
  reset_cmd->callback([reset] {
    if (!reset->to_earliest && !reset->to_latest && !reset->to_offset && !reset->shift_by &&
        !reset->to_datetime)
      throw CLI::ValidationError(
          "one of --to-earliest, --to-latest, --to-offset, --to-datetime or --shift-by is required");
    if (reset->to_datetime) {
      auto at = parse_datetime(*reset->to_datetime);
      if (!at) throw CLI::ValidationError("--to-datetime", at.err().message);
      reset->to_timestamp = *at;
    }
    run_reset(*reset);
  });
}

} // namespace capstan::cli
