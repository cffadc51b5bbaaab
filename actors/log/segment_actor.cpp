// The segment actor: owns one segment (runtime/storage/segment). The active segment appends;
// sealed segments serve reads from their mmap. Every reply carries the segment's metadata so the
// partition log never has to ask twice.

#include "actors/log/segment_actor.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include "runtime/actor/caf_error.hpp"
#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/record_batch_view.hpp"
#include "runtime/storage/segment.hpp"

namespace capstan {

segment_meta meta_of(const segment& seg, timestamp_ms created_ms) {
  return segment_meta{seg.base_offset(), seg.next_offset(), static_cast<int64_t>(seg.size_bytes()),
                      seg.max_timestamp(), created_ms};
}

namespace {

struct segment_state {
  static inline const char* name = "capstan.segment";
  std::shared_ptr<segment> seg;
  std::string log_name;
  timestamp_ms created_ms = 0;

  segment_meta meta() const { return meta_of(*seg, created_ms); }
};

caf::error storage_error(const segment_state& st, const error& e) {
  spdlog::error("{} segment {}: {}", st.log_name, segment::file_stem(st.seg->base_offset()),
                e.to_string());
  return to_caf_error(e);
}

segment_actor::behavior_type segment_behavior(segment_actor::stateful_pointer<segment_state> self,
                                              std::shared_ptr<segment> seg, std::string log_name,
                                              timestamp_ms created_ms) {
  self->state.seg = std::move(seg);
  self->state.log_name = std::move(log_name);
  self->state.created_ms = created_ms;
  return {
    [self](append_atom, const batch_buffer& batches) -> caf::result<segment_meta> {
      auto& st = self->state;
      // The partition log validated these batches; only framing is read here.
      bytes_view rest = batches.view();
      while (!rest.empty()) {
        auto size = record_batch_view::frame_size(rest);
        if (!size || *size > rest.size())
          return storage_error(st, make_error(errc::corrupt_message, "bad framing in append"));
        if (auto s = st.seg->append(rest.subspan(0, *size)); !s) return storage_error(st, s.err());
        size_t step = std::min(rest.size(), batch_format::align_up(*size));
        rest = rest.subspan(step);
      }
      return st.meta();
    },
    [self](read_atom, offset from, int64_t max_bytes) -> caf::result<log_slice> {
      auto slice = self->state.seg->read(from, static_cast<size_t>(std::max<int64_t>(max_bytes, 0)));
      if (!slice) return storage_error(self->state, slice.err());
      return std::move(*slice);
    },
    [self](time_atom, timestamp_ms target) -> int64_t {
      auto found = self->state.seg->offset_for_timestamp(target);
      return found ? found->value() : -1;
    },
    [self](truncate_atom, offset to) -> caf::result<segment_meta> {
      if (auto s = self->state.seg->truncate_to(to); !s) return storage_error(self->state, s.err());
      return self->state.meta();
    },
    [self](flush_atom) -> caf::result<segment_meta> {
      if (auto s = self->state.seg->flush(); !s) return storage_error(self->state, s.err());
      return self->state.meta();
    },
    [self](seal_atom) -> caf::result<segment_meta> {
      if (auto s = self->state.seg->seal(); !s) return storage_error(self->state, s.err());
      return self->state.meta();
    },
    [self](delete_atom) -> caf::result<bool> {
      auto s = self->state.seg->remove();
      self->quit();
      if (!s) return storage_error(self->state, s.err());
      return true;
    },
    [self](close_atom) -> bool {
      self->quit();
      return true;
    },
  };
}

} // namespace

segment_actor spawn_segment(caf::actor_system& sys, std::shared_ptr<segment> seg,
                            std::string log_name, timestamp_ms created_ms) {
  return sys.spawn(segment_behavior, std::move(seg), std::move(log_name), created_ms);
}

} // namespace capstan
