// The controller quorum across actor systems: three quorum actors, each in its own actor system
// behind a node endpoint on 127.0.0.1, exchange Raft messages as Cap'n Proto frames through the
// middleman. Proposals are ProducerIds blocks, which apply only in log order (each must start at
// the image's next id), so an image's next producer id says how much of the log it applied.

#include <algorithm>
#include <functional>
#include <optional>
#include <thread>

#include <caf/all.hpp>
#include <catch2/catch.hpp>

#include "actors/controller/metadata/metadata_image.hpp"
#include "runtime/cluster/link_faults.hpp"
#include "tests/support/quorum_harness.hpp"

using namespace capstan;
using namespace capstan::test;
using capstan::controller::metadata_record;
using capstan::controller::producer_ids_record;

namespace {

std::vector<metadata_record> block(int64_t k) {
  return {producer_ids_record{k * 10, 10}};
}

int64_t next_id(quorum_harness& h, int id) {
  auto img = h.image(id);
  return img ? img->next_producer_id() : -1;
}

bool all_applied(quorum_harness& h, std::vector<int> ids, int64_t next) {
  for (int id : ids)
    if (next_id(h, id) != next) return false;
  return true;
}

int other_than(int a, int b = 0) {
  for (int i = 1; i <= 3; ++i)
    if (i != a && i != b) return i;
  return 0;
}

void cut_off(int id) {
  for (int i = 1; i <= 3; ++i)
    if (i != id) link_faults::instance().cut(node_id{id}, node_id{i});
}

int await_leader(quorum_harness& h, int not_this = 0) {
  int l = 0;
  REQUIRE(h.eventually([&] {
    l = h.leader();
    return l != 0 && l != not_this;
  }));
  return l;
}

// The member's status once messages sent to it before a cut have arrived: unchanged over a
// pause.
controller::quorum_status settled_status(quorum_harness& h, int id) {
  std::optional<controller::quorum_status> last;
  const bool settled = h.eventually([&] {
    auto s = h.status(id);
    if (!s) return false;
    const bool same = last && s->term == last->term && s->last_index == last->last_index &&
                      s->commit_index == last->commit_index;
    last = *s;
    if (!same) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return same;
  });
  REQUIRE(settled);
  return *last;
}

} // namespace

TEST_CASE("a controller quorum elects a leader and every member applies proposals in order",
          "[controller][quorum]") {
  quorum_harness h({});
  await_leader(h);
  uint64_t last = 0;
  for (int64_t k = 0; k < 20; ++k) {
    const auto index = h.commit(block(k));
    CHECK(index > last);
    last = index;
  }
  REQUIRE(h.eventually([&] { return all_applied(h, {1, 2, 3}, 200); }));
  const auto first = h.image(1);
  REQUIRE(first);
  for (int i = 2; i <= 3; ++i) CHECK(*h.image(i) == *first);
}

TEST_CASE("a controller drops a Raft frame that does not decode and keeps working",
          "[controller][quorum]") {
  quorum_harness h({});
  const int target = other_than(await_leader(h));
  // From another member's actor system, through the target's node endpoint, as a peer sends.
  auto& from = h.member(other_than(target));
  auto endpoint = from.system->remote_actor<node_endpoint_actor>(h.member(target).port);
  REQUIRE(endpoint);
  caf::anon_send(*endpoint, raft_atom_v, capnp_frame{});
  h.commit(block(0));
  REQUIRE(h.eventually([&] { return all_applied(h, {1, 2, 3}, 10); }));
}

TEST_CASE("the remaining controllers elect a new leader when the leader's system goes away",
          "[controller][quorum]") {
  quorum_harness h({});
  await_leader(h);
  for (int64_t k = 0; k < 5; ++k) h.commit(block(k));
  const int old_leader = await_leader(h);
  h.stop(old_leader);
  await_leader(h, old_leader);
  for (int64_t k = 5; k < 10; ++k) h.commit(block(k));
  const int a = other_than(old_leader);
  const int b = other_than(old_leader, a);
  REQUIRE(h.eventually([&] { return all_applied(h, {a, b}, 100); }));
}

TEST_CASE("a leader that resigns hands the quorum to a caught-up voter while it is still up",
          "[controller][quorum]") {
  quorum_harness h({});
  const int old_leader = await_leader(h);
  for (int64_t k = 0; k < 3; ++k) h.commit(block(k));
  const auto before = h.status(old_leader);
  REQUIRE(before);
  const auto follower_answer = h.resign(other_than(old_leader));
  REQUIRE(follower_answer);
  CHECK(*follower_answer == -1);

  const auto told = h.resign(old_leader);
  REQUIRE(told);
  REQUIRE(*told != -1);
  CHECK(*told != old_leader);
  // Healthy and up, the old leader would keep its leadership for ever: only the hand-over
  // moves it, to the voter it told, one term later.
  const int next = await_leader(h, old_leader);
  CHECK(next == *told);
  const auto after = h.status(next);
  REQUIRE(after);
  CHECK(after->term == before->term.next());
  h.commit(block(3));
  REQUIRE(h.eventually([&] { return all_applied(h, {1, 2, 3}, 40); }));
  const auto old_now = h.status(old_leader);
  REQUIRE(old_now);
  CHECK(old_now->role == raft::role::follower);
}

TEST_CASE("a restarted controller recovers its term, vote, log and image from its data dir",
          "[controller][quorum]") {
  quorum_harness_options o;
  o.snapshot_entries = 8;
  quorum_harness h(o);
  await_leader(h);
  for (int64_t k = 0; k < 12; ++k) h.commit(block(k));
  const int r = other_than(await_leader(h));
  REQUIRE(h.eventually([&] { return all_applied(h, {r}, 120); }));
  // Cut off from before it stops until after it started, so what it holds afterwards comes
  // from its directory and nobody else.
  cut_off(r);
  const auto before = settled_status(h, r);
  h.stop(r);
  h.start(r);
  const auto after = h.status(r);
  REQUIRE(after);
  CHECK(after->term == before.term);
  CHECK(after->voted_for == before.voted_for);
  CHECK(after->last_index == before.last_index);
  CHECK(after->snapshot_index == before.snapshot_index);
  CHECK(after->snapshot_index.value() > 0);
  // The image comes back from the snapshot at once ...
  const auto img = h.image(r);
  REQUIRE(img);
  CHECK(img->next_producer_id() > 0);
  // ... and from the log once a leader tells it what is committed.
  link_faults::instance().clear_all();
  REQUIRE(h.eventually([&] { return all_applied(h, {r}, 120); }));
  h.commit(block(12));
  REQUIRE(h.eventually([&] { return all_applied(h, {1, 2, 3}, 130); }));
}

TEST_CASE("a controller cut off commits nothing and catches up from a snapshot once the cut heals",
          "[controller][quorum]") {
  quorum_harness_options o;
  o.snapshot_entries = 5;
  quorum_harness h(o);
  await_leader(h);
  h.commit(block(0));
  const int f = other_than(await_leader(h));
  const int a = other_than(f);
  const int b = other_than(f, a);
  REQUIRE(h.eventually([&] { return all_applied(h, {f}, 10); }));
  cut_off(f);
  const auto cut_at = settled_status(h, f);
  for (int64_t k = 1; k < 30; ++k) h.commit(block(k));
  REQUIRE(h.eventually([&] { return all_applied(h, {a, b}, 300); }));
  // The cut-off member learnt of none of it.
  const auto during = h.status(f);
  REQUIRE(during);
  CHECK(during->commit_index == cut_at.commit_index);
  CHECK(during->last_index == cut_at.last_index);
  CHECK(next_id(h, f) == 10);
  // Both others compacted past everything the cut-off member holds: only a snapshot catches it
  // up, whichever of them leads.
  REQUIRE(h.eventually([&] {
    for (int id : {a, b}) {
      auto s = h.status(id);
      if (!s || s->snapshot_index <= during->last_index) return false;
    }
    return true;
  }));
  link_faults::instance().clear_all();
  REQUIRE(h.eventually([&] { return all_applied(h, {f}, 300); }));
  const auto healed = h.status(f);
  REQUIRE(healed);
  CHECK(healed->snapshot_index > during->last_index);
  CHECK(*h.image(f) == *h.image(a));
}

namespace {

// Asks the leader for a voter change until it is neither redirected nor told to wait (bounded).
propose_reply change_voters(quorum_harness& h,
                            const std::function<caf::expected<propose_reply>(int)>& ask) {
  propose_reply last;
  last.message = "no leader";
  const bool ended = h.eventually(
      [&] {
        const int l = h.leader();
        if (l == 0) return false;
        auto r = ask(l);
        if (!r) return false;
        last = *r;
        if (r->code == errc::not_controller || r->code == errc::request_timed_out) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
          return false;
        }
        return true;
      },
      std::chrono::seconds(30));
  INFO(last.message);
  REQUIRE(ended);
  return last;
}

std::vector<node_id> ids(std::initializer_list<int> l) {
  std::vector<node_id> out;
  for (int i : l) out.push_back(node_id{i});
  return out;
}

bool voters_are(quorum_harness& h, const std::vector<int>& members, std::vector<node_id> want) {
  for (int id : members) {
    auto s = h.status(id);
    if (!s || s->voters != want) return false;
  }
  return true;
}

} // namespace

TEST_CASE("a lost controller is replaced: a learner becomes a voter and the lost one is removed",
          "[controller][quorum][voters]") {
  quorum_harness_options o;
  o.members = 4;
  o.voters = 3;
  quorum_harness h(o);
  const int first = await_leader(h);
  for (int64_t k = 0; k < 5; ++k) h.commit(block(k));
  auto s4 = h.status(4);
  REQUIRE(s4);
  CHECK(s4->voters == ids({1, 2, 3}));
  CHECK(s4->role == raft::role::follower);

  // A voter's machine is lost for good; member 4 takes its place.
  const int lost = first == 1 ? 2 : 1;
  const int second = 6 - first - lost; // the third bootstrap voter
  h.stop(lost);
  auto added = change_voters(h, [&](int at) { return h.add_voter(at, 4); });
  INFO(added.message);
  REQUIRE(added.code == errc::none);
  REQUIRE(h.eventually([&] { return voters_are(h, {first, second, 4}, ids({1, 2, 3, 4})); }));
  for (int64_t k = 5; k < 10; ++k) h.commit(block(k));
  REQUIRE(h.eventually([&] { return all_applied(h, {first, second, 4}, 100); }));

  auto removed = change_voters(h, [&](int at) { return h.remove_voter(at, lost); });
  INFO(removed.message);
  REQUIRE(removed.code == errc::none);
  std::vector<node_id> left = ids({first, second, 4});
  std::sort(left.begin(), left.end());
  REQUIRE(h.eventually([&] { return voters_are(h, {first, second, 4}, left); }));

  // With {first, second, 4} another voter may fail: the two left commit. Under the bootstrap set
  // two of {1, 2, 3} would have been gone.
  h.stop(first);
  for (int64_t k = 10; k < 15; ++k) h.commit(block(k));
  REQUIRE(h.eventually([&] { return all_applied(h, {second, 4}, 150); }));

  // Everything restarts from its data dir: the voters are the log's, not the bootstrap ones.
  h.stop(second);
  h.stop(4);
  h.start(first);
  h.start(second);
  h.start(4);
  REQUIRE(h.eventually([&] { return voters_are(h, {first, second, 4}, left); }));
  h.commit(block(15));
  REQUIRE(h.eventually([&] { return all_applied(h, {first, second, 4}, 160); }));
}

TEST_CASE("voters outside the bootstrap set reach each other and a new learner locates them",
          "[controller][quorum][voters]") {
  // Members know the bootstrap voters' addresses alone, as nodes started with one
  // --controller-quorum do. The quorum moves wholly onto 4 and 5, then 6 joins: its leader is
  // no bootstrap voter, so 6 answers it only once it located it through 1, 2 or 3.
  quorum_harness_options o;
  o.members = 6;
  o.voters = 3;
  o.bootstrap_addresses_only = true;
  quorum_harness h(o);
  await_leader(h);
  h.commit(block(0));
  for (int id : {4, 5}) {
    auto added = change_voters(h, [&](int at) { return h.add_voter(at, id); });
    INFO(added.message);
    REQUIRE(added.code == errc::none);
  }
  for (int id : {1, 2, 3}) {
    auto removed = change_voters(h, [&](int at) { return h.remove_voter(at, id); });
    INFO(removed.message);
    REQUIRE(removed.code == errc::none);
  }
  REQUIRE(h.eventually([&] { return voters_are(h, {4, 5}, ids({4, 5})); }));
  // A removed leader hands over once its removal commits; until then it may still lead.
  REQUIRE(h.eventually([&] {
    const int l = h.leader();
    return l == 4 || l == 5;
  }));

  auto added = change_voters(h, [&](int at) { return h.add_voter(at, 6); });
  INFO(added.message);
  REQUIRE(added.code == errc::none);
  h.commit(block(1));
  REQUIRE(h.eventually([&] { return all_applied(h, {4, 5, 6}, 20); }));

  // After every member restarts, 4, 5 and 6 find each other from their logs' voter set alone.
  for (int id = 1; id <= 6; ++id) h.stop(id);
  for (int id : {4, 5, 6}) h.start(id);
  REQUIRE(h.eventually([&] { return voters_are(h, {4, 5, 6}, ids({4, 5, 6})); }));
  h.commit(block(2));
  REQUIRE(h.eventually([&] { return all_applied(h, {4, 5, 6}, 30); }));
}

TEST_CASE("a voter change is refused with a named error when it cannot be made",
          "[controller][quorum][voters]") {
  quorum_harness h({});
  const int l = await_leader(h);
  h.commit(block(0));
  auto dup = h.add_voter(l, other_than(l));
  REQUIRE(dup);
  CHECK(dup->code == errc::duplicate_voter);
  auto missing = h.remove_voter(l, 9);
  REQUIRE(missing);
  CHECK(missing->code == errc::voter_not_found);
  auto at_follower = h.remove_voter(other_than(l), l);
  REQUIRE(at_follower);
  CHECK(at_follower->code == errc::not_controller);
  CHECK(at_follower->leader == l);
}
