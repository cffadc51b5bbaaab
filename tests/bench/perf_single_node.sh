#!/usr/bin/env bash
# Produce and consume throughput and latency against one `capstan node`, and what the idempotent
# producer costs.
#
#   [MODES="throughput sync e2e idempotence"] [ACKS="1 all"] tests/bench/perf_single_node.sh [BUILD_DIR] [RECORDS]
#
# Starts a node on a temporary data dir with its own ports, creates one topic per run, and runs
# the MODES asked for (default the first three):
#   throughput: `capstan perf produce` for 100-byte and 1 KiB records with each acks of ACKS
#               (default "1 all"; acks all is idempotent, acks 1 is not), then
#               `capstan perf consume` over what was written;
#   idempotence: `capstan perf produce` of RECORDS 100-byte records, acks all, with
#               `--idempotence false` then `--idempotence true`, IDEMPOTENCE_ROUNDS times
#               (default 1), each on a topic of its own;
#   sync:       `capstan perf produce --sync`, SYNC_RECORDS (default 20,000) 100-byte records one
#               in flight, acks=1;
#   e2e:        `capstan perf e2e`, E2E_RECORDS (default 100,000) 100-byte records at E2E_RATE
#               (default 10,000) records/s, acks=1.
# It prints every result and stops the node by pid. Each perf run is bounded by RUN_TIMEOUT
# seconds (default 600). tests/bench/README.md says how to quote a figure.
set -euo pipefail

build=${1:-build}
records=${2:-1000000}
modes=${MODES:-throughput sync e2e}
acks_list=${ACKS:-1 all}
sync_records=${SYNC_RECORDS:-20000}
e2e_records=${E2E_RECORDS:-100000}
e2e_rate=${E2E_RATE:-10000}
idempotence_rounds=${IDEMPOTENCE_ROUNDS:-1}
run_timeout=${RUN_TIMEOUT:-600}
capstan="$build/runtime/capstan"
[[ -x "$capstan" ]] || { echo "no capstan binary at $capstan (build the 'capstan' target)" >&2; exit 2; }

dir=$(mktemp -d /tmp/capstan-bench.XXXXXX)
base=$((20000 + RANDOM % 20000))
rpc=$base; cluster=$((base + 1)); metrics=$((base + 2))
bootstrap="127.0.0.1:$rpc"

"$capstan" node --data-dir "$dir/data" --listen "$bootstrap" --cluster-listen "127.0.0.1:$cluster" \
  --metrics-listen "127.0.0.1:$metrics" --kafka-listen "" --log-level warn 2>"$dir/node.err" &
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

create() {
  "$capstan" topic create "$1" --partitions 1 --replication-factor 1 --bootstrap "$bootstrap" >/dev/null
}

run() {
  local size=$1 acks=$2
  local topic="perf-${size}-${acks}"
  local n=$records
  (( size >= 1024 )) && n=$((records / 4))
  create "$topic"
  echo "== perf produce: $n records of $size bytes, acks=$acks"
  timeout "$run_timeout" "$capstan" perf produce "$topic" --records "$n" --record-size "$size" --acks "$acks" \
    --batch-size 65536 --linger-ms 5 --bootstrap "$bootstrap"
  echo "== perf consume: $n records of $size bytes"
  timeout "$run_timeout" "$capstan" perf consume "$topic" --records "$n" --bootstrap "$bootstrap"
}

for mode in $modes; do
  case $mode in
    throughput)
      for size in 100 1024; do
        for acks in $acks_list; do
          run "$size" "$acks"
        done
      done
      ;;
    sync)
      create perf-sync
      echo "== perf produce --sync: $sync_records records of 100 bytes one in flight, acks=1"
      timeout "$run_timeout" "$capstan" perf produce perf-sync --sync --records "$sync_records" \
        --record-size 100 --acks 1 --bootstrap "$bootstrap"
      ;;
    e2e)
      create perf-e2e
      echo "== perf e2e: $e2e_records records of 100 bytes at $e2e_rate/s, acks=1"
      timeout "$run_timeout" "$capstan" perf e2e perf-e2e --records "$e2e_records" --throughput "$e2e_rate" \
        --record-size 100 --acks 1 --bootstrap "$bootstrap"
      ;;
    idempotence)
      for round in $(seq 1 "$idempotence_rounds"); do
        for idem in false true; do
          create "perf-idem-$idem-$round"
          echo "== perf produce: $records records of 100 bytes, acks=all, idempotence=$idem (round $round)"
          timeout "$run_timeout" "$capstan" perf produce "perf-idem-$idem-$round" --records "$records" \
            --record-size 100 --acks all --idempotence "$idem" --batch-size 65536 --linger-ms 5 \
            --bootstrap "$bootstrap"
        done
      done
      ;;
    *) echo "unknown mode '$mode' in MODES (throughput, sync, e2e, idempotence)" >&2; exit 2 ;;
  esac
done
