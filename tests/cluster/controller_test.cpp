// The active controller across actor systems: three voter nodes (quorum member, controller,
// replica manager, broker lifecycle behind one node endpoint each, tests/support/
// controller_harness.hpp) register, get unfenced, and take the controller's decisions through
// the frames real nodes exchange. Nothing plays the controller for them.

#include <catch2/catch.hpp>

#include <cerrno>

#include "runtime/actor/caf_error.hpp"
#include "runtime/cluster/link_faults.hpp"
#include "runtime/storage/fault_injection_env.hpp"
#include "tests/support/controller_harness.hpp"
#include "tests/support/log_builder.hpp"

using namespace capstan;
using namespace capstan::test;

namespace {

bytes batch_of(int i) {
  return make_batch(3, "r" + std::to_string(i), 1000 + i);
}

bool all_unfenced(const controller::metadata_image& img, std::vector<int> ids) {
  for (int id : ids)
    if (!img.is_unfenced(node_id{id})) return false;
  return true;
}

const controller::partition_state* partition_of(const controller::metadata_image& img,
                                                const std::string& topic, int32_t p) {
  auto t = img.topic_by_name(topic);
  if (t == nullptr || static_cast<size_t>(p) >= t->partitions.size()) return nullptr;
  return &t->partitions[static_cast<size_t>(p)];
}

// Every running replica of `tp` follows (or is) `leader` at `epoch`.
bool replicas_agree(controller_harness& h, const topic_partition& tp, std::vector<int> nodes,
                    int leader, int32_t epoch) {
  for (int n : nodes) {
    auto s = h.status(n, tp);
    if (!s || s->epoch.value() != epoch) return false;
    if (n == leader ? !s->leader : s->leader_node.value() != leader) return false;
  }
  return true;
}

std::vector<int> others(int not_this) {
  std::vector<int> out;
  for (int i = 1; i <= 3; ++i)
    if (i != not_this) out.push_back(i);
  return out;
}

// Topic "orders" (3 partitions, RF=3) created once all three nodes are unfenced, and a node that
// is not the quorum leader and leads one of its partitions (each node leads one of three), once
// every replica follows that leader.
struct victim_leader {
  int controller = 0;
  int victim = 0;
  int32_t led = -1;
  int32_t old_epoch = 0;
  topic_partition tp;
};

victim_leader orders_led_by_a_non_controller(controller_harness& h) {
  h.await_image([](const auto& img) {
    return img.brokers().size() == 3 && all_unfenced(img, {1, 2, 3});
  });
  REQUIRE(h.create_topic(topic_spec{"orders", 3, 3, {}}).error == errc::none);
  auto before =
      h.await_image([](const auto& i) { return partition_of(i, "orders", 2) != nullptr; });
  victim_leader v;
  REQUIRE(h.eventually([&] { return (v.controller = h.quorum_leader()) != 0; }));
  v.victim = others(v.controller).front();
  for (int32_t p = 0; p < 3; ++p)
    if (partition_of(before, "orders", p)->leader == node_id{v.victim}) v.led = p;
  REQUIRE(v.led >= 0);
  v.old_epoch = partition_of(before, "orders", v.led)->leader_epoch.value();
  v.tp = topic_partition{"orders", v.led};
  REQUIRE(h.eventually([&] { return replicas_agree(h, v.tp, {1, 2, 3}, v.victim, v.old_epoch); }));
  return v;
}

std::filesystem::path partition_dir(controller_harness& h, const victim_leader& v) {
  return h.node(v.victim).data_dir / "data" / ("orders-" + std::to_string(v.led));
}

// After the victim's replica of v.tp went offline: the controller takes the victim out of that
// partition's ISR and leadership, but not out of its other partitions (it still heartbeats), and
// the new leader takes acks=all. Returns the new leader.
int moved_off_failed_replica(controller_harness& h, const victim_leader& v) {
  auto after = h.await_image([&](const auto& i) {
    auto p = partition_of(i, "orders", v.led);
    return p->leader != node_id{v.victim} && !p->in_isr(node_id{v.victim});
  });
  CHECK(after.is_unfenced(node_id{v.victim}));
  for (int32_t p = 0; p < 3; ++p)
    if (p != v.led) CHECK(partition_of(after, "orders", p)->in_isr(node_id{v.victim}));
  const auto& moved = *partition_of(after, "orders", v.led);
  CHECK(moved.leader_epoch.value() > v.old_epoch);
  const int new_leader = moved.leader.value();
  REQUIRE(h.eventually([&] {
    return replicas_agree(h, v.tp, others(v.victim), new_leader, moved.leader_epoch.value());
  }));
  auto taken = h.produce(new_leader, v.tp, batch_of(2));
  INFO((taken ? std::string() : caf::to_string(taken.error())));
  REQUIRE(taken);
  return new_leader;
}

} // namespace

TEST_CASE(
    "three nodes register and are unfenced, and a created topic is hosted by every replica under "
    "the controller's leader and acks=all produce succeeds",
    "[controller][active]") {
  controller_harness h({});
  h.await_image([](const auto& img) {
    return img.brokers().size() == 3 && all_unfenced(img, {1, 2, 3});
  });

  auto created = h.create_topic(topic_spec{"orders", 1, 3, {}});
  REQUIRE(created.error == errc::none);
  auto img = h.await_image([](const auto& i) { return partition_of(i, "orders", 0) != nullptr; });
  CHECK(img.topic_by_name("orders")->id == created.id);
  const auto& p = *partition_of(img, "orders", 0);
  const int leader = p.leader.value();
  CHECK(p.replicas.size() == 3);

  const topic_partition tp{"orders", 0};
  REQUIRE(h.eventually([&] {
    return replicas_agree(h, tp, {1, 2, 3}, leader, p.leader_epoch.value());
  }));
  for (int i = 0; i < 5; ++i) {
    auto r = h.produce(leader, tp, batch_of(i));
    REQUIRE(r);
    CHECK(r->base_offset.value() == 3 * i);
  }
  // Every follower fetched all of it (acks=all waited for the whole ISR).
  REQUIRE(h.eventually([&] {
    for (int n : {1, 2, 3}) {
      auto s = h.status(n, tp);
      if (!s || s->log_end.value() != 15) return false;
    }
    return true;
  }));
}

TEST_CASE("a node whose heartbeats stop is fenced after its session timeout and its partitions get "
          "new leaders",
          "[controller][active]") {
  controller_harness h({});
  const auto [controller, victim, led, old_epoch, tp] = orders_led_by_a_non_controller(h);

  h.stop(victim);
  auto after = h.await_image([&](const auto& i) {
    auto p = partition_of(i, "orders", led);
    return !i.is_unfenced(node_id{victim}) && p->leader != node_id{victim};
  });
  const auto& moved = *partition_of(after, "orders", led);
  CHECK(moved.leader_epoch.value() > old_epoch);
  CHECK_FALSE(moved.in_isr(node_id{victim}));

  // The survivors got the LeaderAndIsr with the bumped epoch, and the new leader takes acks=all.
  const int new_leader = moved.leader.value();
  REQUIRE(h.eventually([&] {
    return replicas_agree(h, tp, others(victim), new_leader, moved.leader_epoch.value());
  }));
  REQUIRE(h.produce(new_leader, tp, batch_of(1)));
}

TEST_CASE("a replica whose disk fails leaves its ISR and leadership while its node stays unfenced",
          "[controller][active]") {
  fault_injection_env faults;
  scoped_storage_env installed(faults);
  controller_harness h({});
  const auto v = orders_led_by_a_non_controller(h);

  // The victim's disk fails under the partition it leads: the write fails, the replica goes
  // offline, and the victim's next heartbeat names it.
  faults.fail(partition_dir(h, v).string() + "/", storage_op::write, EIO);
  auto refused = h.produce(v.victim, v.tp, batch_of(1));
  REQUIRE_FALSE(refused);
  moved_off_failed_replica(h, v);
}

TEST_CASE("a leader whose disk fails a read goes offline with KAFKA_STORAGE_ERROR and another ISR "
          "member leads with every committed record",
          "[controller][active][storage]") {
  fault_injection_env faults;
  scoped_storage_env installed(faults);
  controller_harness h({});
  const auto v = orders_led_by_a_non_controller(h);
  for (int i = 0; i < 2; ++i) REQUIRE(h.produce(v.victim, v.tp, batch_of(i)));

  faults.fail(partition_dir(h, v).string() + "/", storage_op::read, EIO);
  // From the first batch: the log answers a read of its last append from memory, this one from
  // the disk.
  auto refused = h.fetch(v.victim, v.tp, offset{0});
  REQUIRE_FALSE(refused);
  const auto read_error = from_caf_error(refused.error());
  INFO(read_error.to_string());
  CHECK(read_error.code == errc::kafka_storage_error);
  CHECK(read_error.message.find("Input/output error") != std::string::npos);

  const int new_leader = moved_off_failed_replica(h, v);
  // The victim answers for the partition from its offline replica, naming the failed read.
  auto check_offline = [](const caf::error& answer) {
    const auto e = from_caf_error(answer);
    INFO(e.to_string());
    CHECK(e.code == errc::kafka_storage_error);
    CHECK(e.message.find("is offline") != std::string::npos);
    CHECK(e.message.find("pread") != std::string::npos);
  };
  auto produced = h.produce(v.victim, v.tp, batch_of(3));
  REQUIRE_FALSE(produced);
  check_offline(produced.error());
  auto fetched = h.fetch(v.victim, v.tp, offset{0});
  REQUIRE_FALSE(fetched);
  check_offline(fetched.error());
  // Every record the victim had acknowledged with acks=all is at the new leader.
  auto at_new = h.fetch(new_leader, v.tp, offset{0});
  REQUIRE(at_new);
  const auto records = records_of(at_new->records.bytes());
  REQUIRE(records.size() >= 6);
  CHECK(records[0].value == "r0-0");
  CHECK(records[5].value == "r1-2");
}

TEST_CASE("a replica its node cannot open is led elsewhere, outside the ISR, from the start",
          "[controller][active]") {
  fault_injection_env faults;
  scoped_storage_env installed(faults);
  controller_harness h({});
  h.await_image([](const auto& img) {
    return img.brokers().size() == 3 && all_unfenced(img, {1, 2, 3});
  });
  // Node 1 cannot open its replica of orders-0 (as when it runs out of file descriptors).
  faults.fail((h.node(1).data_dir / "data" / "orders-0").string() + "/", storage_op::open, EMFILE);
  REQUIRE(h.create_topic(topic_spec{"orders", 3, 3, {}}).error == errc::none);
  auto after = h.await_image([](const auto& i) {
    auto p = partition_of(i, "orders", 0);
    return p != nullptr && p->leader != node_id{1} && p->leader != controller::no_leader &&
           !p->in_isr(node_id{1});
  });
  CHECK(after.is_unfenced(node_id{1}));
  CHECK(partition_of(after, "orders", 1)->in_isr(node_id{1}));
  const int leader = partition_of(after, "orders", 0)->leader.value();
  const topic_partition tp{"orders", 0};
  REQUIRE(h.eventually([&] { return static_cast<bool>(h.produce(leader, tp, batch_of(1))); }));
}

TEST_CASE("a stopping node's controlled shutdown moves its leaderships before it goes",
          "[controller][active]") {
  controller_harness h({});
  const auto [controller, victim, led, old_epoch, tp] = orders_led_by_a_non_controller(h);

  REQUIRE(h.shut_down(victim));
  // Confirmed means committed: the active controller's image has it already.
  auto after = h.image(controller);
  REQUIRE(after);
  CHECK_FALSE(after->is_unfenced(node_id{victim}));
  const auto& moved = *partition_of(*after, "orders", led);
  CHECK(moved.leader != node_id{victim});
  CHECK_FALSE(moved.in_isr(node_id{victim}));
  // The node's next process is taken at once, not refused while the old session would last.
  auto again = h.register_at(controller, h.registration_of(victim, 77));
  CHECK(again.error == errc::none);
}

TEST_CASE("a controlled shutdown follows the controller to where the quorum moved since the "
          "node's last heartbeat",
          "[controller][active]") {
  controller_harness h({});
  const auto [controller, victim, led, old_epoch, tp] = orders_led_by_a_non_controller(h);
  // The victim's heartbeats went to `controller`, which now hands the quorum over: its answer
  // to the shutdown is NOT_CONTROLLER.
  auto& c = h.node(controller);
  const auto told = c.system->request<int32_t>(c.quorum, std::chrono::seconds(5), resign_atom_v);
  REQUIRE(told);
  REQUIRE(*told > 0);
  REQUIRE(h.shut_down(victim));
  auto after = h.await_image([&](const auto& i) { return !i.is_unfenced(node_id{victim}); });
  CHECK(partition_of(after, "orders", led)->leader != node_id{victim});
}

TEST_CASE("when the active controller's node stops, another member becomes active, sends the "
          "state, and topics can be created again",
          "[controller][active]") {
  controller_harness h({});
  h.await_image([](const auto& img) {
    return img.brokers().size() == 3 && all_unfenced(img, {1, 2, 3});
  });
  REQUIRE(h.create_topic(topic_spec{"orders", 1, 3, {}}).error == errc::none);
  int old = 0;
  REQUIRE(h.eventually([&] { return (old = h.quorum_leader()) != 0; }));

  h.stop(old);
  // The new active controller fences the old one's node once its session is over.
  auto img = h.await_image([&](const auto& i) { return !i.is_unfenced(node_id{old}); });
  const auto& orders = *partition_of(img, "orders", 0);
  CHECK(orders.leader != node_id{old});
  const topic_partition orders_tp{"orders", 0};
  REQUIRE(h.eventually([&] {
    return replicas_agree(h, orders_tp, others(old), orders.leader.value(),
                          orders.leader_epoch.value());
  }));

  auto created = h.create_topic(topic_spec{"events", 1, 2, {}});
  REQUIRE(created.error == errc::none);
  auto with_events =
      h.await_image([](const auto& i) { return partition_of(i, "events", 0) != nullptr; });
  const auto& events = *partition_of(with_events, "events", 0);
  const topic_partition events_tp{"events", 0};
  REQUIRE(h.eventually([&] {
    return replicas_agree(h, events_tp, others(old), events.leader.value(),
                          events.leader_epoch.value());
  }));
  REQUIRE(h.produce(events.leader.value(), events_tp, batch_of(0)));
}

TEST_CASE("producer id blocks never overlap, also after the active controller's node stops",
          "[controller][active][producer]") {
  controller_harness h({});
  std::vector<allocate_producer_ids_response_msg> blocks;
  for (int n : {1, 2, 3}) blocks.push_back(h.allocate_producer_ids(n));
  int old = 0;
  REQUIRE(h.eventually([&] { return (old = h.quorum_leader()) != 0; }));
  h.stop(old);
  // The new active controller replayed the log: its blocks start after the old one's.
  for (int n : others(old)) blocks.push_back(h.allocate_producer_ids(n));
  int64_t next = 0;
  for (const auto& b : blocks) {
    INFO("block [" << b.first_id << ", +" << b.size << ")");
    REQUIRE(b.error == errc::none);
    CHECK(b.first_id == next);
    CHECK(b.size == 1000);
    next = b.first_id + b.size;
  }
  CHECK(h.await_image([&](const auto& i) {
           return i.next_producer_id() == next;
         }).next_producer_id() == next);
}

TEST_CASE("a second registration of a node id by another incarnation is refused while the first "
          "heartbeats, and a voter that is not active names the active one",
          "[controller][active]") {
  controller_harness h({});
  auto img = h.await_image([](const auto& i) {
    return i.brokers().size() == 3 && all_unfenced(i, {1, 2, 3});
  });
  const auto first = *img.broker(node_id{2});
  int active = 0;
  REQUIRE(h.eventually([&] { return (active = h.quorum_leader()) != 0; }));

  broker_registration_response_msg dup;
  REQUIRE(h.eventually([&] {
    dup = h.register_at(active, h.registration_of(2, 0xEE));
    return dup.error != errc::not_controller;
  }));
  CHECK(dup.error == errc::duplicate_broker_registration);
  auto now = h.image(active);
  REQUIRE(now);
  CHECK(now->broker(node_id{2})->incarnation == first.incarnation);
  CHECK(now->is_unfenced(node_id{2}));

  // A voter that has not heard from the leader since an election (one under load, say) names no
  // one: ask until a passive voter has.
  broker_registration_response_msg refused;
  REQUIRE(h.eventually([&] {
    if ((active = h.quorum_leader()) == 0) return false;
    refused = h.register_at(others(active).front(), h.registration_of(2, 0xEE));
    return refused.leader_hint != -1;
  }));
  CHECK(refused.error == errc::not_controller);
  CHECK(refused.leader_hint == active);
}

TEST_CASE("a leader's ISR shrink goes to the active controller as AlterPartition and commits "
          "while the lagging node is still unfenced",
          "[controller][active]") {
  controller_harness_options o;
  o.session_timeout = std::chrono::seconds(60);
  o.replica_lag_time_max_ms = 500;
  controller_harness h(o);
  h.await_image([](const auto& img) {
    return img.brokers().size() == 3 && all_unfenced(img, {1, 2, 3});
  });
  REQUIRE(h.create_topic(topic_spec{"orders", 1, 3, {}}).error == errc::none);
  auto img = h.await_image([](const auto& i) { return partition_of(i, "orders", 0) != nullptr; });
  const auto& p = *partition_of(img, "orders", 0);
  const int leader = p.leader.value();
  const topic_partition tp{"orders", 0};
  REQUIRE(h.eventually([&] {
    return replicas_agree(h, tp, {1, 2, 3}, leader, p.leader_epoch.value());
  }));
  int controller = 0;
  REQUIRE(h.eventually([&] { return (controller = h.quorum_leader()) != 0; }));
  int follower = 0;
  for (int n = 1; n <= 3; ++n)
    if (n != leader && n != controller) follower = n;
  REQUIRE(follower != 0);

  // Alive but cut off from the leader: a stopped node's closed connection would fence it at once.
  link_faults::instance().cut(node_id{leader}, node_id{follower});
  REQUIRE(h.produce(leader, tp, batch_of(0), 1));
  auto shrunk = h.await_image(
      [&](const auto& i) { return !partition_of(i, "orders", 0)->in_isr(node_id{follower}); });
  const auto& after = *partition_of(shrunk, "orders", 0);
  // An ISR change by AlterPartition: same leader and leader epoch, a newer partition epoch.
  CHECK(shrunk.is_unfenced(node_id{follower}));
  CHECK(after.leader == node_id{leader});
  CHECK(after.leader_epoch == p.leader_epoch);
  CHECK(after.partition_epoch.value() > p.partition_epoch.value());
  REQUIRE(h.eventually([&] {
    auto s = h.status(leader, tp);
    return s && s->isr == 2 && s->partition_epoch == after.partition_epoch.value();
  }));
  link_faults::instance().clear_all();
}

TEST_CASE("partitions added through the active controller are hosted by their replicas and take "
          "acks=all produce, and ElectLeaders answers per partition",
          "[controller][active]") {
  controller_harness h({});
  h.await_image([](const auto& img) {
    return img.brokers().size() == 3 && all_unfenced(img, {1, 2, 3});
  });
  REQUIRE(h.create_topic(topic_spec{"orders", 1, 3, {}}).error == errc::none);
  auto grown = h.create_partitions(create_partitions_msg{"orders", 3});
  REQUIRE(grown.error == errc::none);
  CHECK(h.create_partitions(create_partitions_msg{"orders", 3}).error == errc::invalid_partitions);
  auto img = h.await_image([](const auto& i) { return partition_of(i, "orders", 2) != nullptr; });
  CHECK(img.topic_by_name("orders")->id == grown.id);

  for (int32_t p : {1, 2}) {
    const auto& state = *partition_of(img, "orders", p);
    CHECK(state.replicas.size() == 3);
    const int leader = state.leader.value();
    const topic_partition tp{"orders", p};
    REQUIRE(h.eventually([&] {
      return replicas_agree(h, tp, {1, 2, 3}, leader, state.leader_epoch.value());
    }));
    auto r = h.produce(leader, tp, batch_of(p));
    REQUIRE(r);
    CHECK(r->base_offset.value() == 0);
  }

  // Every leader is its preferred replica already.
  auto all = h.elect_leaders(elect_leaders_msg{});
  REQUIRE(all.error == errc::none);
  REQUIRE(all.results.size() == 3);
  for (const auto& r : all.results) CHECK(r.error == errc::election_not_needed);
  auto unknown = h.elect_leaders(elect_leaders_msg{{{"orders", 7}}});
  REQUIRE(unknown.results.size() == 1);
  CHECK(unknown.results[0].error == errc::unknown_topic_or_partition);
}

TEST_CASE("LeaderAndIsr and UpdateMetadata lost on their way to a node are made up for by the "
          "node's full state once its link works, so it opens its replicas and leads what it "
          "was named to lead",
          "[controller]") {
  controller_harness h(controller_harness_options{});
  h.await_image([](const auto& img) {
    return img.brokers().size() == 3 && all_unfenced(img, {1, 2, 3});
  });
  int controller = 0;
  REQUIRE(h.eventually([&] { return (controller = h.quorum_leader()) != 0; }));
  // The controller's messages to one other node vanish; that node's heartbeats still arrive, and
  // the quorum still has a majority without it.
  const int cut_off = others(controller).front();
  link_faults::instance().drop(node_id{controller}, node_id{cut_off});
  REQUIRE(h.create_topic(topic_spec{"missed", 3, 3, {}}).error == errc::none);
  auto image = h.await_image([](const auto& i) { return partition_of(i, "missed", 2) != nullptr; });
  int32_t led = -1;
  for (int32_t p = 0; p < 3; ++p)
    if (partition_of(image, "missed", p)->leader == node_id{cut_off}) led = p;
  REQUIRE(led >= 0);
  // Nothing reached it: every send to it failed at once, and each of its heartbeats since asked
  // for a full state that vanished too.
  CHECK_FALSE(h.hosts(cut_off, topic_partition{"missed", led}));

  link_faults::instance().clear_all();
  for (int32_t p = 0; p < 3; ++p) {
    const auto* state = partition_of(image, "missed", p);
    REQUIRE(h.eventually([&] {
      return replicas_agree(h, topic_partition{"missed", p}, {1, 2, 3}, state->leader.value(),
                            state->leader_epoch.value());
    }));
  }
  CHECK(h.produce(cut_off, topic_partition{"missed", led}, batch_of(1)));
}
