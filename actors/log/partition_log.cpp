#include "actors/log/partition_log.hpp"

#include <algorithm>
#include <iterator>
#include <limits>
#include <span>
#include <utility>

#include <spdlog/spdlog.h>

#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/record_batch_view.hpp"

namespace capstan {

namespace {

// A validated batch of an append and where it sits in the request's buffer.
struct append_frame {
  size_t pos = 0;
  record_batch_view view;
};

} // namespace

partition_log::partition_log(std::string log_name, log_config config,
                             std::vector<log_segment> segments, offset recovery_point,
                             leader_epoch_cache epochs, producer_state producers, timestamp_ms now,
                             std::shared_ptr<unsynced_partition_dir> unsynced_dir)
    : log_name_(std::move(log_name)), unsynced_dir_(std::move(unsynced_dir)),
      config_(std::move(config)), epochs_(std::move(epochs)), producers_(std::move(producers)) {
  for (auto& s : segments) {
    s.slot->unsynced_dir = unsynced_dir_;
    segments_.emplace(s.meta.base, std::move(s));
  }
  log_start_ = segments_.begin()->first;
  log_end_ = active().meta.next;
  recovery_point_ = std::min(recovery_point, log_end_);
  last_flush_ms_ = last_retention_ms_ = last_compaction_ms_ = last_producer_expiry_ms_ = now;
  // As Kafka's loadFromSnapshot: a producer that expired while the log was closed (or since its
  // snapshot, kept at close) does not come back.
  producers_.expire(now, config_.producer_id_expiration_ms);
}

log_segment& partition_log::add_segment(offset base, timestamp_ms now) {
  auto slot = std::make_shared<segment_slot>(segment_slot{nullptr, log_name_, now, unsynced_dir_});
  return segments_
      .insert_or_assign(
          base, log_segment{std::move(slot), segment_meta{base, base, 0, no_timestamp, now}})
      .first->second;
}

result<append_plan> partition_log::append(append_request& req, timestamp_ms now) {
  const bool leader = req.origin == append_origin::leader;
  const batch_buffer& buf = buffer_of(req.batches);
  if (!buf.data || buf.size() == 0 || buf.end > buf.data->size())
    return make_error(errc::corrupt_message, "empty append");
  const bool compacted = config_.compacts();
  const auto max_batch_bytes = static_cast<size_t>(config_.max_message_bytes);

  // Validate every batch before touching anything: an append is all or nothing.
  bytes_view all = buf.view();
  // A leader checks produced CreateTimes against its clock: retention and time lookups trust
  // the max timestamps it stores (docs/storage.md, "Timestamps").
  std::optional<timestamp_bounds> bounds;
  if (leader)
    bounds = timestamp_bounds{now, config_.timestamp_before_max_ms, config_.timestamp_after_max_ms};
  std::vector<append_frame> frames;
  append_plan plan;
  auto& res = plan.result;
  offset next = log_end_;
  bool from_producer = false;
  // The partition's own rules for one batch, after its validation.
  auto accept = [&](const record_batch_view& view) -> status {
    if (leader && view.is_control())
      return make_error(errc::invalid_record, "clients may not send control batches");
    if (compacted && !view.is_control()) {
      bool keyless = false;
      view.for_each_record([&](const record_view& r) { keyless |= !r.key.has_value(); });
      if (keyless)
        return make_error(errc::invalid_record,
                          "compacted topic cannot accept a record without a key");
    }
    if (!leader && view.base_offset() < next)
      return make_error(errc::offset_out_of_range,
                        "replicated batch at offset " + std::to_string(view.base_offset().value()) +
                            " does not follow the log end " + std::to_string(next.value()));
    from_producer |= view.producer_id() != no_producer_id;
    const size_t pos = static_cast<size_t>(view.data().data() - all.data());
    const offset base = leader ? next : view.base_offset();
    next = base + view.last_offset_delta() + 1;
    res.record_count += view.record_count();
    frames.push_back(append_frame{pos, view});
    return {};
  };
  const auto* validated = std::get_if<validated_batch>(&req.batches);
  if (leader && validated && validated->size() <= max_batch_bytes && validated->within(*bounds)) {
    // The gateway validated it (validated_batch.hpp): only the partition's rules are left.
    if (auto s = accept(validated->view()); !s) return s.err();
  } else {
    // Anything else is validated here in full; so is a validated batch that breaks the
    // partition's size or timestamp limits, which parse then names exactly.
    batch_sequence_reader reader(all, max_batch_bytes,
                                 leader ? batch_validation::produce : batch_validation::stored,
                                 bounds);
    for (;;) {
      auto b = reader.next();
      if (!b) return b.err();
      if (!*b) break;
      if (auto s = accept(**b); !s) return s.err();
    }
  }
  if (frames.empty()) return make_error(errc::corrupt_message, "no batch in append");

  std::optional<producer_append_info> checked;
  if (leader && from_producer) {
    // Kafka's rule since produce v3: one batch per partition, so a batch is checked against the
    // state as it is, not against its own predecessors in the same request.
    if (frames.size() != 1)
      return make_error(errc::invalid_record,
                        "a batch with a producer id must be the only batch of its produce");
    const auto& view = frames.front().view;
    auto check = producers_.check(producer_batch::of(view), producer_origin::client);
    if (!check) return check.err();
    if (check->duplicate) {
      const auto& original = *check->duplicate;
      spdlog::debug("{}: producer {} resent sequences {}..{}, answered with offset {}", log_name_,
                    view.producer_id(), original.first_sequence, original.last_sequence,
                    original.first_offset.value());
      plan.result = append_result{original.first_offset, original.last_offset, log_start_,
                                  view.record_count(), true};
      return plan;
    }
    checked = check->append;
  }

  if (leader) {
    plan.save_epochs = epochs_.assign(req.epoch, log_end_);
    offset base = log_end_;
    for (const auto& [pos, view] : frames) {
      std::span<uint8_t> mutable_batch{buf.data->data() + buf.begin + pos, view.size_bytes()};
      set_base_offset(mutable_batch, base);
      set_partition_leader_epoch(mutable_batch, req.epoch);
      base = base + view.last_offset_delta() + 1;
    }
  } else {
    for (const auto& [pos, view] : frames)
      plan.save_epochs |= epochs_.assign(view.partition_leader_epoch(), view.base_offset());
  }
  res.first = frames.front().view.base_offset();
  res.last = next - 1;
  res.log_start = log_start_;
  log_end_ = next;
  unflushed_messages_ += res.record_count;
  plan.flush = unflushed_messages_ >= config_.flush_messages;

  // Split the sequence where the active segment must roll. Each producer's batch goes into the
  // producer state after a roll before it, so the roll's snapshot excludes it: a leader commits
  // `checked` (set iff its one batch has a producer id), a follower replays.
  auto add_run = [&](size_t run_begin, size_t run_end) {
    if (run_begin == run_end) return;
    plan.steps.emplace_back(segment_write{
        active().slot, batch_buffer{buf.data, buf.begin + run_begin, buf.begin + run_end}});
  };
  size_t run_begin = frames.front().pos;
  size_t run_end = run_begin;
  for (const auto& [pos, view] : frames) {
    const auto size = static_cast<int64_t>(view.size_bytes());
    if (should_roll(active().meta, size, view.last_offset(), now, config_)) {
      add_run(run_begin, run_end);
      run_begin = pos;
      auto sealed = active().slot;
      const offset base = view.base_offset();
      auto flushed = take_unflushed(base);
      auto& created = add_segment(base, now);
      auto snapshot = std::make_shared<producer_state>(producers_);
      snapshot->set_end_offset(base);
      plan.steps.emplace_back(segment_roll{std::move(sealed), created.slot, base,
                                           std::move(snapshot), std::move(flushed)});
    }
    if (view.producer_id() != no_producer_id) {
      if (checked)
        producers_.commit(*checked, view.base_offset());
      else
        producers_.replay(view);
    }
    auto& meta = active().meta;
    meta.size_bytes = static_cast<int64_t>(batch_format::align_up(meta.size_bytes)) + size;
    meta.next = view.last_offset() + 1;
    meta.max_timestamp = std::max(meta.max_timestamp, view.max_timestamp());
    run_end = pos + view.size_bytes();
  }
  add_run(run_begin, run_end);
  return plan;
}

result<read_start> partition_log::start_read(const read_request& req) const {
  if (req.from < log_start_ || req.from > log_end_)
    return make_error(errc::offset_out_of_range, "offset " + std::to_string(req.from.value()) +
                                                     " is outside " +
                                                     std::to_string(log_start_.value()) + ".." +
                                                     std::to_string(log_end_.value()));
  if (req.from == log_end_ || req.from >= req.upto || req.max_bytes <= 0) return read_start{};
  auto floor = segments_.upper_bound(req.from);
  return read_start{false, floor == segments_.begin() ? floor->first : std::prev(floor)->first};
}

segment_ref partition_log::segment_at(offset base) const {
  auto it = segments_.find(base);
  return it == segments_.end() ? nullptr : it->second.slot;
}

std::optional<offset> partition_log::next_segment(offset base, offset upto) const {
  auto next = segments_.upper_bound(base);
  if (next != segments_.end() && next->first < upto) return next->first;
  return std::nullopt;
}

std::optional<offset> partition_log::segment_with_timestamp(offset from,
                                                            timestamp_ms target) const {
  auto it = segments_.lower_bound(from);
  while (it != segments_.end() &&
         (it->second.meta.max_timestamp == no_timestamp || it->second.meta.max_timestamp < target))
    ++it;
  if (it == segments_.end()) return std::nullopt;
  return it->first;
}

flush_plan partition_log::plan_flush() {
  flush_plan plan{log_end_, generation_, {}};
  // Only segments with data past the recovery point, or cut since their last flush. An empty
  // one (a new log's, or the active segment a roll began) has nothing to make durable: its
  // creation is synced with its first data (segment::flush syncs the directory then), and were
  // it lost to an OS crash the log would end where it does now. Flushing it every time made
  // closing an idle replica cost three fsyncs.
  plan.segments = take_unflushed(offset{std::numeric_limits<int64_t>::max()});
  unflushed_messages_ = 0;
  return plan;
}

std::vector<segment_ref> partition_log::take_unflushed(offset upto) {
  std::vector<segment_ref> out;
  for (auto it = segments_.begin(); it != segments_.end() && it->first < upto; ++it) {
    auto& e = it->second;
    const bool cut = std::exchange(e.cut_unflushed, false);
    if (e.meta.next > recovery_point_ || cut) out.push_back(e.slot);
  }
  return out;
}

void partition_log::raise_recovery_point(offset target, uint64_t generation) {
  if (generation == generation_ && target > recovery_point_) recovery_point_ = target;
}

retention_plan partition_log::plan_retention(timestamp_ms now) {
  retention_plan plan;
  // A compaction in flight reads the segments retention would delete (compact,delete): retention
  // waits for it, as Kafka's cleaner deletes and compacts a log in turn.
  if (compacting_) {
    plan.log_start = log_start_;
    return plan;
  }
  last_retention_ms_ = now;
  const size_t n = segments_to_delete(metas(), now, config_);
  for (size_t i = 0; i < n; ++i) {
    auto it = segments_.begin();
    plan.deleted.push_back(std::move(it->second));
    segments_.erase(it);
  }
  if (n > 0) {
    ++generation_;
    log_start_ = std::max(log_start_, segments_.begin()->first);
    plan.save_epochs = epochs_.truncate_from_start(log_start_);
  }
  plan.log_start = log_start_;
  return plan;
}

std::vector<segment_ref> partition_log::drop_segments_from(offset first) {
  ++generation_;
  std::vector<segment_ref> dropped;
  for (auto it = segments_.lower_bound(first); it != segments_.end();) {
    dropped.push_back(it->second.slot);
    it = segments_.erase(it);
  }
  return dropped;
}

segment_ref partition_log::restart_at(offset to, timestamp_ms now) {
  log_start_ = to;
  return add_segment(to, now).slot;
}

void partition_log::active_truncated(const segment_meta& meta) {
  auto& active_seg = active();
  active_seg.cut_unflushed = true;
  auto& active_meta = active_seg.meta;
  active_meta.next = meta.next;
  active_meta.size_bytes = meta.size_bytes;
  active_meta.max_timestamp = meta.max_timestamp;
}

bool partition_log::truncated(offset end) {
  log_end_ = end;
  recovery_point_ = std::min(recovery_point_, end);
  cleaned_upto_ = std::min(cleaned_upto_, end);
  producers_.truncate_to(end);
  return epochs_.truncate_from_end(end);
}

bool partition_log::forget_history() {
  producers_ = producer_state{};
  return epochs_.clear();
}

background_work partition_log::due(timestamp_ms now, size_t& expired) {
  background_work work;
  work.retention =
    !compacting_ && now - last_retention_ms_ >= config_.retention_check_interval_ms;
  work.flush = unflushed_messages_ > 0 && now - last_flush_ms_ >= config_.flush_ms;
  work.compaction = !compacting_ && now - last_compaction_ms_ >= config_.cleaner_backoff_ms &&
                    should_compact(metas(), cleaned_upto_, config_);
  expired = 0;
  if (now - last_producer_expiry_ms_ >= producer_expiration_check_interval_ms) {
    last_producer_expiry_ms_ = now;
    expired = producers_.expire(now, config_.producer_id_expiration_ms);
  }
  return work;
}

std::optional<compaction_plan> partition_log::plan_compaction(timestamp_ms now) {
  last_compaction_ms_ = now;
  if (!config_.compacts() || compacting_ || segments_.size() < 2)
    return std::nullopt;
  compacting_ = true;
  compaction_plan plan;
  for (auto it = segments_.begin(); std::next(it) != segments_.end(); ++it)
    plan.input.bases.push_back(it->first);
  plan.input.now = now;
  plan.input.delete_retention_ms = config_.delete_retention_ms;
  plan.dirty_end = std::prev(segments_.end())->first;
  plan.generation = generation_;
  return plan;
}

std::optional<compaction_selection> partition_log::select_compacted(const compaction_output& out,
                                                                    uint64_t generation) {
  compacting_ = false;
  if (generation != generation_) return std::nullopt;
  compaction_selection sel;
  for (const auto& cs : out.segments) {
    auto it = segments_.find(cs.base);
    // A segment with nothing removed stays as it is: swapping it would only cost I/O.
    if (it == segments_.end() || cs.records_removed == 0) continue;
    if (std::next(it) != segments_.end())
      sel.gaps.emplace_back(cs.next_after, std::next(it)->first);
    sel.segments.push_back(cs);
  }
  return sel;
}

segment_ref partition_log::install_compacted(offset base, segment_meta meta,
                                             std::shared_ptr<segment> seg) {
  auto& e = segments_.at(base);
  auto old = std::move(e.slot);
  meta.created_ms = e.meta.created_ms;
  e.meta = meta;
  e.slot = std::make_shared<segment_slot>(
      segment_slot{std::move(seg), log_name_, meta.created_ms, unsynced_dir_});
  return old;
}

void partition_log::compaction_installed(offset dirty_end) {
  ++generation_;
  cleaned_upto_ = std::max(cleaned_upto_, dirty_end);
}

log_info partition_log::info() const {
  log_info out{
      log_start_,    log_end_,        recovery_point_, 0, static_cast<int32_t>(segments_.size()),
      cleaned_upto_, leader_epoch{-1}};
  if (auto latest = epochs_.latest()) out.latest_epoch = latest->epoch;
  const auto& entries = epochs_.entries();
  for (auto e = entries.rbegin(); e != entries.rend(); ++e)
    if (e->start < log_end_) {
      out.last_written_epoch = e->epoch;
      break;
    }
  for (const auto& [base, e] : segments_) out.size_bytes += e.meta.size_bytes;
  return out;
}

std::vector<segment_ref> partition_log::slots() const {
  std::vector<segment_ref> out;
  out.reserve(segments_.size());
  for (const auto& [base, e] : segments_) out.push_back(e.slot);
  return out;
}

std::vector<segment_meta> partition_log::metas() const {
  std::vector<segment_meta> out;
  out.reserve(segments_.size());
  for (const auto& [base, e] : segments_) out.push_back(e.meta);
  return out;
}

std::shared_ptr<const producer_state> partition_log::producers_at_end() const {
  auto copy = std::make_shared<producer_state>(producers_);
  copy->set_end_offset(log_end_);
  return copy;
}

log_slice trim_to(log_slice slice, offset upto) {
  if (slice.next_offset <= upto) return slice;
  bytes_view all = slice.bytes();
  size_t pos = 0;
  size_t keep = 0;
  offset next = slice.first_offset;
  while (pos < all.size()) {
    auto rest = all.subspan(pos);
    auto size = record_batch_view::frame_size(rest);
    if (!size || *size > rest.size() || *size < batch_format::header_size) break;
    auto view =
        record_batch_view::parse(rest.subspan(0, *size), std::numeric_limits<size_t>::max());
    if (!view || view->last_offset() >= upto) break;
    next = view->last_offset() + 1;
    keep = pos + *size;
    pos = batch_format::align_up(keep);
  }
  slice.size = keep;
  slice.next_offset = keep == 0 ? slice.first_offset : next;
  if (keep == 0) slice.owner.reset();
  return slice;
}

} // namespace capstan
