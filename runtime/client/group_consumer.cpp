#include "runtime/client/group_consumer.hpp"

#include <algorithm>

namespace capstan::client {

namespace {

using clock = std::chrono::steady_clock;

// How often a member polling during a join looks whether the join has ended.
constexpr int32_t join_check_ms = 100;

// Answers that end a membership's generation: the partitions are lost, and the member joins again.
bool membership_gone(errc e) {
  return e == errc::illegal_generation || e == errc::unknown_member_id;
}

std::vector<topic_partition_key> as_list(const std::set<topic_partition_key>& s) {
  return {s.begin(), s.end()};
}

void notify(const std::function<void(const std::vector<topic_partition_key>&)>& f,
            const std::vector<topic_partition_key>& tps) {
  if (f && !tps.empty()) f(tps);
}

topic_partitions by_topic(const std::set<topic_partition_key>& tps) {
  topic_partitions out;
  for (const auto& tp : tps) out[tp.topic].push_back(tp.partition);
  return out;
}

} // namespace

result<std::unique_ptr<group_consumer>> group_consumer::create(cluster_client& client, client_config config,
                                                               std::string group) {
  if (group.empty()) return make_error(errc::invalid_config, "a group consumer needs a group id");
  if (config.session_timeout_ms <= 0 || config.heartbeat_interval_ms <= 0 ||
      config.max_poll_interval_ms <= 0 || config.auto_commit_interval_ms <= 0)
    return make_error(errc::invalid_config,
                      "session.timeout.ms, heartbeat.interval.ms, max.poll.interval.ms and "
                      "auto.commit.interval.ms must be positive");
  if (config.heartbeat_interval_ms >= config.session_timeout_ms)
    return make_error(errc::invalid_config, "heartbeat.interval.ms (" + std::to_string(config.heartbeat_interval_ms) +
                                                ") must be below session.timeout.ms (" +
                                                std::to_string(config.session_timeout_ms) + ")");
  if (config.partition_assignment_strategy.empty())
    return make_error(errc::invalid_config, "partition.assignment.strategy is empty; name one of " +
                                                assignor_names());
  std::vector<const assignor*> assignors;
  for (const auto& name : config.partition_assignment_strategy) {
    const auto* a = find_assignor(name);
    if (!a)
      return make_error(errc::invalid_config, "partition.assignment.strategy: no assignor '" + name +
                                                  "'; there are " + assignor_names());
    assignors.push_back(a);
  }
  return std::unique_ptr<group_consumer>(
      new group_consumer(client, std::move(config), std::move(group), std::move(assignors)));
}

group_consumer::group_consumer(cluster_client& client, client_config config, std::string group,
                               std::vector<const assignor*> assignors)
    : client_(client), config_(std::move(config)), group_(std::move(group)), assignors_(std::move(assignors)),
      inner_(client_, config_, group_), last_poll_(clock::now()) {
  heartbeats_ = std::thread([this] { heartbeat_loop(); });
}

group_consumer::~group_consumer() {
  (void)close();
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (heartbeats_.joinable()) heartbeats_.join();
}

void group_consumer::subscribe(std::vector<std::string> topics, rebalance_listener listener) {
  std::sort(topics.begin(), topics.end());
  topics.erase(std::unique(topics.begin(), topics.end()), topics.end());
  topics_ = std::move(topics);
  pattern_.reset();
  resubscribed(std::move(listener));
}

status group_consumer::subscribe_matching(const std::string& pattern, rebalance_listener listener) {
  std::regex re;
  try {
    re.assign(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return make_error(errc::invalid_config, "'" + pattern + "' is not a regular expression: " + e.what());
  }
  pattern_ = std::move(re);
  topics_.clear();
  resubscribed(std::move(listener));
  return {};
}

// A new subscription: its topics are looked up and the group joined again at the next poll.
void group_consumer::resubscribed(rebalance_listener listener) {
  listener_ = std::move(listener);
  next_metadata_check_ = clock::now();
  std::lock_guard lock(mu_);
  rejoin_needed_ = true;
}

bool group_consumer::cooperative() const {
  std::lock_guard lock(mu_);
  const auto* chosen = find_assignor(protocol_);
  if (chosen) return chosen->protocol == rebalance_protocol::cooperative;
  // Before a generation chose one: cooperative only if every assignor offered is (Kafka's rule).
  return std::all_of(assignors_.begin(), assignors_.end(),
                     [](const assignor* a) { return a->protocol == rebalance_protocol::cooperative; });
}

group_member_ref group_consumer::member_ref() const {
  std::lock_guard lock(mu_);
  return group_member_ref{member_id_, config_.group_instance_id, generation_};
}

std::vector<topic_partition_key> group_consumer::assignment() const { return as_list(owned_); }

int32_t group_consumer::generation() const {
  std::lock_guard lock(mu_);
  return generation_;
}

std::string group_consumer::member_id() const {
  std::lock_guard lock(mu_);
  return member_id_;
}

// The subscribed topics as the cluster has them now, with their partition counts in `counts_`.
std::vector<std::string> group_consumer::subscribed_topics() {
  if (!pattern_) return topics_;
  auto all = client_.list_topics();
  if (!all) return topics_; // keep the last match until the cluster answers
  std::vector<std::string> matched;
  for (const auto& t : *all)
    if (std::regex_match(t, *pattern_)) matched.push_back(t);
  std::sort(matched.begin(), matched.end());
  return matched;
}

void group_consumer::maybe_refresh_subscription() {
  const auto now = clock::now();
  if (now < next_metadata_check_) return;
  next_metadata_check_ = now + std::chrono::milliseconds(config_.metadata_max_age_ms);
  auto topics = subscribed_topics();
  std::set<std::string> watched(topics.begin(), topics.end());
  watched.insert(group_topics_.begin(), group_topics_.end());
  partition_counts counts;
  if (!watched.empty()) {
    auto md = client_.metadata({watched.begin(), watched.end()});
    if (!md) return;
    for (const auto& [name, t] : md->topics) counts[name] = static_cast<int32_t>(t.partitions.size());
  }
  if (topics == topics_ && counts == counts_) return;
  topics_ = std::move(topics);
  counts_ = std::move(counts);
  std::lock_guard lock(mu_);
  rejoin_needed_ = true;
}

result<size_t> group_consumer::poll_each(std::chrono::milliseconds timeout,
                                         const std::function<void(const record_ref&)>& visit,
                                         size_t max_records) {
  {
    std::lock_guard lock(mu_);
    last_poll_ = clock::now();
    if (phase_ == phase::closed) return make_error(errc::invalid_request, "the consumer is closed");
  }
  auto deadline = clock::now() + timeout;
  for (;;) {
    maybe_refresh_subscription();
    clock::duration waited{};
    auto stable = ensure_active(waited);
    deadline += waited;
    if (!stable) return stable.err();
    if (*stable) maybe_auto_commit();
    {
      std::lock_guard lock(mu_);
      last_poll_ = clock::now();
      if (*stable && rejoin_needed_) continue;
    }
    // A slice at a time, so that a rebalance the heartbeats learn of is joined promptly, and
    // the end of a join under way is taken up soon.
    const auto remaining = std::max(deadline - clock::now(), clock::duration::zero());
    const auto slice = std::min<clock::duration>(
        remaining, std::chrono::milliseconds(*stable ? config_.fetch_max_wait_ms
                                                     : std::min(config_.fetch_max_wait_ms, join_check_ms)));
    if (owned_.empty()) {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, slice, [&] { return rejoin_needed_ || stopping_; });
    } else {
      auto n = inner_.poll_each(std::chrono::duration_cast<std::chrono::milliseconds>(slice), visit, max_records);
      if (!n) return n.err();
      if (*n > 0) return n;
    }
    if (clock::now() >= deadline) return size_t{0};
  }
}

result<bool> group_consumer::ensure_active(clock::duration& waited) {
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (fatal_) return *fatal_;
    }
    if (join_.valid()) {
      // A cooperative member keeps what it owns while it joins (KIP-429): it polls them.
      const bool can_poll = !owned_.empty() && cooperative();
      if (can_poll && join_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return false;
      const auto since = clock::now();
      join_.wait();
      waited += clock::now() - since;
      if (auto s = finish_join(join_.get()); !s) return s.err();
      continue;
    }
    {
      std::lock_guard lock(mu_);
      if (!rejoin_needed_ && !lost_ && phase_ == phase::stable) return true;
    }
    if (topics_.empty() && !pattern_) return make_error(errc::invalid_request, "subscribe() before poll()");
    start_join();
  }
}

void group_consumer::give_up_owned(bool lost) {
  const auto owned = as_list(owned_);
  if (lost) {
    notify(listener_.on_lost, owned);
  } else {
    if (config_.enable_auto_commit) (void)commit_as_member();
    notify(listener_.on_revoked, owned);
  }
  owned_.clear();
  inner_.set_assignment({});
}

// Gives up what the coming join requires (everything when the membership was lost or the
// rebalance is eager), then sends the JoinGroup, and the SyncGroup after it, from a thread of
// their own.
void group_consumer::start_join() {
  bool lost = false;
  join_group_request req;
  {
    std::lock_guard lock(mu_);
    lost = std::exchange(lost_, false);
    rejoin_needed_ = false;
    phase_ = phase::unjoined;
    synced_.reset();
    req.member_id = member_id_;
  }
  if (lost) give_up_owned(true);
  else if (!cooperative() && !owned_.empty()) give_up_owned(false);

  req.group_instance_id = config_.group_instance_id;
  req.client_id = config_.client_id;
  req.session_timeout_ms = config_.session_timeout_ms;
  req.rebalance_timeout_ms = config_.max_poll_interval_ms;
  req.protocol_type = std::string(consumer_protocol_type);
  consumer_subscription sub{topics_, {}, by_topic(owned_), generation()};
  const auto metadata = encode_subscription(sub);
  for (const auto* a : assignors_) req.protocols.push_back(group_protocol{std::string(a->name), metadata});
  join_ = std::async(std::launch::async, [this, req = std::move(req)]() mutable { return join_and_sync(std::move(req)); });
}

// Off the polling thread: it reads only `req`, the client and what never changes, and tells the
// heartbeat thread of a completed sync.
group_consumer::join_outcome group_consumer::join_and_sync(join_group_request req) {
  join_outcome out{client_.join_group(group_, req), std::nullopt, {}, {}};
  if (!out.joined || out.joined->error != errc::none) return out;
  const auto& joined = *out.joined;
  sync_group_request sync{joined.member_id, config_.group_instance_id, joined.generation, {}};
  if (joined.leader == joined.member_id) sync.assignments = leader_assign(joined, out);
  out.synced = client_.sync_group(group_, sync);
  if (*out.synced && (*out.synced)->error == errc::none) {
    std::lock_guard lock(mu_);
    synced_ = group_member_ref{joined.member_id, config_.group_instance_id, joined.generation};
  }
  return out;
}

// A failure the group recovers from by another join. Kafka's rules: a rebalance that began
// meanwhile keeps the generation, so that a cooperative member's claims to what it owns still
// count; a fenced generation or an unknown member ends the membership, and what was owned is
// lost.
void group_consumer::rejoin_after(errc why) {
  std::lock_guard lock(mu_);
  rejoin_needed_ = true;
  if (!membership_gone(why)) return;
  lost_ = true;
  generation_ = -1;
  if (why == errc::unknown_member_id) member_id_.clear();
}

status group_consumer::finish_join(join_outcome outcome) {
  {
    std::lock_guard lock(mu_);
    synced_.reset();
  }
  if (!outcome.joined) return outcome.joined.err();
  const auto& joined = *outcome.joined;
  switch (joined.error) {
  case errc::none:
    break;
  case errc::member_id_required: {
    std::lock_guard lock(mu_);
    member_id_ = joined.member_id;
    rejoin_needed_ = true;
    return {};
  }
  case errc::unknown_member_id:
  case errc::rebalance_in_progress:
    rejoin_after(joined.error);
    return {};
  default:
    return make_error(joined.error, "joining group '" + group_ + "': " + joined.message);
  }
  {
    std::lock_guard lock(mu_);
    member_id_ = joined.member_id;
    generation_ = joined.generation;
    protocol_ = joined.protocol_name;
  }
  if (joined.leader == joined.member_id) {
    group_topics_ = std::move(outcome.group_topics);
    counts_ = std::move(outcome.counts);
  } else {
    group_topics_.clear();
    std::erase_if(counts_, [&](const auto& c) { return !std::binary_search(topics_.begin(), topics_.end(), c.first); });
  }
  const auto& synced = *outcome.synced;
  if (!synced) return synced.err();
  switch (synced->error) {
  case errc::none:
    break;
  case errc::rebalance_in_progress:
  case errc::illegal_generation:
  case errc::unknown_member_id:
    rejoin_after(synced->error);
    return {};
  default:
    return make_error(synced->error, "syncing group '" + group_ + "': " + synced->message);
  }
  auto assigned = decode_assignment(synced->assignment);
  if (!assigned) return assigned.err();
  apply_assignment(*assigned, cooperative());
  return {};
}

std::vector<member_assignment> group_consumer::leader_assign(const join_group_response& joined,
                                                             join_outcome& out) const {
  std::vector<assignor_member> members;
  std::set<std::string> topics;
  for (const auto& m : joined.members) {
    // A member whose metadata does not parse subscribes to nothing and is assigned nothing.
    auto sub = decode_subscription(m.metadata);
    members.push_back(assignor_member{m.member_id, m.group_instance_id, sub ? std::move(*sub) : consumer_subscription{}});
    topics.insert(members.back().subscription.topics.begin(), members.back().subscription.topics.end());
  }
  partition_counts counts;
  if (!topics.empty())
    if (auto md = client_.metadata({topics.begin(), topics.end()}))
      for (const auto& [name, t] : md->topics) counts[name] = static_cast<int32_t>(t.partitions.size());
  const auto* chosen = find_assignor(joined.protocol_name);
  group_assignment plan = chosen ? chosen->assign(members, counts) : group_assignment{};
  std::vector<member_assignment> assignments;
  for (const auto& m : members)
    assignments.push_back(member_assignment{m.member_id, encode_assignment({plan[m.member_id], {}})});
  // The leader watches every member's topics, so that a partition added to any rebalances.
  out.group_topics = std::move(topics);
  out.counts = std::move(counts);
  return assignments;
}

void group_consumer::apply_assignment(const consumer_assignment& a, bool coop) {
  std::set<topic_partition_key> assigned;
  for (const auto& [topic, partitions] : a.partitions) {
    // Only what this member subscribes to: an assignor elsewhere may know better topics.
    if (!pattern_ && !std::binary_search(topics_.begin(), topics_.end(), topic)) continue;
    if (pattern_ && !std::regex_match(topic, *pattern_)) continue;
    for (auto p : partitions) assigned.insert(topic_partition_key{topic, p});
  }
  std::vector<topic_partition_key> revoked, added;
  std::set_difference(owned_.begin(), owned_.end(), assigned.begin(), assigned.end(), std::back_inserter(revoked));
  std::set_difference(assigned.begin(), assigned.end(), owned_.begin(), owned_.end(), std::back_inserter(added));
  {
    std::lock_guard lock(mu_);
    phase_ = phase::stable;
  }
  if (!revoked.empty()) {
    if (config_.enable_auto_commit) (void)commit_as_member();
    notify(listener_.on_revoked, revoked);
  }
  owned_ = std::move(assigned);
  inner_.set_assignment(as_list(owned_));
  // Where the group left off; a failure here leaves those partitions to start at the end.
  (void)inner_.seek_unpositioned_to_committed(config_.auto_offset_reset == offset_reset::earliest);
  notify(listener_.on_assigned, added);
  next_auto_commit_ = clock::now() + std::chrono::milliseconds(config_.auto_commit_interval_ms);
  if (coop && !revoked.empty()) {
    // What was revoked goes to its new member in the next generation.
    std::lock_guard lock(mu_);
    rejoin_needed_ = true;
  }
}

status group_consumer::commit_as_member() {
  auto s = inner_.commit(member_ref());
  // During a join the join under way is the rejoin such an answer calls for.
  if (!s && !join_.valid() && (membership_gone(s.code()) || s.code() == errc::rebalance_in_progress)) {
    std::lock_guard lock(mu_);
    rejoin_needed_ = true;
  }
  return s;
}

void group_consumer::maybe_auto_commit() {
  if (!config_.enable_auto_commit || owned_.empty() || clock::now() < next_auto_commit_) return;
  next_auto_commit_ = clock::now() + std::chrono::milliseconds(config_.auto_commit_interval_ms);
  (void)commit_as_member();
}

status group_consumer::commit() {
  if (owned_.empty()) return {};
  return commit_as_member();
}

status group_consumer::close() {
  {
    std::lock_guard lock(mu_);
    if (phase_ == phase::closed) return {};
  }
  status result;
  bool member = false;
  {
    std::lock_guard lock(mu_);
    // A cooperative member joining still owns its partitions in the generation it had.
    member = phase_ == phase::stable || join_.valid();
  }
  if (member && !owned_.empty()) {
    if (config_.enable_auto_commit) result = commit_as_member();
    notify(listener_.on_revoked, as_list(owned_));
  }
  owned_.clear();
  inner_.set_assignment({});
  const auto me = member_ref();
  {
    std::lock_guard lock(mu_);
    phase_ = phase::closed;
  }
  cv_.notify_all();
  // A static member stays, so that coming back within its session timeout moves nothing.
  if (!me.member_id.empty() && config_.group_instance_id.empty()) {
    auto left = client_.leave_group(group_, me);
    if (result && !left && !membership_gone(left.code())) result = left;
  }
  // The leave answered a join under way; what it answered no longer matters.
  if (join_.valid()) join_.wait();
  return result;
}

void group_consumer::heartbeat_loop() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait_for(lock, std::chrono::milliseconds(config_.heartbeat_interval_ms), [&] { return stopping_; });
    if (stopping_) return;
    // A member that learnt of a rebalance goes on heartbeating until its poll joins, as Kafka's
    // does: one that processes slowly meanwhile keeps its place for the rebalance timeout, not
    // just the session timeout.
    const bool poll_overdue = clock::now() - last_poll_ > std::chrono::milliseconds(config_.max_poll_interval_ms);
    // Joined and synced in the background, the member stays in the group while its caller is
    // slow to take the assignment up, as Kafka's heartbeat thread, which finishes the sync
    // itself, keeps it.
    if (phase_ != phase::stable && synced_ && !poll_overdue) {
      const auto me = *synced_;
      lock.unlock();
      // What it answers is for the poll to act on: the heartbeats after it ask again.
      (void)client_.heartbeat(group_, me);
      lock.lock();
      continue;
    }
    if (phase_ != phase::stable) continue;
    const group_member_ref me{member_id_, config_.group_instance_id, generation_};
    if (poll_overdue) {
      // Kafka's "consumer poll timeout has expired": the member gives its partitions up so the
      // group can go on without it; the next poll joins again.
      phase_ = phase::unjoined;
      lost_ = true;
      rejoin_needed_ = true;
      generation_ = -1;
      if (config_.group_instance_id.empty()) {
        member_id_.clear();
        lock.unlock();
        (void)client_.leave_group(group_, me);
        lock.lock();
      }
      continue;
    }
    lock.unlock();
    const auto beat = client_.heartbeat(group_, me);
    lock.lock();
    // An answer to a generation since replaced says nothing about the current one.
    if (beat || generation_ != me.generation || member_id_ != me.member_id) continue;
    if (beat.code() == errc::rebalance_in_progress) {
      rejoin_needed_ = true;
    } else if (membership_gone(beat.code())) {
      lost_ = true;
      rejoin_needed_ = true;
      generation_ = -1;
      if (beat.code() == errc::unknown_member_id) member_id_.clear();
    } else if (beat.code() == errc::fenced_instance_id) {
      fatal_ = beat.err();
    }
    if (rejoin_needed_) cv_.notify_all();
  }
}

} // namespace capstan::client
