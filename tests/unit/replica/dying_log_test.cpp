// A replica whose log dies holding one of its requests answers the caller waiting on that request
// with the log's exit reason. CAF 0.17 drops the promise of a request its receiver took and never
// answered, so the replica learns of the death only from the log's exit message; without an
// answer from the replica the caller would wait out its whole request timeout.

#include <catch2/catch.hpp>

#include <caf/all.hpp>

#include "actors/replica/partition_replica_actor.hpp"
#include "runtime/actor/caf_error.hpp"
#include "tests/support/caf_fixture.hpp"
#include "tests/support/log_builder.hpp"

using namespace capstan;
using namespace capstan::test;
using namespace std::chrono_literals;

namespace {

// Only bounds a wait that would otherwise never end; a replica that answers does so at once.
constexpr caf::timespan timeout = 30s;

constexpr offset log_end{5};
constexpr leader_epoch epoch{3};

caf::error disk_failed() {
  return to_caf_error(make_error(errc::kafka_storage_error, "disk failed"));
}

// A stand-in for a partition log: it answers what a replica asks when it starts and takes a role
// (info, newepoch); any other request it takes without answering and dies, as a log whose disk
// fails under that request does.
partition_log_actor::behavior_type dying_log(partition_log_actor::pointer self) {
  auto die = [self](auto answer) {
    self->quit(disk_failed());
    return self->make_response_promise<decltype(answer)>();
  };
  return {
      [die](append_atom, const append_request&) { return die(append_result{}); },
      [die](read_atom, const read_request&) { return die(log_slice{}); },
      [die](time_atom, timestamp_ms) { return die(int64_t{}); },
      [die](truncate_atom, offset) { return die(offset{}); },
      [die](reset_atom, offset) { return die(offset{}); },
      [die](epoch_atom, leader_epoch) { return die(epoch_end{}); },
      [](newepoch_atom, leader_epoch) { return log_end; },
      [die](flush_atom) { return die(offset{}); },
      [die](retain_atom) { return die(int32_t{}); },
      [die](compact_atom) { return die(compaction_stats{}); },
      [](info_atom) {
        return log_info{offset{0}, log_end};
      },
      [die](close_atom) { return die(offset{}); },
      [](reconfig_atom, const log_config&) {},
      [](tick_atom) {},
  };
}

// A replica of orders-0 on node 1 over a dying log, leader or follower of `leader` at `epoch`.
struct dying_log_fixture {
  threaded_system sys;
  partition_replica_actor replica;

  explicit dying_log_fixture(node_id leader) {
    partition_replica_options opts;
    opts.topic = "orders";
    opts.high_watermark = log_end;
    auto log = sys.spawn(dying_log);
    replica = spawn_partition_replica(sys.sys(), opts, log);
    sys.track(replica);
    replica_role role;
    role.leader = leader;
    role.epoch = epoch;
    role.replicas = {node_id{1}, node_id{2}};
    role.isr = role.replicas;
    auto became = sys.request<bool>(replica, timeout, become_atom_v, role);
    if (!became) FAIL("become failed: " << caf::to_string(became.error()));
  }
};

template <class T>
errc error_of(const caf::expected<T>& answer) {
  return answer ? errc::none : from_caf_error(answer.error()).code;
}

} // namespace

TEST_CASE("a consumer fetch whose read the log took as it died gets the log's error", "[replica]") {
  dying_log_fixture f{node_id{1}};
  fetch_request req;
  req.from = offset{0};
  CHECK(error_of(f.sys.request<fetch_result>(f.replica, timeout, fetch_atom_v, req)) ==
        errc::kafka_storage_error);
}

TEST_CASE("a follower append the log took as it died gets the log's error", "[replica]") {
  dying_log_fixture f{node_id{2}};
  replicate_request req{epoch, batch_buffer::of(make_batch(2, "r", 1000)), log_end, offset{0}};
  CHECK(error_of(f.sys.request<offset>(f.replica, timeout, replicate_atom_v, std::move(req))) ==
        errc::kafka_storage_error);
}

TEST_CASE("a follower fetch whose read the log took as it died gets the log's error", "[replica]") {
  dying_log_fixture f{node_id{1}};
  follower_fetch_request req{node_id{2}, epoch, offset{0}, 1 << 20, fetch_session_actor{}};
  CHECK(error_of(f.sys.request<follower_fetch_result>(
            f.replica, timeout, ffetch_atom_v, std::move(req))) == errc::kafka_storage_error);
}

TEST_CASE("an acks=1 produce whose append the log took as it died gets the log's error",
          "[replica]") {
  dying_log_fixture f{node_id{1}};
  produce_request req{batch_buffer::of(make_batch(2, "p", 1000)), 1, 30000};
  CHECK(error_of(f.sys.request<produce_result>(f.replica, timeout, produce_atom_v,
                                               std::move(req))) == errc::kafka_storage_error);
}
