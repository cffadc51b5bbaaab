// The group coordinator actor: committed consumer-group offsets. A group's commits live in one
// partition of __consumer_offsets (offsets_partition_for); each commit request is one batch of
// records keyed by (group, topic, partition), appended with acks=-1, and the in-memory map is
// updated only after the append succeeded, so a fetch never returns an offset that a restart
// could lose. A partition's map is rebuilt lazily, on the first request that needs it, by
// replaying the partition from its log start to its high watermark; replay uses `await`, so no
// other request is served until the map is complete.

#include "actors/group/group_coordinator.hpp"

#include <chrono>
#include <map>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

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
};

// One group's commits by (topic, partition).
using group_commits = std::map<std::pair<std::string, int32_t>, committed_offset>;

struct offsets_partition {
  partition_replica_actor replica;
  std::map<std::string, group_commits> groups;
};

struct group_coordinator_state {
  static inline const char* name = "capstan.group_coordinator";

  group_coordinator_options opts;
  // Loaded partitions of __consumer_offsets only.
  std::map<int32_t, offsets_partition> partitions;
};

using self_ptr = group_coordinator_actor::stateful_pointer<group_coordinator_state>;
using loaded_fn = std::function<void(offsets_partition*, caf::error)>;

constexpr int32_t replay_fetch_bytes = 1 << 20;

// Applies one __consumer_offsets record to the map (a later record of a key replaces an earlier
// one; a null value deletes it). Records that do not decode are skipped and logged.
void replay_record(offsets_partition& part, int32_t partition, const record_view& r) {
  if (!r.key) return;
  auto key = decode_offset_commit_key(*r.key);
  if (!key) {
    spdlog::warn("{}-{}: skipping a record: {}", consumer_offsets_topic, partition, key.err().to_string());
    return;
  }
  if (!*key) return;
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
    spdlog::warn("{}-{}: skipping a record: {}", consumer_offsets_topic, partition, value.err().to_string());
    return;
  }
  part.groups[k.group][tp] =
    committed_offset{value->offset, value->leader_epoch, std::move(value->metadata)};
}

void replay_from(self_ptr self, int32_t partition, std::shared_ptr<offsets_partition> part,
                 offset from, loaded_fn done) {
  self->request(part->replica, caf::infinite, fetch_atom_v,
                fetch_request{from, replay_fetch_bytes, 0, 0})
    .await(
      [self, partition, part, from, done](fetch_result& res) {
        batch_sequence_reader reader(res.records.bytes(), std::numeric_limits<size_t>::max());
        for (;;) {
          auto b = reader.next();
          if (!b) {
            spdlog::error("{}-{}: stopping replay at a bad batch: {}", consumer_offsets_topic,
                          partition, b.err().to_string());
            break;
          }
          if (!*b) break;
          (*b)->for_each_record([&](const record_view& r) { replay_record(*part, partition, r); });
        }
        const offset next = res.records.empty() ? from : res.records.next_offset;
        if (!res.records.empty() && next < res.high_watermark) {
          replay_from(self, partition, part, next, done);
          return;
        }
        auto& slot = self->state.partitions[partition] = std::move(*part);
        spdlog::info("{}-{}: loaded the offsets of {} groups up to offset {}", consumer_offsets_topic,
                     partition, slot.groups.size(), next.value());
        done(&slot, {});
      },
      [done](caf::error& e) { done(nullptr, std::move(e)); });
}

// Runs `done` with the loaded partition, loading it first if needed.
void with_partition(self_ptr self, int32_t partition, loaded_fn done) {
  auto& st = self->state;
  if (auto it = st.partitions.find(partition); it != st.partitions.end()) {
    done(&it->second, {});
    return;
  }
  self->request(st.opts.replicas, caf::infinite, lookup_atom_v, std::string{consumer_offsets_topic},
                partition)
    .await(
      [self, partition, done](partition_replica_actor& replica) {
        auto part = std::make_shared<offsets_partition>();
        part->replica = replica;
        self->request(replica, caf::infinite, offsets_atom_v, earliest_timestamp)
          .await(
            [self, partition, part, done](const list_offsets_result& start) {
              replay_from(self, partition, part, offset{start.found}, done);
            },
            [done](caf::error& e) { done(nullptr, std::move(e)); });
      },
      [done](caf::error& e) { done(nullptr, std::move(e)); });
}

errc validate_entry(const group_offset& e) {
  if (e.topic.empty() || e.topic.size() > 249) return errc::invalid_topic_exception;
  if (e.partition < 0) return errc::unknown_topic_or_partition;
  if (e.offset < 0) return errc::offset_out_of_range;
  if (e.metadata.size() > max_offset_metadata_bytes) return errc::message_too_large;
  return errc::none;
}

caf::error validate_group(const std::string& group) {
  if (group.empty()) return to_caf_error(make_error(errc::invalid_request, "the group id is empty"));
  if (group.size() > max_record_string_bytes)
    return to_caf_error(make_error(errc::invalid_request, "the group id is longer than 32767 bytes"));
  return {};
}

timestamp_ms now_ms(const group_coordinator_state& st) {
  if (st.opts.clock) return st.opts.clock();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
           std::chrono::system_clock::now().time_since_epoch())
    .count();
}

void append_commits(self_ptr self, int32_t partition, offsets_partition& part, std::string group,
                    group_offsets results, caf::typed_response_promise<group_offsets> rp) {
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
  self->request(part.replica, caf::infinite, produce_atom_v,
                produce_request{batch_buffer::of(builder.build()), -1, 30000})
    .then(
      [self, partition, group, results, valid, rp](const produce_result&) mutable {
        auto it = self->state.partitions.find(partition);
        if (it != self->state.partitions.end()) {
          auto& commits = it->second.groups[group];
          for (auto i : valid) {
            const auto& e = results[i];
            commits[{e.topic, e.partition}] = committed_offset{e.offset, e.leader_epoch, e.metadata};
          }
        }
        rp.deliver(std::move(results));
      },
      [self, partition, results, valid, rp](caf::error& err) mutable {
        const auto code = from_caf_error(err).code;
        spdlog::warn("{}-{}: commit failed: {}", consumer_offsets_topic, partition, to_string(err));
        // The replica may be gone or another one now leads: reload on the next request.
        if (code == errc::not_leader_or_follower || code == errc::request_timed_out ||
            code == errc::kafka_storage_error)
          self->state.partitions.erase(partition);
        for (auto i : valid) results[i].error = code;
        rp.deliver(std::move(results));
      });
}

caf::result<group_offsets> commit(self_ptr self, const std::string& group, group_offsets entries) {
  if (auto err = validate_group(group)) return err;
  for (auto& e : entries) e.error = validate_entry(e);
  const auto partition = offsets_partition_for(group, self->state.opts.offsets_partitions);
  auto rp = self->make_response_promise<group_offsets>();
  with_partition(self, partition,
                 [self, partition, group, entries, rp](offsets_partition* part, caf::error err) mutable {
                   if (!part) {
                     rp.deliver(std::move(err));
                     return;
                   }
                   append_commits(self, partition, *part, group, std::move(entries), rp);
                 });
  return rp;
}

caf::result<group_offsets> fetch(self_ptr self, const std::string& group, group_offsets wanted) {
  if (auto err = validate_group(group)) return err;
  const auto partition = offsets_partition_for(group, self->state.opts.offsets_partitions);
  auto rp = self->make_response_promise<group_offsets>();
  with_partition(self, partition,
                 [group, wanted, rp](offsets_partition* part, caf::error err) mutable {
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
                       out.push_back(group_offset{tp.first, tp.second, c.offset, c.metadata, errc::none,
                                                 c.leader_epoch});
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
  return {
    [self](commit_atom, const std::string& group, group_offsets& entries) {
      return commit(self, group, std::move(entries));
    },
    [self](fetch_atom, const std::string& group, group_offsets& wanted) {
      return fetch(self, group, std::move(wanted));
    },
  };
}

} // namespace

group_coordinator_actor spawn_group_coordinator(caf::actor_system& sys,
                                                group_coordinator_options options) {
  return sys.spawn(group_coordinator_behavior, std::move(options));
}

} // namespace capstan
