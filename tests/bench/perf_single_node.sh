#!/usr/bin/env bash
# Produce and consume throughput against one `capstan node` (issue 3, section 7).
#
#   tests/bench/perf_single_node.sh [BUILD_DIR] [RECORDS]
#
# Starts a node on a temporary data dir with its own ports, creates one topic per run, runs
# `capstan perf produce` for 100-byte and 1 KiB records with acks=1 and acks=all, then
# `capstan perf consume` over what was written, prints every result, and stops the node by pid.
# Results from this machine go in tests/bench/README.md.
set -euo pipefail

build=${1:-build}
records=${2:-1000000}
capstan="$build/runtime/capstan"
[[ -x "$capstan" ]] || { echo "no capstan binary at $capstan (build the 'capstan' target)" >&2; exit 2; }

dir=$(mktemp -d /tmp/capstan-bench.XXXXXX)
base=$((20000 + RANDOM % 20000))
rpc=$base; cluster=$((base + 1)); metrics=$((base + 2))
bootstrap="127.0.0.1:$rpc"

"$capstan" node --data-dir "$dir/data" --listen "$bootstrap" --cluster-listen "127.0.0.1:$cluster" \
  --metrics-listen "127.0.0.1:$metrics" --log-level warn 2>"$dir/node.err" &
node_pid=$!
cleanup() {
  kill -TERM "$node_pid" 2>/dev/null || true
  wait "$node_pid" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

for _ in $(seq 1 100); do
  "$capstan" topic list --bootstrap "$bootstrap" >/dev/null 2>&1 && break
  sleep 0.1
done

run() {
  local size=$1 acks=$2
  local topic="perf-${size}-${acks}"
  local n=$records
  (( size >= 1024 )) && n=$((records / 4))
  "$capstan" topic create "$topic" --partitions 1 --replication-factor 1 --bootstrap "$bootstrap" >/dev/null
  echo "== perf produce: $n records of $size bytes, acks=$acks"
  "$capstan" perf produce "$topic" --records "$n" --record-size "$size" --acks "$acks" \
    --batch-size 65536 --linger-ms 5 --bootstrap "$bootstrap"
  echo "== perf consume: $n records of $size bytes"
  "$capstan" perf consume "$topic" --records "$n" --bootstrap "$bootstrap"
}

for size in 100 1024; do
  for acks in 1 all; do
    run "$size" "$acks"
  done
done
