#!/usr/bin/env bash
# Produce throughput and latency with acks=all on three `capstan node` processes holding RF=3
# topics with min.insync.replicas=2 (issue 7, sections 3 and 6).
#
#   [MODES="throughput sync e2e"] tests/bench/perf_rf3.sh [BUILD_DIR] [RECORDS]
#
# Starts three nodes on temporary data dirs, each listening on ports the kernel picks on
# 127.0.0.1, and bench_rf3_controller, which plays the controller (this script predates
# --controller-quorum; tests/bench/README.md says how to measure nodes running their own quorum):
# it places one single-partition topic per run on all three nodes, led by nodes 1, 2 and 3 in
# turn, every node in the ISR. Then runs, bootstrapped at node 2 (the client finds each leader
# through Metadata), the MODES asked for (default all three), each with acks=all:
#   throughput: `capstan perf produce` for 100-byte records (RECORDS, default 1,000,000) and 1 KiB
#               records (RECORDS / 4);
#   sync:       `capstan perf produce --sync`, SYNC_RECORDS (default 20,000) 100-byte records one
#               in flight;
#   e2e:        `capstan perf e2e`, E2E_RECORDS (default 100,000) 100-byte records at E2E_RATE
#               (default 10,000) records/s.
# It prints what perf prints, and stops every process it started by pid. Each perf run is bounded
# by RUN_TIMEOUT seconds (default 600). Needs the `capstan` and `bench_rf3_controller` targets built.
set -euo pipefail

build=${1:-build}
records=${2:-1000000}
modes=${MODES:-throughput sync e2e}
sync_records=${SYNC_RECORDS:-20000}
e2e_records=${E2E_RECORDS:-100000}
e2e_rate=${E2E_RATE:-10000}
run_timeout=${RUN_TIMEOUT:-600}
capstan="$build/runtime/capstan"
controller="$build/tests/bench_rf3_controller"
[[ -x "$capstan" ]] || { echo "no capstan binary at $capstan (build the 'capstan' target)" >&2; exit 2; }
[[ -x "$controller" ]] || { echo "no $controller (build the 'bench_rf3_controller' target)" >&2; exit 2; }

dir=$(mktemp -d /tmp/capstan-bench-rf3.XXXXXX)
node_pids=()
controller_pid=
cleanup() {
  # The controller first, then the nodes; each by the pid this script started.
  [[ -n "$controller_pid" ]] && { kill -TERM "$controller_pid" 2>/dev/null || true; wait "$controller_pid" 2>/dev/null || true; }
  for pid in "${node_pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${node_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT

# Waits (at most 30 s) until `pattern` appears in `file`, as long as process `pid` runs.
wait_for() {
  local file=$1 pattern=$2 pid=$3
  for _ in $(seq 1 300); do
    grep -q "$pattern" "$file" 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "gave up waiting for '$pattern' in $file:" >&2
  cat "$file" >&2
  return 1
}

nodes=()
client_ports=()
for id in 1 2 3; do
  "$capstan" node --node-id "$id" --data-dir "$dir/node-$id" --listen 127.0.0.1:0 \
    --cluster-listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 2>"$dir/node-$id.err" &
  node_pids+=($!)
  wait_for "$dir/node-$id.err" "ready; stop with" "$!"
  ports=$(sed -n 's/.*client RPC on 127\.0\.0\.1:\([0-9]*\), cluster on 127\.0\.0\.1:\([0-9]*\).*/\1 \2/p' \
    "$dir/node-$id.err")
  read -r client cluster <<<"$ports"
  nodes+=(--node "$id:$client:$cluster")
  client_ports+=("$client")
done

topics=(--topic perf-rf3-100 --topic perf-rf3-1024 --topic perf-rf3-sync --topic perf-rf3-e2e)
"$controller" "${nodes[@]}" "${topics[@]}" --min-insync-replicas 2 >"$dir/controller.out" 2>&1 &
controller_pid=$!
wait_for "$dir/controller.out" "^ready" "$controller_pid"

bootstrap="127.0.0.1:${client_ports[1]}"
for mode in $modes; do
  case $mode in
    throughput)
      for size in 100 1024; do
        n=$records
        (( size >= 1024 )) && n=$((records / 4))
        echo "== perf produce: $n records of $size bytes, acks=all, RF=3, min.insync.replicas=2"
        timeout "$run_timeout" "$capstan" perf produce "perf-rf3-$size" --records "$n" --record-size "$size" \
          --acks all --batch-size 65536 --linger-ms 5 --bootstrap "$bootstrap"
      done
      ;;
    sync)
      echo "== perf produce --sync: $sync_records records of 100 bytes one in flight, acks=all, RF=3, min.insync.replicas=2"
      timeout "$run_timeout" "$capstan" perf produce perf-rf3-sync --sync --records "$sync_records" \
        --record-size 100 --acks all --bootstrap "$bootstrap"
      ;;
    e2e)
      echo "== perf e2e: $e2e_records records of 100 bytes at $e2e_rate/s, acks=all, RF=3, min.insync.replicas=2"
      timeout "$run_timeout" "$capstan" perf e2e perf-rf3-e2e --records "$e2e_records" --throughput "$e2e_rate" \
        --record-size 100 --acks all --bootstrap "$bootstrap"
      ;;
    *) echo "unknown mode '$mode' in MODES (throughput, sync, e2e)" >&2; exit 2 ;;
  esac
done
