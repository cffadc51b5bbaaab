#!/usr/bin/env bash
# The hand-offs between threads on one RF=3 acks=all round trip, read from the kernel's scheduler
# events instead of probes in the code.
#
#   [SECONDS_RECORDED=3] [FLOOR=1] tests/bench/wake_chain.sh [BUILD_DIR]
#
# Runs `MODES=sync perf_rf3.sh` (three nodes, one record in flight), or with FLOOR=1 the CAF floor
# (`bench_hop_floor --write --caf --io-worker`, the same crossings with no broker in them). Once
# its records flow, it names every thread of the nodes and the client by its role (thread name,
# and whether it waits in epoll: a node's CAF multiplexer and its RPC thread do, its scheduler
# workers and I/O worker do not; the leader is the node whose RPC thread, in the floor the thread
# that reads the client, switches most), records `sched:sched_waking` and `sched:sched_switch` on
# all CPUs for SECONDS_RECORDED seconds with `perf record`, and hands both to wake_chain.py, which
# prints the median time of each crossing on the path, the wake-ups per record by thread, and how
# long a woken thread waited for a CPU (by thread, and by whether it was woken on the waker's CPU
# or on another, idle or busy).
# Needs root (or perf_event_paranoid -1), linux-perf and the `capstan` target (FLOOR=1:
# `bench_hop_floor`). Stops the cluster through perf_rf3.sh, whose records are bounded by its
# RUN_TIMEOUT; the floor ends by itself after its round trips, and is stopped by pid on an error.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:-build}
recorded_s=${SECONDS_RECORDED:-3}
floor=${FLOOR:-0}
command -v perf >/dev/null || { echo "wake_chain.sh needs perf (Debian: linux-perf)" >&2; exit 2; }
[[ $recorded_s =~ ^[1-9][0-9]?$ ]] || { echo "SECONDS_RECORDED must be 1-99, not '$recorded_s'" >&2; exit 2; }

work=$(mktemp -d /tmp/capstan-wake-chain.XXXXXX)
bench_pid=""
nodes=""
cleanup() {
  if [[ -n $bench_pid ]]; then
    # The floor's children are its nodes; perf_rf3.sh stops its own.
    [[ $floor == 1 ]] && for p in $nodes; do kill "$p" 2>/dev/null || true; done
    kill "$bench_pid" 2>/dev/null && wait "$bench_pid" 2>/dev/null
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# Enough records to outlast the recording at a few thousand per second.
records=$((recorded_s * 4000 + 20000))
client=""
if [[ $floor == 1 ]]; then
  [[ -x $build/tests/bench_hop_floor ]] || { echo "no $build/tests/bench_hop_floor (build the target)" >&2; exit 2; }
  "$build/tests/bench_hop_floor" "$records" --write --caf --io-worker >"$work/perf.log" 2>&1 &
  bench_pid=$!
  client=$bench_pid
  for _ in $(seq 60); do
    nodes=$(pgrep -P "$client" || true)
    [[ $(wc -w <<<"$nodes") == 3 ]] && break
    sleep 0.5
  done
  [[ $(wc -w <<<"$nodes") == 3 ]] || { cat "$work/perf.log" >&2; echo "the floor did not start its three nodes" >&2; exit 1; }
else
  MODES=sync SYNC_RECORDS=$records "$here/perf_rf3.sh" "$build" >"$work/perf.log" 2>&1 &
  bench_pid=$!
  # The client process: the `capstan perf produce` whose own name is capstan (not its timeout).
  for _ in $(seq 120); do
    for p in $(pgrep -f "capstan perf produce" || true); do
      [[ $(cat "/proc/$p/comm" 2>/dev/null) == capstan ]] && client=$p
    done
    [[ -n $client ]] && break
    sleep 0.5
  done
  [[ -n $client ]] || { cat "$work/perf.log" >&2; echo "no perf produce process started" >&2; exit 1; }
  nodes=$(pgrep -f "$build/runtime/capstan node" || true)
fi
sleep 3 # past the warm-up

# One line per thread: process, thread, name, context switches so far, and whether it was seen
# waiting in epoll in any of 20 looks 50 ms apart.
for p in $nodes $client; do
  for t in /proc/"$p"/task/*; do echo "$p ${t##*/}"; done
done >"$work/threads"
declare -A epoll
for _ in $(seq 20); do
  while read -r p t; do
    [[ $(cat "/proc/$p/task/$t/wchan" 2>/dev/null) == do_epoll_wait ]] && epoll[$t]=1
  done <"$work/threads"
  sleep 0.05
done
while read -r p t; do
  cs=$(awk '/^(voluntary|nonvoluntary)_ctxt/ {s += $2} END {print s + 0}' "/proc/$p/task/$t/status" 2>/dev/null || echo 0)
  kind=node
  [[ $p == "$client" ]] && kind=client
  echo "$kind $p $t $(cat "/proc/$p/task/$t/comm" 2>/dev/null || echo gone) $cs ${epoll[$t]:-0}"
done <"$work/threads" >"$work/roles"

perf record -q -e sched:sched_waking -e sched:sched_switch -a -o "$work/sched.data" -- sleep "$recorded_s" 2>/dev/null
perf script -i "$work/sched.data" -F tid,cpu,time,event,trace 2>/dev/null >"$work/sched.txt"
wait "$bench_pid" || true
bench_pid=""
grep -E "^== three|sent one at a time|round trips" "$work/perf.log" || true
mode=""
[[ $floor == 1 ]] && mode=floor
/usr/bin/python3 "$here/wake_chain.py" "$work/roles" "$work/sched.txt" $mode
