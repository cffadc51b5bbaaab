// The partition log actor: the protocol shell of a partition log (actors/log/partition_log.hpp,
// which holds the bookkeeping and makes every decision: validation, offsets, rolls,
// truncation points, retention, flush coverage, compaction installs, idempotent producers). It
// takes the log's messages, asks the partition_log what to do, sends the resulting file
// operations to the partition's I/O worker (actors/log/io_worker_actor.hpp) and replies once
// they ran. It does no blocking file I/O itself: segment operations, the leader-epoch checkpoint
// and producer snapshot writes all run on the worker (docs/storage.md).
//
// Ordering: the worker handles the log's requests in the order sent, so a read sent after an
// append sees it. A read of exactly the last append (a follower's or consumer's next fetch) is
// answered from the appended buffer without the worker: the log counts those bytes from the
// moment it planned the write, and they are the bytes the worker writes. Structural changes that
// must finish before anything else (truncation) use `await`, which holds back other messages until
// the worker answered.

#include "actors/log/partition_log_actor.hpp"

#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <vector>

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "actors/countdown.hpp"
#include "actors/log/compaction_worker.hpp"
#include "actors/log/io_worker_actor.hpp"
#include "actors/log/partition_log.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/batch/record_batch_format.hpp"
#include "runtime/storage/epoch_scan.hpp"
#include "runtime/storage/file_handle.hpp"
#include "runtime/storage/leader_epoch_checkpoint.hpp"
#include "runtime/storage/log_loader.hpp"
#include "runtime/storage/offset_gaps.hpp"
#include "runtime/storage/producer_snapshot.hpp"
#include "runtime/storage/producer_state_loader.hpp"
#include "runtime/storage/segment.hpp"

namespace capstan {

namespace {

// The largest append buffer a log keeps for reads of its tail (partition_log_state::tail): at
// most this much memory per partition beyond what the worker holds while it writes.
constexpr size_t max_tail_bytes = 64 * 1024;

struct partition_log_state {
  static inline const char* name = "capstan.partition_log";

  partition_log_options opts;
  segment_options seg_opts;
  io_worker_actor worker;
  // Whether `worker` is this log's own (no pool was given): it then stops with the log.
  bool own_worker = false;
  // Set once the behavior starts; every handler runs after that.
  std::optional<partition_log> log;
  // Set after a storage error: the log then refuses everything (Kafka takes the log dir offline).
  std::optional<error> failed;
  // The last append, when it was one write of at most `max_tail_bytes`: a read of exactly the
  // log's tail (a follower's or a consumer's next fetch) is answered from it without a round
  // trip to the worker. Good while the log end and the layout generation are still the ones
  // the append left.
  struct appended_tail {
    batch_buffer bytes;
    offset first{0};
    offset next{0};
    uint64_t generation = 0;
    // `bytes` as a slice, made by the first read: log_slice's promise (8-byte aligned, readable
    // up to its last whole word) may need a copy.
    std::optional<log_slice> slice;
  };
  std::optional<appended_tail> tail;
  // The epoch checkpoint on disk may lack what the cache holds (a new epoch not yet written, or
  // what an open wrote without an fsync, this one or an earlier): the next flush writes it
  // synced first.
  bool epochs_unsynced = true;
  // The highest recovery point this log opened with or reached: the checkpoint on disk says at
  // most this, and an open scans epochs from what it says.
  offset highest_recovery_point{0};

  timestamp_ms now() const { return opts.clock(); }
};

using self_ptr = partition_log_actor::stateful_pointer<partition_log_state>;

// A storage failure takes the partition offline (Kafka takes the log dir offline): the log
// refuses every new request with the error, lets the requests already sent to its worker answer
// (the worker replies in order, so a no-op sent now answers after all of them), then quits with
// the error as its exit reason. Its replica is linked and goes with it; the replica manager then
// serves the partition by an offline replica that answers KAFKA_STORAGE_ERROR naming the
// partition and this failure. Nothing new is written, so what is on disk stays as the failure
// left it; recovery on the next open cuts a torn tail.
void fail(self_ptr self, const caf::error& e) {
  auto& st = self->state;
  if (st.failed) return;
  st.failed = from_caf_error(e);
  spdlog::error("{}: storage failure, the partition goes offline: {}", st.opts.log_name,
                st.failed->to_string());
  auto quit = [self] { self->quit(to_caf_error(*self->state.failed)); };
  self->request(st.worker, caf::infinite, run_atom_v, io_task{[] {}})
      .then([quit](bool) { quit(); }, [quit](caf::error&) { quit(); });
}

caf::error refuse(const partition_log_state& st) {
  return to_caf_error(*st.failed);
}

// A read that failed answers its caller with the error. If the disk failed it (EIO: not bytes
// that do not frame, which only this read meets), the partition goes offline as after a failed
// write, as Kafka's LocalLog.read takes the log dir offline on an IOException.
template <class T>
void read_failed(self_ptr self, caf::typed_response_promise<T>& rp, caf::error& e) {
  if (from_caf_error(e).code == errc::kafka_storage_error) fail(self, e);
  rp.deliver(std::move(e));
}

// Persists the epoch cache, synced; called after every change, before the batches it describes
// can be flushed (the worker writes it before any flush sent later). `done` runs once the file is
// written, or after a failure took the log offline (st.failed is then set).
//
// Two writes are left out or unsynced, those that every open redoes or that no batch depends on
// yet: the open's own write back, and a new leadership's epoch, not written until a batch follows
// it. Every flush writes the file synced before the recovery point may pass what the cache holds
// (flush_segments), so below the recovery point the file is complete; above it the open trusts
// the batches, not the file (load_epochs). Kafka took the fsync out of its epoch assignment
// likewise.
void save_epochs(self_ptr self, std::function<void()> done = nullptr) {
  auto& st = self->state;
  st.epochs_unsynced = false;
  self->request(st.worker, caf::infinite, epoch_atom_v,
                epoch_checkpoint{st.opts.dir / leader_epoch_checkpoint_name,
                                 st.log->epochs().entries()})
      .then(
          [done](bool) {
            if (done) done();
          },
          [self, done](caf::error& e) {
            fail(self, e);
            if (done) done();
          });
}

void flush_all(self_ptr self, std::function<void(offset)> done);

// Runs `job` (a producer snapshot write or removal) on the worker, after everything sent before;
// a failure takes the log offline like any storage failure. `done` runs once the job ran or
// failed (st.failed is then set).
void run_snapshot_job(self_ptr self, std::function<status()> job,
                      std::function<void()> done = nullptr) {
  auto outcome = std::make_shared<status>();
  self->request(self->state.worker, caf::infinite, run_atom_v,
                io_task{[job = std::move(job), outcome] { *outcome = job(); }})
      .then(
          [self, outcome, done](bool) {
            if (!*outcome) fail(self, to_caf_error(outcome->err()));
            if (done) done();
          },
          [self, done](caf::error& e) {
            fail(self, e);
            if (done) done();
          });
}

// Writes `producers` (the state as of its end offset) as <end>.snapshot, so that opening the log
// replays only the batches from there.
void snapshot_producers(self_ptr self, std::shared_ptr<const producer_state> producers,
                        std::function<void()> done = nullptr) {
  run_snapshot_job(
      self,
      [dir = self->state.opts.dir, producers] { return write_producer_snapshot(dir, *producers); },
      std::move(done));
}

// A clean close's snapshot at the log end, as Kafka writes one, so that the next open replays
// nothing. As in Kafka (ProducerStateManager.takeSnapshot), only when it would add something: not
// for an empty log without producers (there is nothing to replay), nor when <end>.snapshot is
// there already (an earlier close, or the roll that began an active segment still empty, wrote
// the state as of that offset; truncation removes the snapshots above its cut). An idle replica
// then closes without a write.
void snapshot_at_close(self_ptr self, std::function<void()> done) {
  const auto& log = *self->state.log;
  auto producers = log.producers_at_end();
  if (log.log_end() == log.log_start() && producers->producers().empty()) {
    done();
    return;
  }
  run_snapshot_job(
      self,
      [dir = self->state.opts.dir, producers]() -> status {
        std::error_code ec;
        if (std::filesystem::exists(dir / producer_snapshot_name(producers->end_offset()), ec))
          return {};
        return write_producer_snapshot(dir, *producers);
      },
      std::move(done));
}

// Asks the worker to create `slot`'s segment at `base`. Requests sent after this one find it
// created (the worker keeps their order); if the creation fails they are refused and the
// failure takes the log offline.
void create_segment(self_ptr self, const segment_ref& slot, offset base) {
  auto& st = self->state;
  self->request(st.worker, caf::infinite, roll_atom_v, slot,
                segment_spec{st.opts.dir, base, st.seg_opts})
      .then([](const segment_meta&) {}, [self](caf::error& e) { fail(self, e); });
}

void raise_recovery_point(partition_log_state& st, offset target, uint64_t generation) {
  st.log->raise_recovery_point(target, generation);
  st.highest_recovery_point = std::max(st.highest_recovery_point, st.log->recovery_point());
}

// Fsyncs `slots` on the worker, then calls `done` (also after a failure, which takes the log
// offline: `done` checks for that).
void flush_segments(self_ptr self, const std::vector<segment_ref>& slots,
                    std::function<void()> done) {
  // Before the recovery point passes what they describe; with no segment to flush it stays (a
  // close of an idle replica writes nothing).
  if (self->state.epochs_unsynced && !slots.empty()) save_epochs(self);
  auto pending = std::make_shared<countdown>(countdown{slots.size() + 1, std::move(done)});
  for (const auto& slot : slots)
    self->request(self->state.worker, caf::infinite, flush_atom_v, slot)
        .then([pending](const segment_meta&) { pending->arrive(); },
              [self, pending](caf::error& e) {
                fail(self, e);
                pending->arrive();
              });
  pending->arrive();
}

// Carries out a roll: creates the new segment, writes the producer snapshot at its base, seals
// the old one and flushes everything below the new base in the background (as Kafka, which
// flushes asynchronously after a roll); the recovery point then moves to the new base.
void roll(self_ptr self, const segment_roll& r) {
  auto& st = self->state;
  create_segment(self, r.created, r.base);
  snapshot_producers(self, r.producers);
  const auto gen = st.log->generation();
  self->request(st.worker, caf::infinite, seal_atom_v, r.sealed)
      .then([](const segment_meta&) {}, [self](caf::error& e) { fail(self, e); });
  flush_segments(self, r.flushed, [self, gen, base = r.base] {
    if (!self->state.failed) raise_recovery_point(self->state, base, gen);
  });
  spdlog::info("{}: rolled new segment at offset {}", st.opts.log_name, r.base.value());
}

void read_from(self_ptr self, offset segment_base, read_request req,
               caf::typed_response_promise<log_slice> rp) {
  auto& st = self->state;
  auto slot = st.log->segment_at(segment_base);
  if (!slot) {
    rp.deliver(log_slice{{}, nullptr, 0, req.from, req.from});
    return;
  }
  self->request(st.worker, caf::infinite, read_atom_v, slot, req.from, req.max_bytes)
      .then(
          [self, segment_base, req, rp](log_slice& slice) mutable {
            if (slice.empty()) {
              // Compaction can empty a segment's tail; the offset then lives in a later segment.
              if (auto next = self->state.log->next_segment(segment_base, req.upto)) {
                req.from = std::max(req.from, *next);
                read_from(self, *next, req, rp);
                return;
              }
              rp.deliver(log_slice{{}, nullptr, 0, req.from, req.from});
              return;
            }
            rp.deliver(trim_to(std::move(slice), req.upto));
          },
          [self, rp](caf::error& e) mutable { read_failed(self, rp, e); });
}

// Carries out an append plan: the epoch checkpoint, then the writes and rolls in order. Replies
// after every write answered, and, when the plan flushes (flush.messages reached), after the
// fsync too: the acknowledgement then means durable, as with Kafka's flush.messages=1. The
// batches are in the log as far as every later message is concerned: a failed write takes the
// whole log offline, and a reopen rebuilds the state from what is on disk.
caf::result<append_result> run_append(self_ptr self, append_plan plan) {
  auto& st = self->state;
  if (plan.save_epochs) save_epochs(self);
  auto rp = self->make_response_promise<append_result>();
  auto pending = std::make_shared<countdown>(countdown{1, nullptr});
  auto failed = std::make_shared<std::optional<caf::error>>();
  pending->done = [self, rp, res = plan.result, failed, flush = plan.flush]() mutable {
    if (*failed) {
      rp.deliver(std::move(**failed));
    } else if (flush) {
      flush_all(self, [self, rp, res](offset) mutable {
        if (self->state.failed)
          rp.deliver(refuse(self->state));
        else
          rp.deliver(res);
      });
    } else {
      rp.deliver(res);
    }
  };
  for (const auto& step : plan.steps) {
    if (const auto* r = std::get_if<segment_roll>(&step)) {
      roll(self, *r);
      continue;
    }
    const auto& w = std::get<segment_write>(step);
    ++pending->remaining;
    self->request(st.worker, caf::infinite, append_atom_v, w.slot, w.part)
        .then([pending](const segment_meta&) { pending->arrive(); },
              [self, pending, failed](caf::error& e) {
                fail(self, e);
                // The first failure (a roll's, say), not a follow-up "segment is not open".
                *failed = refuse(self->state);
                pending->arrive();
              });
  }
  pending->arrive();
  return rp;
}

// Remembers what `plan` writes as the log's tail, if it is a single write small enough to keep.
void remember_tail(partition_log_state& st, const append_plan& plan) {
  st.tail.reset();
  if (plan.steps.size() != 1) return;
  const auto* w = std::get_if<segment_write>(&plan.steps.front());
  if (!w || !w->part.data || w->part.data->size() > max_tail_bytes) return;
  st.tail = partition_log_state::appended_tail{w->part, plan.result.first, plan.result.last + 1,
                                               st.log->generation(), std::nullopt};
}

// `tail` as a log slice: its own bytes if they keep log_slice's promise (8-byte aligned and
// readable up to the last whole word), else an aligned, zero-padded copy.
log_slice slice_of(const partition_log_state::appended_tail& tail) {
  const auto view = tail.bytes.view();
  const size_t whole_words = batch_format::align_up(view.size());
  if (reinterpret_cast<uintptr_t>(view.data()) % batch_format::alignment == 0 &&
      tail.bytes.begin + whole_words <= tail.bytes.data->size())
    return log_slice{tail.bytes.data, view.data(), view.size(), tail.first, tail.next};
  auto words = std::make_shared<std::vector<uint64_t>>(whole_words / sizeof(uint64_t), 0);
  std::memcpy(words->data(), view.data(), view.size());
  const auto* data = reinterpret_cast<const uint8_t*>(words->data());
  return log_slice{std::move(words), data, view.size(), tail.first, tail.next};
}

// The tail kept by the last append, as the read `req` would return it from the segment (one
// batch, written as given): only a read starting at its first offset, taking all of it, while
// it still ends the log and no truncation, retention or compaction changed the layout.
std::optional<log_slice> read_tail(partition_log_state& st, const read_request& req) {
  if (!st.tail) return std::nullopt;
  auto& t = *st.tail;
  if (t.generation != st.log->generation() || t.next != st.log->log_end() || req.from != t.first ||
      t.next > req.upto || static_cast<int64_t>(t.bytes.size()) > req.max_bytes)
    return std::nullopt;
  if (!t.slice) t.slice = slice_of(t);
  return t.slice;
}

caf::result<append_result> append(self_ptr self, append_request& req) {
  auto& st = self->state;
  if (st.failed) return refuse(st);
  auto plan = st.log->append(req, st.now());
  if (!plan) return to_caf_error(plan.err());
  if (plan->result.duplicate) return plan->result;
  remember_tail(st, *plan);
  return run_append(self, std::move(*plan));
}

void flush_all(self_ptr self, std::function<void(offset)> done) {
  auto plan = self->state.log->plan_flush();
  flush_segments(self, plan.segments, [self, target = plan.target, gen = plan.generation, done] {
    auto& st = self->state;
    if (!st.failed) raise_recovery_point(st, target, gen);
    st.log->flushed_at(st.now());
    done(st.log->recovery_point());
  });
}

// Deletes the segments retention wants gone; `done` gets their count once the producer
// snapshots below the new log start are removed too.
void run_retention(self_ptr self, std::function<void(int32_t)> done = nullptr) {
  auto& st = self->state;
  auto plan = st.log->plan_retention(st.now());
  const auto n = static_cast<int32_t>(plan.deleted.size());
  for (const auto& s : plan.deleted) {
    spdlog::info("{}: retention deletes segment {} (offsets {}..{}, {} bytes)", st.opts.log_name,
                 segment::file_stem(s.meta.base), s.meta.base.value(), s.meta.next.value() - 1,
                 s.meta.size_bytes);
    self->request(st.worker, caf::infinite, delete_atom_v, s.slot)
        .then([](bool) {}, [self](caf::error& e) { fail(self, e); });
  }
  if (n > 0) {
    if (plan.save_epochs) save_epochs(self);
    run_snapshot_job(
        self,
        [dir = st.opts.dir, start = plan.log_start] {
          return delete_producer_snapshots_before(dir, start);
        },
        [done, n] {
          if (done) done(n);
        });
  } else if (done) {
    done(0);
  }
}

// Finishes a truncation once the dropped segments are gone: cuts the last kept segment, or, when
// nothing is kept, restarts the log empty at `to` (Kafka's truncateFullyAndStartAt).
void truncate_kept(self_ptr self, offset to, caf::typed_response_promise<offset> rp) {
  auto& st = self->state;
  auto finish = [self, rp](offset end) mutable {
    auto& st = self->state;
    if (st.log->truncated(end)) save_epochs(self);
    spdlog::info("{}: truncated to offset {}", st.opts.log_name, end.value());
    // A snapshot past the new end describes batches that are gone (and may come back different).
    run_snapshot_job(
        self, [dir = st.opts.dir, end] { return delete_producer_snapshots_after(dir, end); },
        [self, rp, end]() mutable {
          if (self->state.failed)
            rp.deliver(refuse(self->state));
          else
            rp.deliver(end);
        });
  };
  if (st.log->empty()) {
    create_segment(self, st.log->restart_at(to, st.now()), to);
    finish(to);
    return;
  }
  self->request(st.worker, caf::infinite, truncate_atom_v, st.log->active_slot(), to)
      .await(
          [self, finish](const segment_meta& meta) mutable {
            self->state.log->active_truncated(meta);
            finish(meta.next);
          },
          [self, rp](caf::error& e) mutable {
            fail(self, e);
            rp.deliver(e);
          });
}

// Drops every batch with an offset >= `to`, whole batches as Kafka does, so the new log end may
// be below `to`. Segments wholly at or after `first_dropped` are deleted first, and `await` keeps
// every other message waiting until the files are gone (a new segment may reuse a deleted one's
// base).
caf::result<offset> drop_segments_from(self_ptr self, offset first_dropped, offset to) {
  auto& st = self->state;
  auto rp = self->make_response_promise<offset>();
  auto dropped = st.log->drop_segments_from(first_dropped);
  auto pending = std::make_shared<countdown>(countdown{dropped.size() + 1, nullptr});
  pending->done = [self, to, rp] { truncate_kept(self, to, rp); };
  for (const auto& slot : dropped)
    self->request(st.worker, caf::infinite, delete_atom_v, slot)
        .await([pending](bool) { pending->arrive(); },
               [self, pending](caf::error& e) {
                 fail(self, e);
                 pending->arrive();
               });
  pending->arrive();
  return rp;
}

caf::result<offset> truncate(self_ptr self, offset to) {
  auto& st = self->state;
  if (st.failed) return refuse(st);
  if (to >= st.log->log_end()) {
    // No record to drop; epochs that start at the log end hold none either and go.
    if (to == st.log->log_end() && st.log->forget_epochs_from(to)) save_epochs(self);
    return st.log->log_end();
  }
  return drop_segments_from(self, to, to);
}

// Kafka's truncateFullyAndStartAt: every segment goes, and the log restarts empty at `start`
// with no epoch history (the batches that carried it are gone).
caf::result<offset> reset(self_ptr self, offset start) {
  auto& st = self->state;
  if (st.failed) return refuse(st);
  if (st.log->forget_history()) save_epochs(self);
  run_snapshot_job(self, [dir = st.opts.dir] { return delete_all_producer_snapshots(dir); });
  spdlog::warn("{}: restarts empty at offset {} (was {}..{})", st.opts.log_name, start.value(),
               st.log->log_start().value(), st.log->log_end().value());
  return drop_segments_from(self, offset{std::numeric_limits<int64_t>::min()}, start);
}

void lookup_time(self_ptr self, offset segment_base, timestamp_ms target,
                 caf::typed_response_promise<int64_t> rp) {
  auto& st = self->state;
  auto base = st.log->segment_with_timestamp(segment_base, target);
  if (!base) {
    rp.deliver(int64_t{-1});
    return;
  }
  self->request(st.worker, caf::infinite, time_atom_v, st.log->segment_at(*base), target)
      .then(
          [self, base = *base, target, rp](int64_t found) mutable {
            if (found >= 0) {
              rp.deliver(found);
              return;
            }
            lookup_time(self, base + 1, target, rp);
          },
          [self, rp](caf::error& e) mutable { read_failed(self, rp, e); });
}

// A compaction's cleaned copies to make live, decided by the log against its current layout and
// carried out by its I/O worker (install_compaction); the worker fills in what it opened.
struct compaction_install {
  std::filesystem::path dir;
  segment_options seg_opts;
  offset log_start{0};
  // [new end, next segment base) of every cleaned segment but the last: offsets the cleaned copy
  // no longer holds at its end.
  std::vector<std::pair<offset, offset>> gaps;
  std::vector<compacted_segment> segments;
  // Filled by the worker, in the order of `segments`, up to the first failure.
  std::vector<std::shared_ptr<segment>> opened;
  std::vector<segment_meta> metas;
  std::optional<error> failure;
};

// Runs on the worker. Records the gaps in <dir>/offset-gaps before any install makes them
// visible, so start-up tells them from lost data (docs/storage.md, "Damage"); then renames each
// cleaned copy over its segment and opens and seals it; then drops the staging directory.
void install_compaction(compaction_install& job) {
  auto record_gaps = [&]() -> status {
    auto gaps = read_offset_gaps(job.dir);
    if (!gaps) return gaps.err();
    const auto before = *gaps;
    for (const auto& [from, to] : job.gaps) gaps->add(from, to);
    gaps->drop_below(job.log_start);
    if (*gaps == before) return {};
    return write_offset_gaps(job.dir, *gaps);
  };
  if (auto s = record_gaps(); !s) {
    job.failure = s.err();
  } else {
    for (const auto& cs : job.segments) {
      if (auto s = install_compacted_segment(job.dir, cs); !s) {
        job.failure = s.err();
        break;
      }
      auto seg = segment::open(job.dir, cs.base, segment_open_mode::open_trusted, job.seg_opts);
      if (seg) {
        if (auto s = (*seg)->seal(); !s) seg = s.err();
      }
      if (!seg) {
        job.failure = seg.err();
        break;
      }
      job.metas.push_back(meta_of(**seg, 0));
      job.opened.push_back(std::move(*seg));
    }
  }
  discard_compaction(job.dir);
}

void discard_on_worker(self_ptr self) {
  caf::anon_send(self->state.worker, run_atom_v,
                 io_task{[dir = self->state.opts.dir] { discard_compaction(dir); }});
}

caf::result<compaction_stats> compact(self_ptr self) {
  auto& st = self->state;
  if (st.failed) return refuse(st);
  auto plan = st.log->plan_compaction(st.now());
  if (!plan) return compaction_stats{};
  plan->input.dir = st.opts.dir;
  plan->input.options = st.seg_opts;
  auto rp = self->make_response_promise<compaction_stats>();
  auto worker = spawn_compaction_worker(self->system());
  // Every sealed segment is flushed first: cleaned copies must never be more durable than what
  // they replace, and the worker reads the files.
  flush_all(self, [self, worker, plan = *plan, rp](offset) mutable {
    self->request(worker, caf::infinite, compact_atom_v, plan.input)
        .then(
            [self, gen = plan.generation, dirty_end = plan.dirty_end,
             rp](compaction_output& out) mutable {
              auto& st = self->state;
              std::optional<compaction_selection> sel;
              if (st.failed)
                st.log->compaction_abandoned();
              else
                sel = st.log->select_compacted(out, gen);
              if (!sel) {
                discard_on_worker(self);
                rp.deliver(compaction_stats{});
                return;
              }
              auto job = std::make_shared<compaction_install>();
              job->dir = st.opts.dir;
              job->seg_opts = st.seg_opts;
              job->log_start = st.log->log_start();
              job->gaps = std::move(sel->gaps);
              job->segments = std::move(sel->segments);
              // `await`: nothing else touches the segments until the swap is done.
              self->request(st.worker, caf::infinite, run_atom_v,
                            io_task{[job] { install_compaction(*job); }})
                  .await(
                      [self, job, dirty_end, rp](bool) mutable {
                        auto& st = self->state;
                        compaction_stats stats;
                        for (size_t i = 0; i < job->opened.size(); ++i) {
                          const auto& cs = job->segments[i];
                          auto old =
                              st.log->install_compacted(cs.base, job->metas[i], job->opened[i]);
                          caf::anon_send(st.worker, close_atom_v, old);
                          ++stats.segments_cleaned;
                          stats.records_removed += cs.records_removed;
                          stats.bytes_before += cs.size_before;
                          stats.bytes_after += cs.size_after;
                        }
                        st.log->compaction_installed(dirty_end);
                        spdlog::info(
                            "{}: compacted {} segments, removed {} records, {} -> {} bytes",
                            st.opts.log_name, stats.segments_cleaned, stats.records_removed,
                            stats.bytes_before, stats.bytes_after);
                        if (job->failure) {
                          fail(self, to_caf_error(*job->failure));
                          rp.deliver(refuse(st));
                          return;
                        }
                        rp.deliver(stats);
                      },
                      [self, rp](caf::error& e) mutable {
                        fail(self, e);
                        rp.deliver(std::move(e));
                      });
            },
            [self, rp](caf::error& e) mutable {
              self->state.log->compaction_abandoned();
              discard_on_worker(self);
              spdlog::error("{}: compaction failed: {}", self->state.opts.log_name, to_string(e));
              rp.deliver(std::move(e));
            });
  });
  return rp;
}

// Background schedule (partition_log::due): retention, flush after flush.ms, compaction when
// worthwhile, expiry of idle producers.
void on_tick(self_ptr self) {
  auto& st = self->state;
  const auto& c = st.opts.config;
  if (!st.failed) {
    size_t expired = 0;
    const auto work = st.log->due(st.now(), expired);
    if (work.retention) run_retention(self);
    if (work.flush) flush_all(self, [](offset) {});
    if (work.compaction) caf::anon_send(self, compact_atom_v);
    if (expired > 0) spdlog::info("{}: expired {} idle producers", st.opts.log_name, expired);
  }
  self->delayed_send(self, std::chrono::milliseconds(background_interval_ms(c)), tick_atom_v);
}

partition_log_actor::behavior_type partition_log_behavior(self_ptr self, partition_log_options opts,
                                                          std::shared_ptr<loaded_log> loaded,
                                                          leader_epoch_cache epochs,
                                                          producer_state producers) {
  auto& st = self->state;
  st.opts = std::move(opts);
  st.highest_recovery_point = st.opts.recovery_point;
  st.worker = st.opts.worker;
  if (!st.worker) {
    // No pool: a worker of its own, linked, so it goes when the log fails or is killed.
    st.worker = spawn_io_worker(self->system());
    st.own_worker = true;
    self->link_to(st.worker);
  }
  st.seg_opts.index_interval_bytes = static_cast<size_t>(st.opts.config.index_interval_bytes);
  st.seg_opts.max_batch_bytes = static_cast<size_t>(st.opts.config.max_message_bytes);
  const auto now = st.now();
  std::vector<log_segment> segments;
  for (auto& seg : loaded->segments) {
    auto meta = meta_of(*seg, now);
    segments.push_back(log_segment{
        std::make_shared<segment_slot>(segment_slot{seg, st.opts.log_name, now, nullptr}), meta});
  }
  std::vector<segment_ref> sealed;
  for (size_t i = 0; i + 1 < segments.size(); ++i) sealed.push_back(segments[i].slot);
  loaded.reset();
  std::shared_ptr<unsynced_partition_dir> unsynced_dir;
  if (st.opts.dir_unsynced)
    unsynced_dir = std::make_shared<unsynced_partition_dir>(unsynced_partition_dir{st.opts.dir});
  st.log.emplace(st.opts.log_name, st.opts.config, std::move(segments), st.opts.recovery_point,
                 std::move(epochs), std::move(producers), now, std::move(unsynced_dir));
  // After the log has set up the slots: from here on only the worker touches them.
  for (const auto& slot : sealed) caf::anon_send(st.worker, seal_atom_v, slot);
  const auto info = st.log->info();
  spdlog::info("{}: opened with {} segments, offsets {}..{}, recovery point {}", st.opts.log_name,
               info.segment_count, info.log_start.value(), info.log_end.value(),
               info.recovery_point.value());
  if (st.opts.schedule_background_work) self->send(self, tick_atom_v);

  return {
      [self](append_atom, append_request& req) { return append(self, req); },
      [self](read_atom, const read_request& req) -> caf::result<log_slice> {
        auto& st = self->state;
        if (st.failed) return refuse(st);
        auto start = st.log->start_read(req);
        if (!start) return to_caf_error(start.err());
        if (start->empty) return log_slice{{}, nullptr, 0, req.from, req.from};
        if (auto tail = read_tail(st, req)) return std::move(*tail);
        auto rp = self->make_response_promise<log_slice>();
        read_from(self, start->segment_base, req, rp);
        return rp;
      },
      [self](time_atom, timestamp_ms target) -> caf::result<int64_t> {
        auto& st = self->state;
        if (st.failed) return refuse(st);
        auto rp = self->make_response_promise<int64_t>();
        lookup_time(self, st.log->log_start(), target, rp);
        return rp;
      },
      [self](truncate_atom, offset to) { return truncate(self, to); },
      [self](reset_atom, offset start) { return reset(self, start); },
      [self](epoch_atom, leader_epoch requested) -> caf::result<epoch_end> {
        auto& st = self->state;
        if (st.failed) return refuse(st);
        return st.log->end_offset_for(requested);
      },
      [self](newepoch_atom, leader_epoch epoch) -> caf::result<offset> {
        auto& st = self->state;
        if (st.failed) return refuse(st);
        if (!st.log->assign_epoch(epoch)) return st.log->log_end();
        // Not written now when the recovery point on disk cannot be past the log end: the epoch
        // starts there, so until a batch follows it an open would cut it, an open after one
        // scans it back, and the flush that passes its first batch writes it (save_epochs).
        // After a cut the checkpoint on disk may still say a recovery point from before it,
        // above the batches this epoch will describe: written now.
        if (st.highest_recovery_point <= st.log->log_end()) {
          st.epochs_unsynced = true;
          return st.log->log_end();
        }
        auto rp = self->make_response_promise<offset>();
        save_epochs(self, [self, rp, end = st.log->log_end()]() mutable {
          if (self->state.failed)
            rp.deliver(refuse(self->state));
          else
            rp.deliver(end);
        });
        return rp;
      },
      [self](flush_atom) -> caf::result<offset> {
        if (self->state.failed) return refuse(self->state);
        auto rp = self->make_response_promise<offset>();
        flush_all(self, [rp](offset point) mutable { rp.deliver(point); });
        return rp;
      },
      [self](retain_atom) -> caf::result<int32_t> {
        if (self->state.failed) return refuse(self->state);
        auto rp = self->make_response_promise<int32_t>();
        run_retention(self, [rp](int32_t n) mutable { rp.deliver(n); });
        return rp;
      },
      [self](compact_atom) { return compact(self); },
      [self](info_atom) -> log_info { return self->state.log->info(); },
      [self](reconfig_atom, log_config& config) {
        auto& st = self->state;
        st.seg_opts.index_interval_bytes = static_cast<size_t>(config.index_interval_bytes);
        st.seg_opts.max_batch_bytes = static_cast<size_t>(config.max_message_bytes);
        st.opts.config = config;
        st.log->reconfigure(std::move(config));
        spdlog::info("{}: topic configs changed", st.opts.log_name);
      },
      [self](close_atom) -> caf::result<offset> {
        auto rp = self->make_response_promise<offset>();
        auto finish = [self, rp](offset point) mutable {
          auto& st = self->state;
          for (const auto& slot : st.log->slots()) caf::anon_send(st.worker, close_atom_v, slot);
          // Queued after the closes, so a worker of the log's own stops once they ran.
          if (st.own_worker) caf::anon_send(st.worker, close_atom_v);
          spdlog::info("{}: closed at offset {}, recovery point {}", st.opts.log_name,
                       st.log->log_end().value(), point.value());
          rp.deliver(point);
          self->quit();
        };
        if (self->state.failed) {
          finish(self->state.log->recovery_point());
        } else {
          flush_all(self, [self, finish](offset point) mutable {
            if (self->state.failed) {
              finish(point);
              return;
            }
            snapshot_at_close(self, [finish, point]() mutable { finish(point); });
          });
        }
        return rp;
      },
      [self](tick_atom) { on_tick(self); },
  };
}

// The leader-epoch cache of a freshly loaded log: the checkpoint below the recovery point, plus
// the epochs of the batches from there on. Below it the checkpoint is complete (a flush writes it
// synced before it moves the recovery point); above it, the checkpoint may lag the batches or
// hold entries a lost write should have cut, so the batches decide. A missing or unreadable
// checkpoint makes every batch scanned.
result<leader_epoch_cache> load_epochs(const partition_log_options& opts,
                                       const std::vector<std::shared_ptr<segment>>& segments) {
  const auto file = opts.dir / leader_epoch_checkpoint_name;
  const offset log_start = segments.front()->base_offset();
  const offset log_end = segments.back()->next_offset();
  auto stored = read_leader_epoch_checkpoint(file);
  if (!stored)
    spdlog::warn("{}: {}; rebuilding the leader epochs from the log", opts.log_name,
                 stored.err().to_string());
  leader_epoch_cache epochs(stored ? *stored : std::vector<epoch_entry>{});
  offset scan_from = log_start;
  if (stored && !stored->empty()) scan_from = std::clamp(opts.recovery_point, log_start, log_end);
  const auto before = epochs.entries();
  epochs.truncate_from_end(scan_from);
  epochs.truncate_from_start(log_start);
  auto scanned = scan_epochs(segments, scan_from, epochs);
  if (!scanned) return scanned.err();
  // Every open cuts and scans the same from what is on disk, so a write back need not be synced
  // (Kafka writes its truncations unflushed too): the log's first flush writes it synced, as it
  // does after every open, since an earlier open's write may still be only in the page cache.
  // 10,000 replicas of a node that led them at its stop each had an epoch at its log end to cut,
  // and synced writes made that node's start-up twice as slow. A rebuilt file is synced.
  if (epochs.entries() != before || !stored) {
    const auto mode = stored ? sync_mode::unsynced : sync_mode::synced;
    if (auto s = write_leader_epoch_checkpoint(file, epochs.entries(), mode); !s) return s.err();
  }
  return epochs;
}

} // namespace

result<loaded_partition_log> load_partition_log(const partition_log_options& opts) {
  if (auto made = make_directories(opts.dir); !made) return made.err();
  segment_options seg_opts;
  seg_opts.index_interval_bytes = static_cast<size_t>(opts.config.index_interval_bytes);
  seg_opts.max_batch_bytes = static_cast<size_t>(opts.config.max_message_bytes);
  auto loaded = load_log(opts.dir, opts.recovery_point, opts.start, seg_opts, opts.log_name);
  if (!loaded) return loaded.err();
  auto epochs = load_epochs(opts, loaded->segments);
  if (!epochs) return epochs.err();
  auto producers = load_producer_state(opts.dir, loaded->segments, opts.log_name);
  if (!producers) return producers.err();
  return loaded_partition_log{std::make_shared<loaded_log>(std::move(*loaded)), std::move(*epochs),
                              std::move(*producers)};
}

partition_log_actor spawn_partition_log(caf::actor_system& sys, partition_log_options opts,
                                        loaded_partition_log loaded) {
  if (!opts.clock)
    opts.clock = [] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
    };
  return sys.spawn(partition_log_behavior, std::move(opts), std::move(loaded.log),
                   std::move(loaded.epochs), std::move(loaded.producers));
}

result<partition_log_actor> open_partition_log(caf::actor_system& sys, partition_log_options opts) {
  auto loaded = load_partition_log(opts);
  if (!loaded) return loaded.err();
  return spawn_partition_log(sys, std::move(opts), std::move(*loaded));
}

} // namespace capstan
