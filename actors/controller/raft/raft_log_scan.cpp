#include "actors/controller/raft/raft_log_scan.hpp"

#include "actors/controller/raft/raft_storage_format.hpp"
#include "actors/controller/raft/raft_storage_records.hpp"

namespace capstan::raft {

namespace {

// Whether a whole frame beyond `from` belongs to an append other than the cut one, which is the
// append whose first index is `first_a` or `first_b` (the cut frame is either the start of a new
// append at the expected index, or inside the last kept frame's append).
bool later_append_beyond(bytes_view content, uint64_t from, log_index first_a, log_index first_b) {
  for (uint64_t p = from + 1; p + storage_format::frame_header_size <= content.size(); ++p) {
    auto f = read_frame(content.subspan(p));
    if (!f) continue;
    if (f->append_first != first_a && f->append_first != first_b) return true;
    p += f->size - 1;
  }
  return false;
}

} // namespace

log_scan scan_log(bytes_view content, log_index snapshot_index) {
  log_scan out;
  uint64_t pos = 0;
  log_index prev;
  raft_term prev_term;
  log_index prev_first;
  while (pos < content.size()) {
    auto f = read_frame(content.subspan(pos));
    if (!f) {
      out.reason = f.err().message;
      break;
    }
    const log_index index = f->e.index;
    const raft_term term = f->e.term;
    if ((prev != log_index{} && index != prev + 1) || term < prev_term) {
      out.reason = "frame out of order";
      break;
    }
    if (index > snapshot_index) {
      const log_index expected = snapshot_index + (out.entries.size() + 1);
      if (index != expected) {
        out.reason = "entry " + std::to_string(index.value()) + " leaves a gap after " +
                     std::to_string((expected - 1).value());
        out.damaged = true;
        break;
      }
      out.entries.push_back(std::move(f->e));
      out.positions.push_back(pos);
    }
    prev = index;
    prev_term = term;
    prev_first = f->append_first;
    pos += f->size;
  }
  out.valid_bytes = pos;
  if (!out.reason.empty() && !out.damaged) {
    if (snapshot_index.value() > 0 && prev == log_index{}) {
      // The first frame of a log with a snapshot was written by the atomic rewrite that followed
      // the snapshot (or by an append the snapshot covers): it cannot be torn.
      out.damaged = true;
    } else {
      const log_index next = prev == log_index{} ? snapshot_index + 1 : prev + 1;
      // An append that began at or below the snapshot index (the rewrite, or an append the
      // snapshot covers) had returned from its fsync before the snapshot was taken: the cut frame
      // can only start a new append, and a frame of that earlier one beyond it shows damage.
      const log_index continued = prev_first > snapshot_index ? prev_first : next;
      out.damaged = later_append_beyond(content, pos, next, continued);
    }
  }
  return out;
}

} // namespace capstan::raft
