#include "tests/support/log_harness.hpp"

#include <stdexcept>

#include <caf/all.hpp>

namespace capstan::test {

log_harness::log_harness(std::filesystem::path dir, log_config config, timestamp_ms start_ms)
    : dir_(std::move(dir)), config_(config),
      now_(std::make_shared<std::atomic<timestamp_ms>>(start_ms)),
      system_(std::make_unique<threaded_system>()) {}

log_harness::~log_harness() {
  if (log_) caf::anon_send_exit(*log_, caf::exit_reason::kill);
}

void log_harness::open(offset recovery_point) {
  if (log_) throw std::logic_error("log_harness::open: already open");
  partition_log_options opts;
  opts.dir = dir_;
  opts.log_name = "test-0";
  opts.config = config_;
  opts.recovery_point = recovery_point;
  opts.clock = [now = now_] { return now->load(); };
  opts.schedule_background_work = false;
  auto log = open_partition_log(system_->sys(), opts);
  if (!log) throw std::runtime_error("open failed: " + log.err().to_string());
  log_ = *log;
}

offset log_harness::close() {
  auto rp = system_->request<offset>(*log_, timeout, close_atom_v);
  log_.reset();
  if (!rp) throw std::runtime_error("close failed: " + caf::to_string(rp.error()));
  // Segment actors quit asynchronously; a fresh system guarantees none still holds a file.
  system_ = std::make_unique<threaded_system>();
  return *rp;
}

void log_harness::crash() {
  caf::anon_send_exit(*log_, caf::exit_reason::kill);
  log_.reset();
  system_ = std::make_unique<threaded_system>();
}

caf::expected<append_result> log_harness::append(bytes batch, append_origin origin) {
  return system_->request<append_result>(*log_, timeout, append_atom_v,
                                         append_request{to_buffer(std::move(batch)), origin, leader_epoch{1}});
}

caf::expected<log_slice> log_harness::read(offset from, int64_t max_bytes, offset upto) {
  return system_->request<log_slice>(*log_, timeout, read_atom_v, read_request{from, max_bytes, upto});
}

std::vector<read_record> log_harness::read_all(offset from, int64_t max_bytes) {
  std::vector<read_record> out;
  const offset end = info().log_end;
  while (from < end) {
    auto slice = read(from, max_bytes);
    if (!slice) throw std::runtime_error("read failed: " + caf::to_string(slice.error()));
    if (slice->empty()) throw std::runtime_error("read returned nothing before the log end");
    if (reinterpret_cast<uintptr_t>(slice->data) % 8 != 0)
      throw std::runtime_error("read returned an unaligned slice");
    auto records = records_of(slice->bytes());
    out.insert(out.end(), records.begin(), records.end());
    from = slice->next_offset;
  }
  return out;
}

caf::expected<offset> log_harness::truncate(offset to) {
  return system_->request<offset>(*log_, timeout, truncate_atom_v, to);
}

void log_harness::tick() {
  caf::anon_send(*log_, tick_atom_v);
  info(); // answered after the tick ran: the log's mailbox keeps the order of arrival
}

caf::expected<offset> log_harness::flush() { return system_->request<offset>(*log_, timeout, flush_atom_v); }

caf::expected<int32_t> log_harness::retain() {
  return system_->request<int32_t>(*log_, timeout, retain_atom_v);
}

caf::expected<compaction_stats> log_harness::compact() {
  return system_->request<compaction_stats>(*log_, timeout, compact_atom_v);
}

caf::expected<int64_t> log_harness::offset_for_time(timestamp_ms ts) {
  return system_->request<int64_t>(*log_, timeout, time_atom_v, ts);
}

log_info log_harness::info() {
  auto i = system_->request<log_info>(*log_, timeout, info_atom_v);
  if (!i) throw std::runtime_error("info failed: " + caf::to_string(i.error()));
  return *i;
}

} // namespace capstan::test
