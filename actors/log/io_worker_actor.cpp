// The I/O worker: runs segment operations for the partition logs assigned to it, one at a time,
// in the order they arrive, on its own thread. Every reply carries the segment's metadata so the
// partition log never has to ask twice.

#include "actors/log/io_worker_actor.hpp"

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>

#include <caf/all.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "actors/countdown.hpp"
#include "runtime/actor/caf_error.hpp"
#include "runtime/actor/log_throttle.hpp"
#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/record_batch_view.hpp"
#include "runtime/storage/leader_epoch_checkpoint.hpp"
#include "runtime/storage/partition_metadata.hpp"

namespace capstan {

segment_meta meta_of(const segment& seg, timestamp_ms created_ms) {
  return segment_meta{seg.base_offset(), seg.next_offset(), static_cast<int64_t>(seg.size_bytes()),
                      seg.max_timestamp(), created_ms};
}

namespace {

caf::error storage_error(const segment_slot& slot, offset base, const error& e) {
  spdlog::error("{} segment {}: {}", slot.log_name, segment::file_stem(base), e.to_string());
  return to_caf_error(e);
}

// A slot whose segment is gone (its creation failed, or it was closed or deleted) refuses.
caf::error missing(const segment_slot& slot) {
  return to_caf_error(make_error(errc::kafka_storage_error,
                                 slot.log_name + ": the segment is not open"));
}

segment_meta meta(const segment_slot& slot) { return meta_of(*slot.seg, slot.created_ms); }

// With descriptors exhausted every new partition's first append would log a line: one per 10 s
// for all the workers of the process, saying how many it stands for.
std::optional<uint64_t> admit_descriptor_warning() {
  static std::mutex mutex;
  static log_throttle throttle{std::chrono::seconds(10)};
  std::lock_guard lock(mutex);
  return throttle.admit(log_throttle::clock::now());
}

caf::result<segment_meta> append(segment_slot& slot, const batch_buffer& batches) {
  // A record never lands in a directory that could lose its partition.metadata in a crash.
  if (auto& pending = slot.unsynced_dir; pending && !pending->synced) {
    bool out_of_descriptors = false;
    if (auto s = make_partition_dir_durable(pending->dir, &out_of_descriptors); !s) {
      if (!out_of_descriptors) return storage_error(slot, slot.seg->base_offset(), s.err());
      // Nothing was fsynced: a syncfs through the segment's open descriptor makes the whole
      // filesystem durable, this directory with it. Dearer under load, but the append need not
      // fail for want of a descriptor.
      if (auto when = admit_descriptor_warning())
        spdlog::warn("{}: out of file descriptors to sync its new directory ({}); syncing the "
                     "filesystem instead{}",
                     slot.log_name, s.err().to_string(),
                     *when ? fmt::format(" ({} more since the last such line)", *when) : "");
      if (auto all = slot.seg->sync_file_system(); !all)
        return storage_error(slot, slot.seg->base_offset(), all.err());
    }
    pending->synced = true;
  }
  // The partition log validated these batches; only framing is read here.
  bytes_view rest = batches.view();
  while (!rest.empty()) {
    auto size = record_batch_view::frame_size(rest);
    if (!size || *size > rest.size())
      return storage_error(slot, slot.seg->base_offset(),
                           make_error(errc::corrupt_message, "bad framing in append"));
    if (auto s = slot.seg->append(rest.subspan(0, *size)); !s)
      return storage_error(slot, slot.seg->base_offset(), s.err());
    size_t step = std::min(rest.size(), batch_format::align_up(*size));
    rest = rest.subspan(step);
  }
  return meta(slot);
}

io_worker_actor::behavior_type io_worker(io_worker_actor::pointer self) {
  return {
    [](roll_atom, const segment_ref& slot, const segment_spec& spec) -> caf::result<segment_meta> {
      auto seg = segment::open(spec.dir, spec.base, segment_open_mode::create, spec.options);
      if (!seg) return storage_error(*slot, spec.base, seg.err());
      slot->seg = std::move(*seg);
      return meta(*slot);
    },
    [](append_atom, const segment_ref& slot, const batch_buffer& batches) -> caf::result<segment_meta> {
      if (!slot->seg) return missing(*slot);
      return append(*slot, batches);
    },
    [](read_atom, const segment_ref& slot, offset from, int64_t max_bytes) -> caf::result<log_slice> {
      if (!slot->seg) return missing(*slot);
      auto slice = slot->seg->read(from, static_cast<size_t>(std::max<int64_t>(max_bytes, 0)));
      if (!slice) return storage_error(*slot, slot->seg->base_offset(), slice.err());
      return std::move(*slice);
    },
    [](time_atom, const segment_ref& slot, timestamp_ms target) -> caf::result<int64_t> {
      if (!slot->seg) return missing(*slot);
      auto found = slot->seg->offset_for_timestamp(target);
      if (!found) return storage_error(*slot, slot->seg->base_offset(), found.err());
      return *found ? (*found)->value() : int64_t{-1};
    },
    [](truncate_atom, const segment_ref& slot, offset to) -> caf::result<segment_meta> {
      if (!slot->seg) return missing(*slot);
      if (auto s = slot->seg->truncate_to(to); !s)
        return storage_error(*slot, slot->seg->base_offset(), s.err());
      return meta(*slot);
    },
    [](flush_atom, const segment_ref& slot) -> caf::result<segment_meta> {
      if (!slot->seg) return missing(*slot);
      if (auto s = slot->seg->flush(); !s) return storage_error(*slot, slot->seg->base_offset(), s.err());
      return meta(*slot);
    },
    [](seal_atom, const segment_ref& slot) -> caf::result<segment_meta> {
      if (!slot->seg) return missing(*slot);
      if (auto s = slot->seg->seal(); !s) return storage_error(*slot, slot->seg->base_offset(), s.err());
      return meta(*slot);
    },
    [](delete_atom, const segment_ref& slot) -> caf::result<bool> {
      if (!slot->seg) return true;
      const auto base = slot->seg->base_offset();
      auto s = slot->seg->remove();
      slot->seg.reset();
      if (!s) return storage_error(*slot, base, s.err());
      return true;
    },
    [](close_atom, const segment_ref& slot) -> bool {
      slot->seg.reset();
      return true;
    },
    [](epoch_atom, const epoch_checkpoint& c) -> caf::result<bool> {
      if (auto s = write_leader_epoch_checkpoint(c.file, c.entries); !s) return to_caf_error(s.err());
      return true;
    },
    [](run_atom, const io_task& task) {
      task.fn();
      return true;
    },
    [self](close_atom) { self->quit(); },
  };
}

caf::behavior io_fan_out(caf::event_based_actor* self) {
  return {
    [self](run_atom, io_batch& batch) {
      auto rp = self->make_response_promise();
      auto pending = std::make_shared<countdown>(countdown{batch.jobs.size() + 1, nullptr});
      pending->done = [self, rp]() mutable {
        rp.deliver(true);
        self->quit();
      };
      for (auto& [worker, task] : batch.jobs)
        self->request(worker, caf::infinite, run_atom_v, std::move(task))
          .then([pending](bool) { pending->arrive(); }, [pending](caf::error&) { pending->arrive(); });
      pending->arrive();
      return rp;
    },
  };
}

} // namespace

caf::actor spawn_io_fan_out(caf::actor_system& sys) { return sys.spawn(io_fan_out); }

io_worker_actor spawn_io_worker(caf::actor_system& sys) {
  return sys.spawn<caf::detached>(io_worker);
}

} // namespace capstan
