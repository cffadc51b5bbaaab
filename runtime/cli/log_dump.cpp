#include "runtime/cli/log_dump.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "runtime/batch/record_batch_format.hpp"
#include "runtime/batch/record_batch_view.hpp"

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
  for (const auto& entry : fs::directory_iterator(options.dir))
    if (entry.path().extension() == ".log") files.insert(entry.path());
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
        return 1;
      }
      if (!*b) break;
      const auto& v = **b;
      if (v.last_offset().value() < options.from) continue;
      std::printf("baseOffset: %lld lastOffset: %lld count: %d position: %zu size: %zu "
                  "leaderEpoch: %d maxTimestamp: %lld crc: %u isValid: true\n",
                  static_cast<long long>(v.base_offset().value()),
                  static_cast<long long>(v.last_offset().value()), v.record_count(),
                  static_cast<size_t>(v.data().data() - data.data()), v.size_bytes(),
                  v.partition_leader_epoch().value(), static_cast<long long>(v.max_timestamp()),
                  v.crc());
      if (options.print_records)
        v.for_each_record([&](const record_view& r) {
          std::printf("| offset: %lld key: %s value: %s\n",
                      static_cast<long long>(v.base_offset().value() + r.offset_delta),
                      printable(r.key).c_str(), printable(r.value).c_str());
        });
      if (++printed >= options.max_batches) return 0;
    }
  }
  return 0;
}

} // namespace capstan::cli
