// Random sequences of append / roll / truncate / retention / close+reopen / crash+reopen against
// a plain in-memory model of the log, compared after every step.

#include <catch2/catch.hpp>

#include <random>

#include "tests/support/log_harness.hpp"
#include "tests/support/temp_dir.hpp"

using namespace capstan;
using namespace capstan::test;

namespace {

// The model: batches as appended, minus what truncation and retention removed.
struct model_batch {
  offset first{0};
  offset last{0};
  std::vector<read_record> records;
};

struct log_model {
  std::vector<model_batch> batches;
  offset log_start{0};
  offset log_end{0};

  std::vector<read_record> records() const {
    std::vector<read_record> out;
    for (const auto& b : batches) out.insert(out.end(), b.records.begin(), b.records.end());
    return out;
  }
  // Every batch holding an offset >= to goes. With no batch left the log end is the base of
  // the segment that remains, which the model does not track: the log's answer is taken once
  // checked to lie in [log_start, to].
  void truncate(offset to, offset reported_end) {
    while (!batches.empty() && batches.back().last >= to) batches.pop_back();
    if (batches.empty()) {
      REQUIRE(reported_end >= log_start);
      REQUIRE(reported_end <= to);
      log_end = reported_end;
    } else {
      log_end = batches.back().last + 1;
    }
  }
  void drop_below(offset start) {
    while (!batches.empty() && batches.front().last < start) batches.erase(batches.begin());
    log_start = start;
  }
};

void check_same(log_harness& log, const log_model& model) {
  auto info = log.info();
  REQUIRE(info.log_end == model.log_end);
  REQUIRE(info.log_start == model.log_start);
  REQUIRE(log.read_all(model.log_start, 700) == model.records());
}

} // namespace

TEST_CASE("random operations on a partition log match an in-memory model", "[log][property]") {
  const auto seed = GENERATE(1u, 2u, 3u, 4u, 5u, 6u);
  CAPTURE(seed);
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };

  temp_dir dir;
  log_config config;
  config.segment_bytes = 1000;
  config.segment_ms = 100000;
  config.retention_bytes = 4000;
  config.retention_ms = -1;
  config.index_interval_bytes = 128;
  log_harness log(dir.path(), config);
  log.open();
  log_model model;
  offset recovery_point{0};

  for (int step = 0; step < 120; ++step) {
    const int op = pick(0, 99);
    CAPTURE(step, op);
    if (op < 60) {
      const int n = pick(1, 8);
      const std::string prefix = "s" + std::to_string(step);
      auto r = log.append(make_batch(n, prefix, log.now(), 0, static_cast<size_t>(pick(0, 60))));
      REQUIRE(r);
      REQUIRE(r->first == model.log_end);
      model_batch b{r->first, r->last, {}};
      for (int i = 0; i < n; ++i)
        b.records.push_back({r->first + i, std::nullopt, prefix + "-" + std::to_string(i), log.now()});
      // make_batch pads values; take the stored form from the log itself for the value text.
      auto stored = records_of(log.read(r->first)->bytes());
      REQUIRE(stored.size() == static_cast<size_t>(n));
      b.records = stored;
      model.batches.push_back(b);
      model.log_end = r->last + 1;
    } else if (op < 66) {
      log.advance_clock(config.segment_ms + 1); // the next append rolls
    } else if (op < 76) {
      if (model.log_end > model.log_start) {
        const offset to{pick(static_cast<int>(model.log_start.value()), static_cast<int>(model.log_end.value()))};
        CAPTURE(to.value());
        auto end = log.truncate(to);
        REQUIRE(end);
        model.truncate(to, *end);
        REQUIRE(*end == model.log_end);
      }
    } else if (op < 84) {
      REQUIRE(log.retain());
      auto start = log.info().log_start;
      REQUIRE(start >= model.log_start);
      REQUIRE(start <= model.log_end);
      model.drop_below(start);
    } else if (op < 92) {
      recovery_point = log.close();
      REQUIRE(recovery_point == model.log_end);
      log.open(recovery_point);
    } else {
      // A crash loses nothing that reached the page cache; recovery re-validates what is after
      // the last recovery point.
      log.crash();
      log.open(recovery_point);
    }
    check_same(log, model);
  }
}
