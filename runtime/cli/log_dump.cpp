#include "runtime/cli/log_dump.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/record_batch_view.hpp"
#include "runtime/cli/exit_codes.hpp"

namespace capstan::cli {

namespace {

std::string printable(const std::optional<bytes_view>& b) {
  if (!b) return "null";
  std::string out;
  for (uint8_t c : *b) out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '.';
  return out;
}

} // namespace

int run_log_dump(const dump_options& options) {
  namespace fs = std::filesystem;
  std::set<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(options.dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".log") files.insert(it->path());
  if (ec) {
    std::fprintf(stderr, "error: capstan log dump: cannot read %s: %s\n", options.dir.c_str(), ec.message().c_str());
    return exit_failed;
  }
  if (files.empty()) {
    std::fprintf(stderr,
                 "error: capstan log dump: dir: %s holds no .log segment files; give a partition directory such as "
                 "capstan-data/orders-0\n",
                 options.dir.c_str());
    return exit_usage;
  }
  int64_t printed = 0;
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    bytes data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::printf("Dumping %s (%zu bytes)\n", file.c_str(), data.size());
    batch_sequence_reader reader(data, batch_format::default_max_batch_bytes * 100);
    for (;;) {
      auto b = reader.next();
      if (!b) {
        std::printf("position: %zu INVALID: %s\n", reader.position(), b.err().to_string().c_str());
        return exit_failed;
      }
      if (!*b) break;
      const auto& v = **b;
      if (v.last_offset().value() < options.from) continue;
      std::printf("baseOffset: %lld lastOffset: %lld count: %d position: %zu size: %zu "
                  "leaderEpoch: %d maxTimestamp: %lld compresscodec: %s crc: %u isValid: true\n",
                  static_cast<long long>(v.base_offset().value()),
                  static_cast<long long>(v.last_offset().value()), v.record_count(),
                  static_cast<size_t>(v.data().data() - data.data()), v.size_bytes(),
                  v.partition_leader_epoch().value(), static_cast<long long>(v.max_timestamp()),
                  std::string(to_string(v.codec())).c_str(), v.crc());
      if (options.print_records)
        v.for_each_record([&](const record_view& r) {
          std::printf("| offset: %lld key: %s value: %s\n",
                      static_cast<long long>(v.base_offset().value() + r.offset_delta),
                      printable(r.key).c_str(), printable(r.value).c_str());
        });
      if (++printed >= options.max_batches) return exit_ok;
    }
  }
  return exit_ok;
}

} // namespace capstan::cli
