// Benchmark: append and sequential read throughput of a partition log through its actors, beside
// a raw sequential write loop on the same disk in the same run (tests/bench/README.md).
//
//   build/tests/bench_log [--dir DIR] [--mib N] [--batch-kib K] [--record-bytes B] [--inflight W]
//
// Defaults: 512 MiB in 16 KiB batches of 100-byte records, 64 appends in flight, in $TMPDIR.
// No fsync on either side (Kafka's default durability: the page cache and periodic flush).

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <future>
#include <string>
#include <unistd.h>

#include <caf/all.hpp>

#include "actors/log/partition_log_actor.hpp"
#include "runtime/actor/actor_system_setup.hpp"
#include "runtime/batch/record_batch_builder.hpp"

using namespace capstan;
using clock_type = std::chrono::steady_clock;

namespace {

struct bench_options {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "capstan-bench-log";
  int64_t mib = 512;
  int64_t batch_kib = 16;
  size_t record_bytes = 100;
  int inflight = 64;
};

double seconds_since(clock_type::time_point t) {
  return std::chrono::duration<double>(clock_type::now() - t).count();
}

bytes build_batch(const bench_options& o) {
  record_batch_builder b(offset{0}, 1'700'000'000'000);
  std::string value(o.record_bytes, 'v');
  const size_t target = static_cast<size_t>(o.batch_kib) * 1024;
  while (b.size_bytes() + o.record_bytes + 16 <= target)
    b.add(std::nullopt, bytes_view{reinterpret_cast<const uint8_t*>(value.data()), value.size()},
          1'700'000'000'000);
  return b.build();
}

double raw_write_mb_s(const bench_options& o, const bytes& batch, int64_t count) {
  auto path = o.dir / "raw-write.bin";
  int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  if (fd < 0) {
    std::perror("open");
    std::exit(1);
  }
  auto start = clock_type::now();
  for (int64_t i = 0; i < count; ++i) {
    if (::write(fd, batch.data(), batch.size()) != static_cast<ssize_t>(batch.size())) {
      std::perror("write");
      std::exit(1);
    }
  }
  double secs = seconds_since(start);
  ::close(fd);
  std::filesystem::remove(path);
  return static_cast<double>(batch.size()) * count / secs / 1e6;
}

struct driver_state {
  int64_t sent = 0;
  int64_t done = 0;
};

// Keeps `inflight` appends outstanding until `count` completed, then fulfils `finished`.
void append_driver(caf::stateful_actor<driver_state>* self, partition_log_actor log, bytes batch,
                   int64_t count, int inflight, std::shared_ptr<std::promise<void>> finished) {
  auto send_one = std::make_shared<std::function<void()>>();
  *send_one = [=] {
    if (self->state.sent == count) return;
    ++self->state.sent;
    self->request(log, caf::infinite, append_atom_v,
                  append_request{batch_buffer::of(batch), append_origin::leader, leader_epoch{0}})
      .then(
        [=](const append_result&) {
          if (++self->state.done == count) {
            finished->set_value();
            self->quit();
            return;
          }
          (*send_one)();
        },
        [=](caf::error& e) {
          std::fprintf(stderr, "append failed: %s\n", caf::to_string(e).c_str());
          std::exit(1);
        });
  };
  for (int i = 0; i < inflight; ++i) (*send_one)();
}

} // namespace

int main(int argc, char** argv) {
  bench_options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--dir") o.dir = argv[i + 1];
    else if (flag == "--mib") o.mib = std::stoll(argv[i + 1]);
    else if (flag == "--batch-kib") o.batch_kib = std::stoll(argv[i + 1]);
    else if (flag == "--record-bytes") o.record_bytes = std::stoul(argv[i + 1]);
    else if (flag == "--inflight") o.inflight = std::stoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  std::filesystem::remove_all(o.dir);
  std::filesystem::create_directories(o.dir);
  const bytes batch = build_batch(o);
  const int64_t count = o.mib * 1024 * 1024 / static_cast<int64_t>(batch.size());
  const double total_mb = static_cast<double>(batch.size()) * count / 1e6;

  const double raw = raw_write_mb_s(o, batch, count);

  actor_config cfg;
  caf::actor_system sys{cfg};
  partition_log_options opts;
  opts.dir = o.dir / "bench-0";
  opts.log_name = "bench-0";
  auto log = open_partition_log(sys, opts);
  if (!log) {
    std::fprintf(stderr, "open: %s\n", log.err().to_string().c_str());
    return 1;
  }
  auto finished = std::make_shared<std::promise<void>>();
  auto start = clock_type::now();
  sys.spawn(append_driver, *log, batch, count, o.inflight, finished);
  finished->get_future().wait();
  const double append_secs = seconds_since(start);

  int64_t read_bytes = 0;
  offset from{0};
  start = clock_type::now();
  {
    caf::scoped_actor self{sys};
    for (bool more = true; more;) {
      self->request(*log, caf::infinite, read_atom_v, read_request{from, 1 << 20})
        .receive(
          [&](const log_slice& s) {
            read_bytes += static_cast<int64_t>(s.size);
            from = s.next_offset;
            more = !s.empty();
          },
          [&](caf::error& e) {
            std::fprintf(stderr, "read: %s\n", caf::to_string(e).c_str());
            more = false;
          });
    }
    self->request(*log, caf::infinite, close_atom_v).receive([](offset) {}, [](caf::error&) {});
  }
  const double read_secs = seconds_since(start);

  const double append_mb_s = total_mb / append_secs;
  std::printf("batch: %zu bytes, %lld batches, %.0f MB\n", batch.size(),
              static_cast<long long>(count), total_mb);
  std::printf("raw sequential write: %8.1f MB/s\n", raw);
  std::printf("log append (actors):  %8.1f MB/s  %9.0f batches/s  (%.0f%% of raw)\n", append_mb_s,
              count / append_secs, 100.0 * append_mb_s / raw);
  std::printf("log sequential read:  %8.1f MB/s\n", read_bytes / read_secs / 1e6);
  std::filesystem::remove_all(o.dir);
  return 0;
}
