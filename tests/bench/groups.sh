#!/usr/bin/env bash
# Consumer-group figures on three `capstan node` processes (RF=3 topics, min.insync.replicas=2,
# group.initial.rebalance.delay.ms=0 so that a lone member's join does not wait for others):
#
#   [ROUNDS=3] [COMMITS=5000] [RECORDS=500000] tests/bench/groups.sh [BUILD_DIR]
#
# Each round measures:
#   commit:   bench_group_commit, COMMITS offset commits one in flight (acks=-1 on
#             __consumer_offsets, RF=3): commits/s and p50/p99/max latency;
#   handover: two `capstan consume --group` members of a 6-partition topic
#             (session.timeout.ms=6000, heartbeat.interval.ms=500); one is killed with SIGKILL,
#             and the time until `groups describe --members` shows the other holding all six
#             partitions is printed (aim: the session timeout plus 1 s);
#   join:     bench_group_join, once with cooperative-sticky and once with range: two members
#             read a record per partition every 5 ms; a third joins; the longest gap in reading
#             the partitions that stay with their member and in those that move, beside the
#             longest gap before the join (aim with cooperative-sticky: the kept partitions
#             never stop, their gap stays as before the join);
#   consume:  RECORDS 100-byte records read from the beginning by `capstan consume --group`
#             (a fresh group each round) and by `capstan consume` of every partition without a
#             group: the wall time of each, and their ratio (aim: within 10%).
# Starts and stops the nodes by pid (examples/lib/cluster.sh). Needs the `capstan`,
# `bench_group_commit` and `bench_group_join` targets built. Every wait is bounded (RUN_TIMEOUT, default 300 s).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

build=${1:-build}
rounds=${ROUNDS:-3}
commits=${COMMITS:-5000}
records=${RECORDS:-500000}
run_timeout=${RUN_TIMEOUT:-300}
capstan="$build/runtime/capstan"
commit_bench="$build/tests/bench_group_commit"
join_bench="$build/tests/bench_group_join"
[[ -x "$capstan" ]] || { echo "no capstan binary at $capstan (build the 'capstan' target)" >&2; exit 2; }
[[ -x "$commit_bench" ]] || { echo "no $commit_bench (build the 'bench_group_commit' target)" >&2; exit 2; }
[[ -x "$join_bench" ]] || { echo "no $join_bench (build the 'bench_group_join' target)" >&2; exit 2; }

# shellcheck source=SCRIPTDIR/../../examples/lib/cluster.sh
source "$here/../../examples/lib/cluster.sh"

# shellcheck source=SCRIPTDIR/ports.sh
source "$here/ports.sh"
base=$(free_port_base) || exit 2

dir=$(mktemp -d /tmp/capstan-bench-groups.XXXXXX)
members=()
cleanup() {
  local pid
  for pid in "${members[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  cluster_stop "$dir" >/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT

echo "group.initial.rebalance.delay.ms = 0" >"$dir/groups.toml"
(CAPSTAN=$capstan EXAMPLE_DIR=$dir TOPIC=bench-groups PARTITIONS=6 CLUSTER_ID=capstan-bench-groups \
  NODE_CONFIG="$dir/groups.toml" \
  CLIENT_PORTS="$base,$((base + 100)),$((base + 200))" \
  CLUSTER_PORTS="$((base + 1)),$((base + 101)),$((base + 201))" \
  METRICS_PORTS="$((base + 2)),$((base + 102)),$((base + 202))" \
  KAFKA_PORTS="$((base + 3)),$((base + 103)),$((base + 203))" \
  cluster_start 3 3 "$dir" 6 "$here") >"$dir/start.out" 2>&1 || { cat "$dir/start.out" >&2; exit 1; }
bootstrap=$(<"$dir/bootstrap")

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# The partition counts of group $1's members, sorted and space-separated, when it is Stable.
shares() {
  "$capstan" groups describe "$1" --state --members --bootstrap "$bootstrap" 2>/dev/null |
    awk -F'\t' '$2 == "Stable" && NF == 6 && !m { stable = 1 }
      /^GROUP\tMEMBER-ID/ { m = 1; next }
      m && NF == 6 { print $5 }
      END { exit !stable }' | sort -n | tr '\n' ' ' | sed 's/ $//'
}

# Waits until group $1's shares are "$2"; false after RUN_TIMEOUT.
await_shares() {
  local deadline=$((SECONDS + run_timeout))
  until [[ $(shares "$1" || true) == "$2" ]]; do
    ((SECONDS < deadline)) || return 1
    sleep 0.05
  done
}

timeout "$run_timeout" "$capstan" perf produce bench-groups --records "$records" --record-size 100 --acks all \
  --bootstrap "$bootstrap" >"$dir/produce.out"
echo "== three nodes on 127.0.0.1 ($bootstrap), load: $(uptime | sed 's/.*load average/load average/')"

for round in $(seq 1 "$rounds"); do
  echo "== round $round of $rounds"
  echo -n "commit: "
  timeout "$run_timeout" "$commit_bench" "$bootstrap" "bench-commit-$round" "$commits"

  for strategy in cooperative-sticky range; do
    echo -n "join: "
    timeout "$run_timeout" "$join_bench" "$bootstrap" bench-groups "join-$strategy-$round" "$strategy"
  done

  group="handover-$round"
  member_args=(consume bench-groups --group "$group" --consumer-property session.timeout.ms=6000
    --consumer-property heartbeat.interval.ms=500 --bootstrap "$bootstrap")
  "$capstan" "${member_args[@]}" >/dev/null 2>"$dir/a.err" &
  a=$!
  "$capstan" "${member_args[@]}" >/dev/null 2>"$dir/b.err" &
  b=$!
  members=("$a" "$b")
  await_shares "$group" "3 3" || { echo "handover: the two members never shared the partitions" >&2; exit 1; }
  kill -9 "$b"
  killed=$(now_ms)
  wait "$b" 2>/dev/null || true
  await_shares "$group" "6" || { echo "handover: the survivor never got all six partitions" >&2; exit 1; }
  echo "handover: $(($(now_ms) - killed)) ms from the kill -9 of a member to the other holding its partitions (session.timeout.ms 6000)"
  kill "$a"
  wait "$a" 2>/dev/null || true
  members=()

  start=$(now_ms)
  timeout "$run_timeout" "$capstan" consume bench-groups --group "consume-$round" --from-beginning \
    --max-messages "$records" --bootstrap "$bootstrap" >/dev/null 2>"$dir/consume.err"
  with_group=$(($(now_ms) - start))
  start=$(now_ms)
  timeout "$run_timeout" "$capstan" consume bench-groups --from-beginning --max-messages "$records" \
    --bootstrap "$bootstrap" >/dev/null 2>"$dir/consume.err"
  without=$(($(now_ms) - start))
  echo "consume: $records records in $with_group ms with --group, $without ms without ($(awk -v a="$with_group" -v b="$without" 'BEGIN { printf "%.2f", a / b }')x)"
done
