#!/usr/bin/env bash
# Produce throughput and latency with acks=all on three `capstan node` processes that run their
# own controller quorum, holding RF=3 topics with min.insync.replicas=2.
#
#   [MODES="throughput sync e2e keyed"] [ROUNDS=1] tests/bench/perf_rf3.sh [BUILD_DIR] [RECORDS]
#
# Starts three nodes with examples/lib/cluster.sh (all three controller voters, each on its own
# temporary data dir, on 127.0.0.1 ports PORT_BASE .. PORT_BASE+202; PORT_BASE defaults to a free
# base picked at random), creates one single-partition topic per mode with replication factor 3
# and min.insync.replicas=2 through the quorum's active controller, and waits until each has a
# leader and all three replicas in its ISR. Then runs, bootstrapped at all three nodes (the client
# finds each leader through Metadata), the MODES asked for (default all four), ROUNDS times
# (default 1), each with acks=all:
#   throughput: `capstan perf produce` for 100-byte records (RECORDS, default 1,000,000) and 1 KiB
#               records (RECORDS / 4), with THROUGHPUT_ARGS (default "--batch-size 65536
#               --linger-ms 5"; set it empty for the client's defaults); after each, the CPU the
#               client and the three nodes used for it, in all and per record;
#   sync:       `capstan perf produce --sync`, SYNC_RECORDS (default 20,000) 100-byte records one
#               in flight, after WARMUP (default 2,000, as the NATS peer's sync run) records
#               left out;
#   e2e:        `capstan perf e2e`, E2E_RECORDS (default 100,000) 100-byte records at E2E_RATE
#               (default 10,000) records/s, with E2E_MAX_IN_FLIGHT (default 5, the producer's
#               default) requests in flight and E2E_LINGER_MS (default 0, perf e2e's default)
#               linger.ms, after WARMUP records left out;
#   keyed:      the workload of many partitions and keys: `capstan perf produce` of RECORDS
#               100-byte records keyed over KEYS (default 10,000) keys, by PRODUCERS (default 4)
#               producers, to a topic of KEYED_PARTITIONS (default 100) partitions, then the same
#               records without keys by one producer to a single-partition topic, for the ratio
#               of the two; after each, the CPU used, as for throughput. Before the first round,
#               both run once unmeasured with KEYED_WARMUP (default RECORDS / 4) records, and
#               before each measured run `sync` writes back what earlier runs left dirty: the
#               two runs of the ratio then start alike, instead of the first paying for the
#               nodes' first touch of their memory and each for the writeback of the one before.
# It prints what perf prints, and stops every node it started by pid (examples/lib/cluster.sh's
# cluster_stop). Each perf run is bounded by RUN_TIMEOUT seconds (default 600). Needs the
# `capstan` target built.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

build=${1:-build}
records=${2:-1000000}
modes=${MODES:-throughput sync e2e keyed}
rounds=${ROUNDS:-1}
throughput_args=${THROUGHPUT_ARGS---batch-size 65536 --linger-ms 5}
sync_records=${SYNC_RECORDS:-20000}
e2e_records=${E2E_RECORDS:-100000}
e2e_rate=${E2E_RATE:-10000}
e2e_in_flight=${E2E_MAX_IN_FLIGHT:-5}
e2e_linger=${E2E_LINGER_MS:-0}
warmup=${WARMUP:-2000}
keys=${KEYS:-10000}
producers=${PRODUCERS:-4}
keyed_partitions=${KEYED_PARTITIONS:-100}
run_timeout=${RUN_TIMEOUT:-600}
capstan="$build/runtime/capstan"
[[ -x "$capstan" ]] || { echo "no capstan binary at $capstan (build the 'capstan' target)" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS must be an integer >= 1, not '$rounds'" >&2; exit 2; }
[[ $records =~ ^[1-9][0-9]*$ ]] || { echo "RECORDS must be an integer >= 1, not '$records'" >&2; exit 2; }
keyed_warmup=${KEYED_WARMUP:-$((records / 4))}
[[ $keyed_warmup =~ ^(0|[1-9][0-9]*)$ ]] || { echo "KEYED_WARMUP must be an integer >= 0, not '$keyed_warmup'" >&2; exit 2; }

# shellcheck source=SCRIPTDIR/../../examples/lib/cluster.sh
source "$here/../../examples/lib/cluster.sh"

# shellcheck source=SCRIPTDIR/ports.sh
source "$here/ports.sh"
base=${PORT_BASE:-}
[[ -n $base ]] || base=$(free_port_base) || exit 2

dir=$(mktemp -d /tmp/capstan-bench-rf3.XXXXXX)
cleanup() {
  cluster_stop "$dir" >/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT

# cluster_start creates the sync topic and waits for its ISR; the others are created below. It
# runs in a subshell: on failure it stops what it started and exits that, and its EXIT trap
# leaves this script's alone.
(CAPSTAN=$capstan EXAMPLE_DIR=$dir TOPIC=perf-rf3-sync PARTITIONS=1 CLUSTER_ID=capstan-bench-rf3 \
  CLIENT_PORTS="$base,$((base + 100)),$((base + 200))" \
  CLUSTER_PORTS="$((base + 1)),$((base + 101)),$((base + 201))" \
  METRICS_PORTS="$((base + 2)),$((base + 102)),$((base + 202))" \
  KAFKA_PORTS="$((base + 3)),$((base + 103)),$((base + 203))" \
  cluster_start 3 3 "$dir" 1 "$here") >"$dir/start.out" 2>&1 || { cat "$dir/start.out" >&2; exit 1; }
bootstrap=$(<"$dir/bootstrap")

# Creates topic $1 ($2 partitions, default 1; RF=3, min.insync.replicas=2) and waits (at most
# 60 s) until each partition has a leader and three replicas in its ISR.
create_topic() {
  local topic=$1 partitions=${2:-1} out deadline=$((SECONDS + 60))
  until out=$("$capstan" topic create "$topic" --partitions "$partitions" --replication-factor 3 \
    --config min.insync.replicas=2 --bootstrap "$bootstrap" 2>&1) || [[ $out == *TOPIC_ALREADY_EXISTS* ]]; do
    ((SECONDS < deadline)) || { echo "topic $topic not created: $out" >&2; exit 1; }
    sleep 0.5
  done
  until out=$("$capstan" topic describe "$topic" --bootstrap "$bootstrap" 2>&1) &&
    awk -v p="$partitions" '/Partition: / { n++; for (f = 1; f <= NF; f++) {
        if ($f == "Leader:" && $(f + 1) == "none") bad = 1
        if ($f == "Isr:" && split($(f + 1), isr, ",") != 3) bad = 1 } }
      END { exit !(n == p && !bad) }' <<<"$out"; do
    ((SECONDS < deadline)) || { echo "topic $topic has no leader or not 3 replicas in sync: $out" >&2; exit 1; }
    sleep 0.5
  done
}

for mode in $modes; do
  case $mode in
    throughput) create_topic perf-rf3-100; create_topic perf-rf3-1024 ;;
    sync) ;;
    e2e) create_topic perf-rf3-e2e ;;
    keyed) create_topic perf-rf3-keyed "$keyed_partitions"; create_topic perf-rf3-unkeyed ;;
    *) echo "unknown mode '$mode' in MODES (throughput, sync, e2e, keyed)" >&2; exit 2 ;;
  esac
done
echo "== three quorum nodes on 127.0.0.1 ($bootstrap), load: $(uptime | sed 's/.*load average/load average/')"

# CPU ticks (user + system) used so far by the nodes, and by this script's children that have
# ended (a perf run once it is waited for): read around each throughput run, they give the CPU a
# record costs, a figure far steadier than records/s on a machine whose cores the nodes share.
tick_hz=$(getconf CLK_TCK)
nodes_cpu_ticks() {
  local id pid total=0
  for id in $(node_ids "$dir"); do
    pid=$(live_pid "$dir" "$id")
    [[ -n $pid ]] && total=$((total + $(awk '{ print $14 + $15 }' "/proc/$pid/stat")))
  done
  echo "$total"
}
ended_children_cpu_ticks() { awk '{ print $16 + $17 }' "/proc/$$/stat"; }
# cpu_per_record RECORDS CLIENT_TICKS NODES_TICKS
cpu_per_record() {
  awk -v n="$1" -v c="$2" -v s="$3" -v hz="$tick_hz" 'BEGIN {
    printf "CPU: client %.2f s, nodes %.2f s; per record: client %.2f us, nodes %.2f us\n",
      c / hz, s / hz, c / hz / n * 1e6, s / hz / n * 1e6 }'
}

# keyed_run N / unkeyed_run N: the two runs of the keyed mode, N records each.
keyed_run() {
  timeout "$run_timeout" "$capstan" perf produce perf-rf3-keyed --records "$1" --record-size 100 \
    --keys "$keys" --producers "$producers" --acks all --bootstrap "$bootstrap"
}
unkeyed_run() {
  timeout "$run_timeout" "$capstan" perf produce perf-rf3-unkeyed --records "$1" --record-size 100 \
    --acks all --bootstrap "$bootstrap"
}

for round in $(seq 1 "$rounds"); do
  ((rounds == 1)) || echo "== round $round of $rounds"
  for mode in $modes; do
    case $mode in
      throughput)
        for size in 100 1024; do
          n=$records
          ((size >= 1024)) && n=$((records / 4))
          echo "== perf produce: $n records of $size bytes, acks=all, RF=3, min.insync.replicas=2"
          client0=$(ended_children_cpu_ticks) nodes0=$(nodes_cpu_ticks)
          # shellcheck disable=SC2086 # THROUGHPUT_ARGS is a list of options
          timeout "$run_timeout" "$capstan" perf produce "perf-rf3-$size" --records "$n" --record-size "$size" \
            --acks all $throughput_args --bootstrap "$bootstrap"
          cpu_per_record "$n" $(($(ended_children_cpu_ticks) - client0)) $(($(nodes_cpu_ticks) - nodes0))
        done
        ;;
      sync)
        echo "== perf produce --sync: $sync_records records of 100 bytes one in flight, acks=all, RF=3, min.insync.replicas=2"
        timeout "$run_timeout" "$capstan" perf produce perf-rf3-sync --sync --records "$sync_records" \
          --warmup-records "$warmup" --record-size 100 --acks all --bootstrap "$bootstrap"
        ;;
      e2e)
        echo "== perf e2e: $e2e_records records of 100 bytes at $e2e_rate/s, $e2e_in_flight in flight, linger.ms $e2e_linger, acks=all, RF=3, min.insync.replicas=2"
        timeout "$run_timeout" "$capstan" perf e2e perf-rf3-e2e --records "$e2e_records" --throughput "$e2e_rate" \
          --record-size 100 --acks all --max-in-flight "$e2e_in_flight" --linger-ms "$e2e_linger" \
          --warmup-records "$warmup" --bootstrap "$bootstrap"
        ;;
      keyed)
        if ((round == 1 && keyed_warmup > 0)); then
          echo "== warm-up, not measured: $keyed_warmup records keyed, then $keyed_warmup without keys"
          keyed_run "$keyed_warmup" >/dev/null
          unkeyed_run "$keyed_warmup" >/dev/null
        fi
        echo "== perf produce: $records records of 100 bytes keyed over $keys keys, $producers producers, $keyed_partitions partitions, acks=all, RF=3, min.insync.replicas=2"
        sync
        client0=$(ended_children_cpu_ticks) nodes0=$(nodes_cpu_ticks)
        keyed_run "$records"
        cpu_per_record "$records" $(($(ended_children_cpu_ticks) - client0)) $(($(nodes_cpu_ticks) - nodes0))
        echo "== perf produce: $records records of 100 bytes without keys, 1 producer, 1 partition, acks=all, RF=3, min.insync.replicas=2"
        sync
        client0=$(ended_children_cpu_ticks) nodes0=$(nodes_cpu_ticks)
        unkeyed_run "$records"
        cpu_per_record "$records" $(($(ended_children_cpu_ticks) - client0)) $(($(nodes_cpu_ticks) - nodes0))
        ;;
    esac
  done
done
