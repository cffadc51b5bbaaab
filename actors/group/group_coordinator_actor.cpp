// The group coordinator actor: committed consumer-group offsets. A group's commits live in one
// partition of __consumer_offsets (offsets_partition_for), and this node coordinates the group
// only while its metadata cache names it that partition's leader (coordinator_lookup.hpp);
// otherwise it answers NOT_COORDINATOR. Each commit request is one batch of records keyed by
// (group, topic, partition), appended with acks=-1, and the in-memory map is updated only after
// the append succeeded, so a fetch never returns an offset that a failover could lose. A
// partition's map is built on the first request under a leadership, by replaying the partition
// from its log start to the log end the leadership began with (catch_up); a new leader epoch
// builds it afresh. Replay uses `await`, so no other request is served meanwhile.
//
// Each group's membership is a group_membership of the partition it lives in: dropped with the
// partition (its parked joins and syncs answered NOT_COORDINATOR), advanced by the same tick
// that follows leaderships, recorded in the partition at each settled generation (settle) and
// resumed from those records when a node loads the partition.

#include "actors/group/group_coordinator.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <random>
#include <set>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/group/coordinator_lookup.hpp"
#include "actors/group/group_metadata_record.hpp"
#include "actors/group/offset_commit_record.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/batch/record_batch_builder.hpp"
#include "runtime/batch/record_batch_view.hpp"

namespace capstan {

namespace {

struct committed_offset {
  int64_t offset = -1;
  int32_t leader_epoch = -1;
  std::string metadata;
  // When it was committed (wall clock): a commit of a group without members expires
  // offsets.retention.minutes after it.
  timestamp_ms committed_at = no_timestamp;
};

// One group's commits by (topic, partition).
using group_commits = std::map<std::pair<std::string, int32_t>, committed_offset>;

struct offsets_partition {
  int32_t partition = 0;
  partition_replica_actor replica;
  // The leadership the map is built under, the offset it holds every record below, and the log
  // end when the leadership began: every record earlier leaders wrote is below it.
  leader_epoch epoch{-1};
  offset loaded_to{0};
  offset load_end{0};
  bool loaded = false;
  std::map<std::string, group_commits> groups;
  // The last GroupMetadata record of each group, replayed while loading: the memberships resume
  // from them once the partition is loaded.
  std::map<std::string, group_metadata_value> group_records;
  std::map<std::string, group_membership> memberships;
  // The generation of each group's last record written (or replayed).
  std::map<std::string, int32_t> recorded_generation;
  // Groups whose tombstones are being written: their commits and joins wait (retriable).
  std::set<std::string> deleting;
  // When each group whose record says it is Empty became so (wall clock): its commits expire
  // offsets.retention.minutes after it, all at once (KIP-211).
  std::map<std::string, timestamp_ms> empty_since;
};

using partition_ptr = std::shared_ptr<offsets_partition>;

struct group_coordinator_state {
  static inline const char* name = "capstan.group_coordinator";

  group_coordinator_options opts;
  // Partitions of __consumer_offsets this node leads and has loaded.
  std::map<int32_t, partition_ptr> partitions;
  // Joins and syncs the memberships hold until their rebalance answers them, by reply id.
  group_membership::reply_id next_reply = 1;
  std::map<group_membership::reply_id, caf::typed_response_promise<join_group_response>> joins;
  std::map<group_membership::reply_id, caf::typed_response_promise<sync_group_response>> syncs;
  std::mt19937_64 random{std::random_device{}()};
  // When expire_offsets runs next (monotonic ms); the first tick after start-up.
  int64_t next_expiry_check = 0;
  // Metrics (docs/metrics.md, "Groups"); null without a registry.
  metric_counter* commits_metric = nullptr;
  metric_counter* rebalances_metric = nullptr;
  metric_counter* expirations_metric = nullptr;
  metric_counter* deletions_metric = nullptr;
  int64_t next_gauges = 0;
};

void bump(metric_counter* c, uint64_t n = 1) {
  if (c) c->inc(n);
}

using self_ptr = group_coordinator_actor::stateful_pointer<group_coordinator_state>;
using loaded_fn = std::function<void(partition_ptr, caf::error)>;

constexpr int32_t replay_fetch_bytes = 1 << 20;

// Keeps a GroupMetadata record (the group's latest; a null value: the group is gone).
void replay_group_record(offsets_partition& part, int32_t partition, const record_view& r) {
  auto group = decode_group_metadata_key(*r.key);
  auto skip = [&](const error& e) {
    spdlog::warn("{}-{}: skipping a group record: {}", consumer_offsets_topic, partition, e.to_string());
  };
  if (!group) return skip(group.err());
  if (!*group) return;
  if (!r.value) {
    part.group_records.erase(**group);
    part.recorded_generation.erase(**group);
    part.empty_since.erase(**group);
    return;
  }
  auto value = decode_group_metadata_value(*r.value);
  if (!value) return skip(value.err());
  part.recorded_generation[**group] = value->generation;
  if (value->members.empty())
    part.empty_since[**group] = value->state_timestamp;
  else
    part.empty_since.erase(**group);
  part.group_records[**group] = std::move(*value);
}

// Applies one __consumer_offsets record to the map (a later record of a key replaces an earlier
// one; a null value deletes it). Records that do not decode are skipped and logged.
void replay_record(offsets_partition& part, int32_t partition, const record_view& r) {
  if (!r.key) return;
  auto key = decode_offset_commit_key(*r.key);
  if (!key) {
    spdlog::warn("{}-{}: skipping a record: {}", consumer_offsets_topic, partition,
                 key.err().to_string());
    return;
  }
  if (!*key) {
    replay_group_record(part, partition, r);
    return;
  }
  auto& k = **key;
  const std::pair<std::string, int32_t> tp{k.topic, k.partition};
  if (!r.value) {
    auto g = part.groups.find(k.group);
    if (g == part.groups.end()) return;
    g->second.erase(tp);
    if (g->second.empty()) part.groups.erase(g);
    return;
  }
  auto value = decode_offset_commit_value(*r.value);
  if (!value) {
    spdlog::warn("{}-{}: skipping a record: {}", consumer_offsets_topic, partition,
                 value.err().to_string());
    return;
  }
  part.groups[k.group][tp] = committed_offset{value->offset, value->leader_epoch,
                                              std::move(value->metadata), value->commit_timestamp};
}

// What a failure of the offsets partition's replica means to a coordinator's caller, as Kafka's
// GroupMetadataManager maps it: this node no longer leads it, or the partition cannot take
// commits now. Either is retriable at the coordinator the caller finds next.
errc coordinator_error(errc code) {
  switch (code) {
  case errc::not_leader_or_follower:
  case errc::kafka_storage_error:
  case errc::fenced_leader_epoch:
    return errc::not_coordinator;
  case errc::unknown_topic_or_partition:
  case errc::not_enough_replicas:
  case errc::not_enough_replicas_after_append:
    return errc::coordinator_not_available;
  default:
    return code;
  }
}

caf::error coordinator_failure(int32_t partition, const caf::error& e) {
  auto err = from_caf_error(e);
  return to_caf_error(make_error(coordinator_error(err.code), std::string(consumer_offsets_topic) +
                                                                  "-" + std::to_string(partition) +
                                                                  ": " + err.message));
}

void deliver(self_ptr self, group_membership::outcome out) {
  auto& st = self->state;
  for (auto& j : out.joins) {
    if (auto it = st.joins.find(j.to); it != st.joins.end()) {
      it->second.deliver(std::move(j.response));
      st.joins.erase(it);
    }
  }
  for (auto& s : out.syncs) {
    if (auto it = st.syncs.find(s.to); it != st.syncs.end()) {
      it->second.deliver(std::move(s.response));
      st.syncs.erase(it);
    }
  }
}

// Drops `partition` (this node no longer leads it, or leads it at a new epoch and loads it
// afresh): its groups' members must find their coordinator again.
void forget(self_ptr self, int32_t partition) {
  auto& partitions = self->state.partitions;
  auto it = partitions.find(partition);
  if (it == partitions.end()) return;
  auto part = it->second;
  partitions.erase(it);
  for (auto& [group, membership] : part->memberships) deliver(self, membership.unload());
}

timestamp_ms monotonic_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Kafka's member ids: the client id, a dash and a random UUID.
std::string new_member_id(group_coordinator_state& st, const std::string& client_id) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string id = client_id + "-";
  for (int word = 0; word < 2; ++word) {
    auto bits = st.random();
    for (int i = 0; i < 16; ++i, bits >>= 4) {
      if ((word == 0 && (i == 8 || i == 12)) || (word == 1 && i == 0) || (word == 1 && i == 4))
        id += '-';
      id += hex[bits & 0xF];
    }
  }
  return id;
}

group_membership& membership_of(self_ptr self, offsets_partition& part, const std::string& group) {
  auto it = part.memberships.find(group);
  if (it != part.memberships.end()) return it->second;
  return part.memberships
      .emplace(group, group_membership(group, self->state.opts.limits,
                                       [self](const std::string& client) {
                                         return new_member_id(self->state, client);
                                       }))
      .first->second;
}

// The memberships of the groups whose records the load replayed, resumed as they were recorded.
void resume_groups(self_ptr self, offsets_partition& part) {
  const auto now = monotonic_ms();
  for (const auto& [group, record] : part.group_records)
    membership_of(self, part, group).restore(record, now);
  part.group_records.clear();
}

// Applies the partition's records from part->loaded_to up to its high watermark to the map. The
// map is whole once it holds every record below the log end the leadership began with (as
// Kafka's coordinator reads to the log end): a leader elected a moment ago may hold commits its
// predecessor acknowledged above its own high watermark, which it may serve once its followers
// confirm them. Until then the caller gets COORDINATOR_LOAD_IN_PROGRESS, and a later request
// goes on from where this one stopped. Once whole, the map takes this leader's own commits as
// they are acknowledged: nobody else writes to the partition while it leads.
void catch_up(self_ptr self, partition_ptr part, loaded_fn done) {
  const int32_t partition = part->partition;
  self->request(part->replica, caf::infinite, fetch_atom_v,
                fetch_request{part->loaded_to, replay_fetch_bytes, 0, 0})
      .await(
          [self, partition, part, done](fetch_result& res) {
            batch_sequence_reader reader(res.records.bytes(), std::numeric_limits<size_t>::max());
            for (;;) {
              auto b = reader.next();
              if (!b) {
                spdlog::error("{}-{}: stopping replay at a bad batch: {}", consumer_offsets_topic,
                              partition, b.err().to_string());
                break;
              }
              if (!*b) break;
              (*b)->for_each_record(
                  [&](const record_view& r) { replay_record(*part, partition, r); });
            }
            if (!res.records.empty()) part->loaded_to = res.records.next_offset;
            self->state.partitions[partition] = part;
            if (!res.records.empty() && part->loaded_to < res.high_watermark &&
                part->loaded_to < part->load_end) {
              catch_up(self, part, done);
              return;
            }
            if (part->loaded_to < part->load_end) {
              done(nullptr,
                   to_caf_error(make_error(
                       errc::coordinator_load_in_progress,
                       std::string(consumer_offsets_topic) + "-" + std::to_string(partition) +
                           " is loaded up to offset " + std::to_string(part->loaded_to.value()) +
                           " of " + std::to_string(part->load_end.value()) +
                           ", waiting for its high watermark")));
              return;
            }
            part->loaded = true;
            resume_groups(self, *part);
            spdlog::info(
                "{}-{}: loaded the offsets of {} groups and the membership of {} up to offset {} "
                "at leader epoch {}",
                consumer_offsets_topic, partition, part->groups.size(), part->memberships.size(),
                part->loaded_to.value(), part->epoch.value());
            done(part, {});
          },
          [self, partition, done](caf::error& e) {
            forget(self, partition);
            done(nullptr, coordinator_failure(partition, e));
          });
}

// The partition of __consumer_offsets that holds `group`'s commits and the leader epoch at which
// this node leads it; NOT_COORDINATOR when another node leads it, COORDINATOR_NOT_AVAILABLE
// without the topic or a live leader.
struct leadership {
  int32_t partition = 0;
  leader_epoch epoch{-1};
};

result<leadership> lead_of(const group_coordinator_state& st, const std::string& group) {
  auto cache = st.opts.cache ? st.opts.cache() : nullptr;
  if (!cache)
    return make_error(errc::coordinator_not_available,
                      "this node holds no metadata from the controller yet");
  auto where = find_coordinator(cache->cluster(), group);
  if (where.partition < 0) return make_error(where.code, where.message);
  const auto& topic = cache->cluster().topics.at(consumer_offsets_topic);
  auto epoch = cache->led_by(consumer_offsets_topic, topic.id, where.partition, st.opts.node);
  if (!epoch)
    return make_error(errc::not_coordinator,
                      "node " + std::to_string(st.opts.node.value()) +
                          " is not the coordinator of group '" + group +
                          "': " + consumer_offsets_topic + "-" + std::to_string(where.partition) +
                          (where.node >= 0 ? " is led by node " + std::to_string(where.node)
                                           : " has no live leader"));
  return leadership{where.partition, *epoch};
}

// Runs `done` with `partition` loaded under this node's leadership at `epoch`, loading it (or
// going on loading it) first if needed.
void ensure_loaded(self_ptr self, int32_t partition, leader_epoch epoch, loaded_fn done) {
  auto& st = self->state;
  if (auto it = st.partitions.find(partition);
      it != st.partitions.end() && it->second->epoch == epoch) {
    if (it->second->loaded)
      done(it->second, {});
    else
      catch_up(self, it->second, done);
    return;
  }
  forget(self, partition);
  self->request(st.opts.replicas, caf::infinite, lookup_atom_v, std::string{consumer_offsets_topic},
                partition)
      .await(
          [self, partition, epoch, done](partition_replica_actor& replica) {
            auto part = std::make_shared<offsets_partition>();
            part->partition = partition;
            part->replica = replica;
            part->epoch = epoch;
            self->request(replica, caf::infinite, status_atom_v)
                .await(
                    [self, part, done](const replica_status& status) {
                      part->loaded_to = status.log_start;
                      part->load_end = status.log_end;
                      catch_up(self, part, done);
                    },
                    [partition, done](caf::error& e) {
                      done(nullptr, coordinator_failure(partition, e));
                    });
          },
          [partition, done](caf::error&) {
            // Named its leader before its replica opened here: the load is about to start.
            done(nullptr, to_caf_error(make_error(errc::coordinator_load_in_progress,
                                                  std::string(consumer_offsets_topic) + "-" +
                                                      std::to_string(partition) +
                                                      " is not open on this node yet")));
          });
}

// Runs `done` with the partition that holds `group`'s commits, loaded.
void with_partition(self_ptr self, const std::string& group, loaded_fn done) {
  auto lead = lead_of(self->state, group);
  if (!lead) {
    done(nullptr, to_caf_error(lead.err()));
    return;
  }
  ensure_loaded(self, lead->partition, lead->epoch, std::move(done));
}

// The partitions of __consumer_offsets this node leads now, with their leader epochs.
std::map<int32_t, leader_epoch> led_partitions(const group_coordinator_state& st) {
  std::map<int32_t, leader_epoch> out;
  auto cache = st.opts.cache ? st.opts.cache() : nullptr;
  if (!cache) return out;
  auto t = cache->cluster().topics.find(consumer_offsets_topic);
  if (t == cache->cluster().topics.end()) return out;
  for (const auto& p : t->second.partitions)
    if (auto epoch = cache->led_by(consumer_offsets_topic, t->second.id, p.partition, st.opts.node))
      out.emplace(p.partition, *epoch);
  return out;
}

// Loads the partitions this node took the leadership of (as Kafka's coordinator does when it
// becomes a partition's leader), so the first request after a failover finds them ready, and
// forgets those it lost.
void follow_leaderships(self_ptr self) {
  auto& st = self->state;
  const auto led = led_partitions(st);
  std::vector<int32_t> lost;
  for (const auto& [partition, part] : st.partitions) {
    if (led.count(partition) != 0) continue;
    spdlog::info("{}-{}: node {} no longer leads it; forgets the offsets of {} groups",
                 consumer_offsets_topic, partition, st.opts.node.value(), part->groups.size());
    lost.push_back(partition);
  }
  for (auto partition : lost) forget(self, partition);
  for (const auto& [partition, epoch] : led) {
    auto it = st.partitions.find(partition);
    if (it == st.partitions.end() || it->second->epoch != epoch || !it->second->loaded)
      ensure_loaded(self, partition, epoch, [](partition_ptr, caf::error) {});
  }
}

caf::result<std::vector<std::string>> list_groups(self_ptr self) {
  auto& st = self->state;
  std::vector<std::string> out;
  for (const auto& [partition, epoch] : led_partitions(st)) {
    auto it = st.partitions.find(partition);
    if (it == st.partitions.end() || it->second->epoch != epoch || !it->second->loaded)
      return to_caf_error(make_error(errc::coordinator_load_in_progress,
                                     std::string(consumer_offsets_topic) + "-" +
                                         std::to_string(partition) + " is still loading"));
    for (const auto& [group, commits] : it->second->groups)
      if (!commits.empty()) out.push_back(group);
  }
  std::sort(out.begin(), out.end());
  return out;
}

errc validate_entry(const group_offset& e) {
  if (e.topic.empty() || e.topic.size() > 249) return errc::invalid_topic_exception;
  if (e.partition < 0) return errc::unknown_topic_or_partition;
  if (e.offset < 0) return errc::offset_out_of_range;
  if (e.metadata.size() > max_offset_metadata_bytes) return errc::message_too_large;
  return errc::none;
}

caf::error validate_group(const std::string& group) {
  if (group.empty())
    return to_caf_error(make_error(errc::invalid_request, "the group id is empty"));
  if (group.size() > max_record_string_bytes)
    return to_caf_error(
        make_error(errc::invalid_request, "the group id is longer than 32767 bytes"));
  return {};
}

timestamp_ms now_ms(const group_coordinator_state& st) {
  if (st.opts.clock) return st.opts.clock();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void append_commits(self_ptr self, partition_ptr part, std::string group, group_offsets results,
                    caf::typed_response_promise<group_offsets> rp) {
  const auto now = now_ms(self->state);
  record_batch_builder builder(offset{0}, now);
  std::vector<size_t> valid;
  for (size_t i = 0; i < results.size(); ++i) {
    auto& e = results[i];
    if (e.error != errc::none) continue;
    auto key = encode_offset_commit_key({group, e.topic, e.partition});
    auto value = encode_offset_commit_value({e.offset, e.leader_epoch, e.metadata, now});
    builder.add(bytes_view{key}, bytes_view{value}, now);
    valid.push_back(i);
  }
  if (valid.empty()) {
    rp.deliver(std::move(results));
    return;
  }
  self->request(part->replica, caf::infinite, produce_atom_v,
                produce_request{batch_buffer::of(builder.build()), -1, 30000})
      .then(
          [self, part, group, results, valid, rp, now](const produce_result&) mutable {
            auto& commits = part->groups[group];
            bump(self->state.commits_metric, valid.size());
            for (auto i : valid) {
              const auto& e = results[i];
              commits[{e.topic, e.partition}] =
                  committed_offset{e.offset, e.leader_epoch, e.metadata, now};
            }
            rp.deliver(std::move(results));
          },
          [self, part, rp](caf::error& err) mutable {
            // The replica may be gone or another one now leads: built afresh on the next request.
            auto& partitions = self->state.partitions;
            if (auto it = partitions.find(part->partition);
                it != partitions.end() && it->second == part)
              forget(self, part->partition);
            spdlog::warn("{}-{}: commit failed: {}", consumer_offsets_topic, part->partition,
                         to_string(err));
            rp.deliver(coordinator_failure(part->partition, err));
          });
}

// Whether the group's membership takes a commit from `member` (Kafka's handleCommitOffsets): a
// group without members takes commits from anyone who names no member and generation -1.
errc commit_allowed(const offsets_partition& part, const std::string& group,
                    const group_member_ref& member) {
  auto it = part.memberships.find(group);
  if (it != part.memberships.end()) return it->second.check_commit(member);
  if (member.generation < 0 && member.member_id.empty()) return errc::none;
  return member.member_id.empty() ? errc::illegal_generation : errc::unknown_member_id;
}

caf::result<group_offsets> commit(self_ptr self, const std::string& group,
                                  group_member_ref member, group_offsets entries) {
  if (auto err = validate_group(group)) return err;
  for (auto& e : entries) e.error = validate_entry(e);
  auto rp = self->make_response_promise<group_offsets>();
  with_partition(self, group,
                 [self, group, member, entries, rp](partition_ptr part, caf::error err) mutable {
                   if (!part) {
                     rp.deliver(std::move(err));
                     return;
                   }
                   if (part->deleting.count(group)) {
                     rp.deliver(to_caf_error(make_error(errc::coordinator_not_available,
                                                        "group '" + group + "' is being deleted")));
                     return;
                   }
                   if (auto refused = commit_allowed(*part, group, member); refused != errc::none) {
                     for (auto& e : entries)
                       if (e.error == errc::none) e.error = refused;
                   }
                   append_commits(self, std::move(part), group, std::move(entries), rp);
                 });
  return rp;
}

// Delivers `out` after writing the group's GroupMetadata record when the group has reached a
// generation its last record does not hold (Stable, or Empty after members): as Kafka's
// coordinator, which answers a new generation's syncs only once its record is stored, so that a
// coordinator that takes over knows the group. A failed write is logged and the answers go out
// anyway: the next coordinator then knows an older generation, and the members join again.
void settle(self_ptr self, const partition_ptr& part, const std::string& group,
            group_membership::outcome out) {
  auto it = part->memberships.find(group);
  if (it == part->memberships.end()) {
    deliver(self, std::move(out));
    return;
  }
  const auto& g = it->second;
  const bool settled = g.state() == group_state::stable ||
                       (g.state() == group_state::empty && g.generation() > 0);
  auto recorded = part->recorded_generation.find(group);
  if (!settled ||
      (recorded != part->recorded_generation.end() && recorded->second == g.generation())) {
    deliver(self, std::move(out));
    return;
  }
  part->recorded_generation[group] = g.generation();
  if (g.state() == group_state::stable) bump(self->state.rebalances_metric);
  const auto now = now_ms(self->state);
  if (g.state() == group_state::empty)
    part->empty_since[group] = now;
  else
    part->empty_since.erase(group);
  record_batch_builder builder(offset{0}, now);
  const auto key = encode_group_metadata_key(group);
  const auto value = encode_group_metadata_value(g.snapshot(now));
  builder.add(bytes_view{key}, bytes_view{value}, now);
  self->request(part->replica, caf::infinite, produce_atom_v,
                produce_request{batch_buffer::of(builder.build()), -1, 30000})
      .then([self, out](const produce_result&) mutable { deliver(self, std::move(out)); },
            [self, part, group, out](caf::error& err) mutable {
              spdlog::warn("{}-{}: the record of group '{}' was not written: {}",
                           consumer_offsets_topic, part->partition, group, to_string(err));
              deliver(self, std::move(out));
            });
}

caf::result<join_group_response> join_group(self_ptr self, const std::string& group,
                                            join_group_request req) {
  if (auto err = validate_group(group)) return err;
  auto rp = self->make_response_promise<join_group_response>();
  with_partition(self, group, [self, group, req, rp](partition_ptr part, caf::error err) mutable {
    if (!part) {
      auto e = from_caf_error(err);
      join_group_response r;
      r.error = e.code;
      r.message = e.message;
      r.member_id = req.member_id;
      rp.deliver(std::move(r));
      return;
    }
    if (part->deleting.count(group)) {
      rp.deliver(join_group_response{errc::coordinator_not_available, "group '" + group + "' is being deleted",
                                     -1, {}, {}, req.member_id, {}});
      return;
    }
    const auto id = self->state.next_reply++;
    self->state.joins.emplace(id, rp);
    settle(self, part, group, membership_of(self, *part, group).join(id, req, monotonic_ms()));
  });
  return rp;
}

caf::result<sync_group_response> sync_group(self_ptr self, const std::string& group,
                                            sync_group_request req) {
  if (auto err = validate_group(group)) return err;
  auto rp = self->make_response_promise<sync_group_response>();
  with_partition(self, group, [self, group, req, rp](partition_ptr part, caf::error err) mutable {
    if (!part) {
      auto e = from_caf_error(err);
      rp.deliver(sync_group_response{e.code, e.message, {}});
      return;
    }
    const auto id = self->state.next_reply++;
    self->state.syncs.emplace(id, rp);
    settle(self, part, group, membership_of(self, *part, group).sync(id, req, monotonic_ms()));
  });
  return rp;
}

// A heartbeat (`leave` false) or a LeaveGroup of `member`.
caf::result<bool> member_call(self_ptr self, const std::string& group, group_member_ref member,
                              bool leave) {
  if (auto err = validate_group(group)) return err;
  auto rp = self->make_response_promise<bool>();
  with_partition(self, group, [self, group, member, leave, rp](partition_ptr part, caf::error err) mutable {
    if (!part) {
      rp.deliver(std::move(err));
      return;
    }
    auto it = part->memberships.find(group);
    errc code = errc::unknown_member_id;
    if (it != part->memberships.end()) {
      if (leave) {
        auto [left, out] = it->second.leave(member, monotonic_ms());
        code = left;
        settle(self, part, group, std::move(out));
      } else {
        code = it->second.heartbeat(member, monotonic_ms());
      }
    }
    if (code == errc::none)
      rp.deliver(true);
    else
      rp.deliver(to_caf_error(make_error(code, "group '" + group + "', member '" + member.member_id + "'")));
  });
  return rp;
}

caf::result<group_summary> describe_group(self_ptr self, const std::string& group) {
  if (auto err = validate_group(group)) return err;
  auto rp = self->make_response_promise<group_summary>();
  with_partition(self, group, [group, rp](partition_ptr part, caf::error err) mutable {
    if (!part) {
      rp.deliver(std::move(err));
      return;
    }
    group_summary out;
    auto it = part->memberships.find(group);
    if (it == part->memberships.end()) {
      // Commits alone make a group, as in Kafka, one without members.
      auto commits = part->groups.find(group);
      out.state = commits != part->groups.end() && !commits->second.empty() ? "Empty" : "Dead";
      rp.deliver(std::move(out));
      return;
    }
    const auto& g = it->second;
    auto record = g.snapshot(no_timestamp);
    out.state = to_string(g.state());
    out.protocol_type = std::move(record.protocol_type);
    out.protocol_name = std::move(record.protocol_name);
    out.generation = record.generation;
    out.leader = std::move(record.leader);
    for (auto& m : record.members)
      out.members.push_back(group_member_summary{std::move(m.member_id), std::move(m.group_instance_id),
                                                 std::move(m.client_id), std::move(m.assignment)});
    rp.deliver(std::move(out));
  });
  return rp;
}

// Kafka's DeleteGroups for one group: a tombstone for each of its commits and for its record,
// written with acks=-1, then the group is forgotten. Only a group without members.
caf::result<bool> delete_group(self_ptr self, const std::string& group) {
  if (auto err = validate_group(group)) return err;
  auto rp = self->make_response_promise<bool>();
  with_partition(self, group, [self, group, rp](partition_ptr part, caf::error err) mutable {
    if (!part) {
      rp.deliver(std::move(err));
      return;
    }
    auto fail = [&](errc code, const std::string& why) {
      rp.deliver(to_caf_error(make_error(code, "group '" + group + "' " + why)));
    };
    if (part->deleting.count(group)) return fail(errc::coordinator_not_available, "is being deleted");
    auto membership = part->memberships.find(group);
    if (membership != part->memberships.end() && membership->second.state() != group_state::empty &&
        membership->second.state() != group_state::dead)
      return fail(errc::group_not_empty, std::string("has members (its state is ") +
                                             to_string(membership->second.state()) + ")");
    auto commits = part->groups.find(group);
    const bool recorded = part->recorded_generation.count(group) > 0;
    if (commits == part->groups.end() && membership == part->memberships.end() && !recorded)
      return fail(errc::group_id_not_found, "does not exist");

    const auto now = now_ms(self->state);
    record_batch_builder builder(offset{0}, now);
    if (commits != part->groups.end())
      for (const auto& [tp, c] : commits->second) {
        const auto key = encode_offset_commit_key({group, tp.first, tp.second});
        builder.add(bytes_view{key}, std::nullopt, now);
      }
    const auto key = encode_group_metadata_key(group);
    builder.add(bytes_view{key}, std::nullopt, now);
    part->deleting.insert(group);
    self->request(part->replica, caf::infinite, produce_atom_v,
                  produce_request{batch_buffer::of(builder.build()), -1, 30000})
        .then(
            [self, part, group, rp](const produce_result&) mutable {
              bump(self->state.deletions_metric);
              part->deleting.erase(group);
              part->groups.erase(group);
              part->memberships.erase(group);
              part->recorded_generation.erase(group);
              part->group_records.erase(group);
              part->empty_since.erase(group);
              spdlog::info("{}-{}: deleted group '{}'", consumer_offsets_topic, part->partition, group);
              rp.deliver(true);
            },
            [self, part, group, rp](caf::error& err) mutable {
              part->deleting.erase(group);
              auto& partitions = self->state.partitions;
              if (auto it = partitions.find(part->partition); it != partitions.end() && it->second == part)
                forget(self, part->partition);
              spdlog::warn("{}-{}: deleting group '{}' failed: {}", consumer_offsets_topic, part->partition,
                           group, to_string(err));
              rp.deliver(coordinator_failure(part->partition, err));
            });
  });
  return rp;
}

// KIP-211: a commit of a group without members expires offsets.retention.minutes after the
// later of when it was made and when the group became Empty (so an Empty group's commits expire
// together, unless some came after). A group with members keeps its commits. A group whose last commit expired is gone: its record
// gets a tombstone too. The tombstones go in one batch per partition with acks=-1; the map drops
// only commits that did not change while it was written.
void expire_offsets(self_ptr self, const partition_ptr& part, timestamp_ms now) {
  const auto retention = self->state.opts.offsets_retention.count();
  struct expiring {
    std::string group;
    std::vector<std::pair<std::pair<std::string, int32_t>, timestamp_ms>> commits;
    bool whole = false;
  };
  std::vector<expiring> plan;
  for (const auto& [group, commits] : part->groups) {
    if (part->deleting.count(group)) continue;
    auto m = part->memberships.find(group);
    const bool member_less = m == part->memberships.end() || m->second.state() == group_state::empty ||
                             m->second.state() == group_state::dead;
    if (!member_less) continue;
    auto since = part->empty_since.find(group);
    const timestamp_ms empty_at = since != part->empty_since.end() ? since->second : no_timestamp;
    expiring e{group, {}, false};
    for (const auto& [tp, c] : commits) {
      const auto base = std::max(empty_at, c.committed_at);
      if (base != no_timestamp && now - base >= retention) e.commits.emplace_back(tp, c.committed_at);
    }
    if (e.commits.empty()) continue;
    e.whole = e.commits.size() == commits.size();
    plan.push_back(std::move(e));
  }
  if (plan.empty()) return;
  record_batch_builder builder(offset{0}, now);
  size_t expired = 0;
  for (const auto& e : plan) {
    for (const auto& [tp, at] : e.commits) {
      const auto key = encode_offset_commit_key({e.group, tp.first, tp.second});
      builder.add(bytes_view{key}, std::nullopt, now);
      ++expired;
    }
    if (e.whole && (part->memberships.count(e.group) || part->recorded_generation.count(e.group))) {
      const auto key = encode_group_metadata_key(e.group);
      builder.add(bytes_view{key}, std::nullopt, now);
    }
  }
  spdlog::info("{}-{}: expiring {} committed offsets of {} groups (offsets.retention.minutes)",
               consumer_offsets_topic, part->partition, expired, plan.size());
  self->request(part->replica, caf::infinite, produce_atom_v,
                produce_request{batch_buffer::of(builder.build()), -1, 30000})
      .then(
          [self, part, plan, expired](const produce_result&) {
            bump(self->state.expirations_metric, expired);
            for (const auto& e : plan) {
              auto g = part->groups.find(e.group);
              if (g == part->groups.end()) continue;
              for (const auto& [tp, at] : e.commits)
                if (auto c = g->second.find(tp); c != g->second.end() && c->second.committed_at == at)
                  g->second.erase(c);
              if (!g->second.empty()) continue;
              part->groups.erase(g);
              auto m = part->memberships.find(e.group);
              if (m == part->memberships.end() || m->second.state() == group_state::empty ||
                  m->second.state() == group_state::dead) {
                if (m != part->memberships.end()) part->memberships.erase(m);
                part->recorded_generation.erase(e.group);
                part->empty_since.erase(e.group);
              }
            }
          },
          [part](caf::error& err) {
            spdlog::warn("{}-{}: expiring committed offsets failed, to be tried again: {}", consumer_offsets_topic,
                         part->partition, to_string(err));
          });
}

// capstan_groups{state}: the groups of the partitions this node coordinates by Kafka's state
// name, a group with commits and no membership counting as Empty.
void publish_group_gauges(self_ptr self) {
  auto& st = self->state;
  if (!st.opts.metrics) return;
  std::map<std::string, int64_t> by_state;
  for (auto s : {group_state::empty, group_state::preparing_rebalance, group_state::completing_rebalance,
                 group_state::stable, group_state::dead})
    by_state[to_string(s)] = 0;
  for (const auto& [partition, part] : st.partitions) {
    if (!part->loaded) continue;
    for (const auto& [group, m] : part->memberships) ++by_state[to_string(m.state())];
    for (const auto& [group, commits] : part->groups)
      if (!part->memberships.count(group)) ++by_state[to_string(group_state::empty)];
  }
  std::vector<std::pair<metric_labels, int64_t>> samples;
  for (const auto& [state, n] : by_state) samples.push_back({{{"state", state}}, n});
  st.opts.metrics->set_gauge_family("capstan_groups",
                                    "Groups this node coordinates, by state (Kafka's NumGroups<State>)",
                                    std::move(samples));
}

void tick_memberships(self_ptr self) {
  const auto now = monotonic_ms();
  for (auto& [partition, part] : self->state.partitions)
    for (auto& [group, membership] : part->memberships)
      if (auto due = membership.next_deadline(); due && *due <= now)
        settle(self, part, group, membership.tick(now));
}

caf::result<group_offsets> fetch(self_ptr self, const std::string& group, group_offsets wanted) {
  if (auto err = validate_group(group)) return err;
  auto rp = self->make_response_promise<group_offsets>();
  with_partition(self, group, [group, wanted, rp](partition_ptr part, caf::error err) mutable {
    if (!part) {
      rp.deliver(std::move(err));
      return;
    }
    static const group_commits none;
    auto g = part->groups.find(group);
    const auto& commits = g != part->groups.end() ? g->second : none;
    group_offsets out;
    if (wanted.empty()) {
      for (const auto& [tp, c] : commits)
        out.push_back(
            group_offset{tp.first, tp.second, c.offset, c.metadata, errc::none, c.leader_epoch});
    } else {
      for (auto& w : wanted) {
        auto c = commits.find({w.topic, w.partition});
        w.offset = c != commits.end() ? c->second.offset : -1;
        w.metadata = c != commits.end() ? c->second.metadata : std::string{};
        w.leader_epoch = c != commits.end() ? c->second.leader_epoch : -1;
        w.error = errc::none;
        out.push_back(std::move(w));
      }
    }
    rp.deliver(std::move(out));
  });
  return rp;
}

group_coordinator_actor::behavior_type group_coordinator_behavior(self_ptr self,
                                                                  group_coordinator_options opts) {
  self->state.opts = std::move(opts);
  if (auto& m = self->state.opts.metrics) {
    auto& st = self->state;
    st.commits_metric = &m->counter("capstan_group_offset_commits_total",
                                    "Offsets committed at this node's coordinator (one per partition)");
    st.rebalances_metric = &m->counter("capstan_group_completed_rebalances_total",
                                       "Generations that became Stable at this node's coordinator");
    st.expirations_metric = &m->counter("capstan_group_offset_expirations_total",
                                        "Committed offsets expired by offsets.retention.minutes");
    st.deletions_metric = &m->counter("capstan_group_deletions_total", "Groups deleted with deleteGroup");
    publish_group_gauges(self);
  }
  self->send(self, gtick_atom_v);
  return {
      [self](commit_atom, const std::string& group, group_member_ref& member, group_offsets& entries) {
        return commit(self, group, std::move(member), std::move(entries));
      },
      [self](joingrp_atom, const std::string& group, join_group_request& req) {
        return join_group(self, group, std::move(req));
      },
      [self](syncgrp_atom, const std::string& group, sync_group_request& req) {
        return sync_group(self, group, std::move(req));
      },
      [self](beat_atom, const std::string& group, group_member_ref& member) {
        return member_call(self, group, std::move(member), false);
      },
      [self](leavegrp_atom, const std::string& group, group_member_ref& member) {
        return member_call(self, group, std::move(member), true);
      },
      [self](descgrp_atom, const std::string& group) { return describe_group(self, group); },
      [self](delgrp_atom, const std::string& group) { return delete_group(self, group); },
      [self](fetch_atom, const std::string& group, group_offsets& wanted) {
        return fetch(self, group, std::move(wanted));
      },
      [self](lsgroups_atom) { return list_groups(self); },
      [self](gtick_atom) {
        follow_leaderships(self);
        tick_memberships(self);
        auto& st = self->state;
        if (const auto now = monotonic_ms(); now >= st.next_gauges) {
          st.next_gauges = now + 1000;
          publish_group_gauges(self);
        }
        if (const auto now = monotonic_ms(); now >= st.next_expiry_check) {
          st.next_expiry_check = now + st.opts.offsets_retention_check_interval.count();
          const auto wall = now_ms(st);
          for (auto& [partition, part] : st.partitions)
            if (part->loaded) expire_offsets(self, part, wall);
        }
        self->delayed_send(self, self->state.opts.leadership_check_interval, gtick_atom_v);
      },
  };
}

} // namespace

group_coordinator_actor spawn_group_coordinator(caf::actor_system& sys,
                                                group_coordinator_options options) {
  return sys.spawn(group_coordinator_behavior, std::move(options));
}

} // namespace capstan
