#!/usr/bin/env bash
# Runs the libFuzzer targets longer than `ctest -L fuzz` does and reports what each run did:
# executions, executions per second, coverage (libFuzzer's cov: covered edges, out of the
# instrumented ones, and ft: features) and the size of the corpus it grew.
#
# Usage: tests/fuzz/run.sh [TARGET|all] [SECONDS]      (default: all, 300 seconds each)
#   TARGET: record_batch rpc_request envelope segment_recovery config
#   FUZZ_COVERAGE_REPORT=1 also writes the covered and uncovered functions (libFuzzer's
#   -print_coverage=1; names need llvm-symbolizer, Debian package llvm-14) to
#   build-check/fuzz-work/TARGET/coverage.txt and counts capstan's own.
# Builds build-check (clang) first. New inputs accumulate in build-check/fuzz-work/TARGET/corpus,
# kept between runs and never written to the checked-in tests/fuzz/corpus. A crash leaves its
# input in build-check/fuzz-work/TARGET/artifacts/ and makes the script exit 1 after the other
# targets ran (tests/fuzz/README.md says what to do with it).
set -euo pipefail
cd "$(dirname "$0")/../.."

all_targets=(record_batch rpc_request envelope segment_recovery config)
which="${1:-all}"
seconds="${2:-300}"
if [[ "$which" == all ]]; then
  targets=("${all_targets[@]}")
elif [[ " ${all_targets[*]} " == *" $which "* ]]; then
  targets=("$which")
else
  echo "run.sh: unknown target '$which' (one of: ${all_targets[*]}, all)" >&2
  exit 2
fi
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || ((seconds == 0)); then
  echo "run.sh: SECONDS must be a positive integer, not '$seconds'" >&2
  exit 2
fi

cmake -S . -B build-check -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCAPSTAN_FUZZ=ON \
  -DCAPSTAN_TEST_TIERS=unit -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ >/dev/null
cmake --build build-check -j2 --target "${targets[@]/%/_fuzz}" >/dev/null

# segment_recovery rewrites a partition directory under $TMPDIR on every run: keep it in memory
# when the machine allows.
if [[ -z "${TMPDIR:-}" && -d /dev/shm && -w /dev/shm ]]; then export TMPDIR=/dev/shm; fi

failed=()
for t in "${targets[@]}"; do
  work="build-check/fuzz-work/$t"
  mkdir -p "$work/corpus" "$work/artifacts"
  log="$work/last-run.log"
  extra=()
  if [[ "${FUZZ_COVERAGE_REPORT:-0}" == 1 ]]; then extra+=(-print_coverage=1); fi
  echo "== $t: fuzzing for ${seconds} s (log: $log)"
  status=0
  "build-check/tests/fuzz/${t}_fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$work/artifacts/" "${extra[@]}" \
    "$work/corpus" "tests/fuzz/corpus/$t" >"$log" 2>&1 || status=$?
  pcs=$(sed -n 's/.*PC tables (\([0-9]*\) PCs).*/\1/p' "$log" | head -1)
  last=$(grep -E '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE)' "$log" | tail -1 || true)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([^ ]*\).*/\1/p' <<<"$last")
  echo "   executions: ${execs:-?} (${rate:-?}/s); coverage: ${cov:-?} of ${pcs:-?} edges," \
    "${ft:-?} features; corpus: ${corp:-?} (inputs/bytes)"
  if [[ "${FUZZ_COVERAGE_REPORT:-0}" == 1 ]]; then
    grep -E '^(COVERED_FUNC|UNCOVERED_FUNC|COVERAGE)' "$log" >"$work/coverage.txt" || true
    ours=$(grep -E '/(runtime|actors)/' "$work/coverage.txt" || true)
    echo "   capstan functions (runtime/, actors/; lambdas and template instances count apart):" \
      "$(grep -c '^COVERED_FUNC' <<<"$ours") reached, $(grep -c '^UNCOVERED_FUNC' <<<"$ours") not" \
      "($work/coverage.txt)"
  fi
  if ((status != 0)); then
    failed+=("$t")
    echo "   FAILED (exit $status): $(grep -E 'SUMMARY|ERROR:' "$log" | head -1)"
    echo "   input: $(ls -t "$work/artifacts" | head -1 | sed "s|^|$work/artifacts/|")"
  fi
done

if ((${#failed[@]} > 0)); then
  echo "run.sh: crashes in: ${failed[*]}" >&2
  exit 1
fi
