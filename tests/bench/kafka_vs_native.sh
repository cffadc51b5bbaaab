#!/usr/bin/env bash
# The same produce and consume workload through the Kafka listener (kcat, that is librdkafka) and
# through the native Cap'n Proto RPC (`capstan perf`), against one `capstan node`, for the ratio
# of the two front doors.
#
#   [ROUNDS=3] tests/bench/kafka_vs_native.sh [BUILD_DIR] [RECORDS]
#
# Starts a node on a temporary data dir with its own ports (its Kafka listener on), and each round
# writes RECORDS (default 1,000,000) 100-byte records with acks=all to a fresh single-partition
# topic through each front door, then reads them all back through the same door:
#   kafka:  `kcat -P -l FILE` (one record per line of a file made once, in the page cache),
#           linger.ms 5, batch.num.messages 10000, acks all, timed from start to exit (kcat exits
#           once every record was acknowledged); then tests/bench/kafka_consume.c, librdkafka's
#           consumer counting records without printing them, from the first record to the last
#           (`kcat -C -e` would add its output and the fetch long poll that tells it the end);
#   native: `capstan perf produce --batch-size 65536 --linger-ms 5 --acks all`; `capstan perf
#           consume`. Their own reports say records/s.
# It prints a line per run with records/s, and the Kafka/native ratio per round. Needs the
# `capstan` target built, Debian's kcat, a C compiler and librdkafka-dev (with pkg-config). Each run is bounded by RUN_TIMEOUT seconds (default
# 600); the node is stopped by pid. tests/bench/README.md says how to quote a figure.
set -euo pipefail

build=${1:-build}
records=${2:-1000000}
rounds=${ROUNDS:-3}
run_timeout=${RUN_TIMEOUT:-600}
capstan="$build/runtime/capstan"
[[ -x "$capstan" ]] || { echo "no capstan binary at $capstan (build the 'capstan' target)" >&2; exit 2; }
command -v kcat >/dev/null || { echo "kcat is missing (Debian package kcat)" >&2; exit 2; }
pkg-config --exists rdkafka 2>/dev/null ||
  { echo "librdkafka's headers are missing (Debian packages librdkafka-dev, pkg-config)" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS must be an integer >= 1, not '$rounds'" >&2; exit 2; }

dir=$(mktemp -d /tmp/capstan-bench-kafka.XXXXXX)
base=$((20000 + RANDOM % 20000))
bootstrap="127.0.0.1:$base"
kafka="127.0.0.1:$((base + 3))"
"$capstan" node --data-dir "$dir/data" --listen "$bootstrap" --cluster-listen "127.0.0.1:$((base + 1))" \
  --metrics-listen "127.0.0.1:$((base + 2))" --kafka-listen "$kafka" --log-level warn 2>"$dir/node.err" &
node_pid=$!
cleanup() {
  kill -TERM "$node_pid" 2>/dev/null || true
  wait "$node_pid" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT
# shellcheck disable=SC2046 # pkg-config's flags are words
cc -O2 -o "$dir/kafka_consume" "$(dirname "$0")/kafka_consume.c" $(pkg-config --cflags --libs rdkafka)

for _ in $(seq 1 100); do
  "$capstan" topic list --bootstrap "$bootstrap" >/dev/null 2>&1 && break
  sleep 0.1
done

# 100-byte records: 99 characters and the newline kcat splits on.
record=$(printf 'x%.0s' $(seq 1 99))
awk -v n="$records" -v r="$record" 'BEGIN { for (i = 0; i < n; ++i) print r }' >"$dir/records"

create() {
  "$capstan" topic create "$1" --partitions 1 --replication-factor 1 --bootstrap "$bootstrap" >/dev/null
}

# Records per second of $records over the seconds since $1 (date +%s.%N).
rate_since() {
  awk -v n="$records" -v t0="$1" -v t1="$(date +%s.%N)" 'BEGIN { printf "%.0f", n / (t1 - t0) }'
}

# The records/s figure of a `capstan perf` report.
perf_rate() { grep -o '[0-9.]* records/sec' | tail -1 | cut -d' ' -f1 | cut -d. -f1; }

echo "== one node on 127.0.0.1, $records records of 100 bytes, acks=all, load: $(uptime | sed 's/.*load average/load average/')"
for round in $(seq 1 "$rounds"); do
  topic="kafka-$round"
  create "$topic"
  t0=$(date +%s.%N)
  timeout "$run_timeout" kcat -b "$kafka" -P -t "$topic" -l "$dir/records" -X acks=all -X linger.ms=5 \
    -X batch.num.messages=10000 -X queue.buffering.max.messages=1000000
  kafka_produce=$(rate_since "$t0")
  kafka_consume=$(timeout "$run_timeout" "$dir/kafka_consume" "$kafka" "$topic" "$records" | perf_rate)

  topic="native-$round"
  create "$topic"
  native_produce=$(timeout "$run_timeout" "$capstan" perf produce "$topic" --records "$records" \
    --record-size 100 --acks all --batch-size 65536 --linger-ms 5 --bootstrap "$bootstrap" | perf_rate)
  native_consume=$(timeout "$run_timeout" "$capstan" perf consume "$topic" --records "$records" \
    --bootstrap "$bootstrap" | perf_rate)

  echo "round $round: produce kafka $kafka_produce native $native_produce records/s" \
    "(ratio $(awk -v a="$kafka_produce" -v b="$native_produce" 'BEGIN { printf "%.2f", a / b }'));" \
    "consume kafka $kafka_consume native $native_consume records/s" \
    "(ratio $(awk -v a="$kafka_consume" -v b="$native_consume" 'BEGIN { printf "%.2f", a / b }'))"
done
