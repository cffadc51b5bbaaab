#!/usr/bin/env bash
# Scale: starts three `capstan node` processes with a controller quorum of all
# three (examples/lib/cluster.sh), creates topics totalling PARTITIONS partitions (default 10,000)
# with replication factor RF (default 3), and reports
#  - how long the creations took and how long until every partition has a leader and until every
#    ISR is full (polling `capstan topic describe`, bounded by WAIT_S);
#  - that partitions serve: one record produced with acks=all to each of SAMPLE partitions spread
#    over the topics (default 50; 0 skips) and read back;
#  - per node: RSS and open file descriptors before and after, memory per partition replica, and
#    the partitions its log reports offline or unopened;
#  - per node, the CPU it uses while no client sends anything, over IDLE_S seconds (default 10;
#    0 skips).
#  - with RESTART=1 (the default), a whole-cluster restart: how long the nodes take to stop and
#    to start, and until every partition has a leader again.
# A topic whose creation fails is reported with its error and not counted. Stops every node it
# started, by pid. Usage: tests/bench/scale.sh BUILD [PARTITIONS]
# Environment: RF, PER_TOPIC (partitions per topic, default 1000), SAMPLE, NODE_CONFIG,
# BENCH_DIR (default a fresh temporary dir, removed at the end unless KEEP=1), WAIT_S (default 900),
# FAILOVER (trials of a kill -9 of the node leading the most partitions, after the rest; default 0),
# IDLE_S.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:?usage: $0 BUILD [PARTITIONS]}
build=$(cd "$build" && pwd)
partitions=${2:-10000}
rf=${RF:-3}
per_topic=${PER_TOPIC:-1000}
sample=${SAMPLE:-50}
wait_s=${WAIT_S:-900}
idle_s=${IDLE_S:-10}
[[ $idle_s =~ ^[0-9]+$ ]] || { echo "IDLE_S must be a whole number of seconds, not '$idle_s'" >&2; exit 2; }
idle_s=$((10#$idle_s))
# shellcheck source=SCRIPTDIR/../../examples/lib/cluster.sh
source "$here/../../examples/lib/cluster.sh"

export CAPSTAN=$build/runtime/capstan
dir=${BENCH_DIR:-$(mktemp -d /tmp/capstan-scale.XXXXXX)}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
export EXAMPLE_DIR=$dir TOPIC=scale-probe PARTITIONS=1 CLUSTER_ID=capstan-scale-bench
export START_TIMEOUT_S=120
base=$((20000 + RANDOM % 400 * 100))
export CLIENT_PORTS="$base,$((base + 10)),$((base + 20))"
export CLUSTER_PORTS="$((base + 1)),$((base + 11)),$((base + 21))"
export METRICS_PORTS="$((base + 2)),$((base + 12)),$((base + 22))"
export KAFKA_PORTS="$((base + 3)),$((base + 13)),$((base + 23))"

cleanup() {
  cluster_stop "$dir" >/dev/null
  if [[ ${KEEP:-0} == 1 ]]; then echo "kept $dir"; else rm -rf "$dir"; fi
}
cluster_start 3 3 "$dir" 1 "$here" >/dev/null
trap cleanup EXIT
bootstrap=$(<"$dir/bootstrap")
echo "3 nodes in $dir; $partitions partitions, RF=$rf, $per_topic per topic"
echo "load: $(uptime | sed 's/.*load average/load average/')"
now_ms() { echo $(($(date +%s%N) / 1000000)); }

declare -A rss_before fd_before
node_stats() { # ID -> "RSS_KB FDS"
  local pid
  pid=$(live_pid "$dir" "$1")
  [[ -n $pid ]] || { echo "dead dead"; return; }
  echo "$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status") $(find "/proc/$pid/fd" -mindepth 1 2>/dev/null | wc -l)"
}
for i in 1 2 3; do
  pid=$(live_pid "$dir" "$i")
  echo "node $i: pid $pid, open-file limit $(awk '/^Max open files/ { print $4 }' "/proc/$pid/limits")"
  read -r rss_before[$i] fd_before[$i] < <(node_stats "$i")
done

# The topics: scale-0, scale-1, ... of PER_TOPIC partitions, the last one what is left.
t0=$(now_ms)
created=0
declare -a topics=() topic_parts=()
k=0
while ((created < partitions)); do
  n=$((partitions - created < per_topic ? partitions - created : per_topic))
  if out=$("$CAPSTAN" topic create "scale-$k" --partitions "$n" --replication-factor "$rf" \
    --bootstrap "$bootstrap" 2>&1); then
    topics+=("scale-$k")
    topic_parts+=("$n")
  else
    echo "error: topic scale-$k ($n partitions) not created: $out"
  fi
  created=$((created + n))
  k=$((k + 1))
done
t_created=$(now_ms)
total=0
for n in "${topic_parts[@]}"; do total=$((total + n)); done
echo "created ${#topics[@]} topics, $total partitions, in $((t_created - t0)) ms"
((total > 0)) || die "no topic was created"

# Counts over every created partition: "PARTITIONS WITH_LEADER FULL_ISR R1 R2 R3", Ri being the
# replicas node i hosts. A describe that fails leaves its topic out.
census() {
  local t out
  for t in "${topics[@]}"; do
    out=$("$CAPSTAN" topic describe "$t" --bootstrap "$bootstrap" 2>/dev/null) || continue
    echo "$out"
  done | awk -v rf="$rf" '/Partition: / { n++; for (f = 1; f <= NF; f++) {
      if ($f == "Leader:" && $(f + 1) != "none") l++
      if ($f == "Isr:" && split($(f + 1), a, ",") == rf) i++
      if ($f == "Replicas:") { k = split($(f + 1), r, ","); for (j = 1; j <= k; j++) h[r[j]]++ } } }
    END { printf "%d %d %d %d %d %d\n", n, l, i, h[1], h[2], h[3] }'
}
# Replicas of the scale-* topics node $1 has opened since its log began (one "opened with" line
# each: the log is loaded and its files are open).
opened() { grep -cE "scale-[0-9]+-[0-9]+ on node $1: opened with" "$dir/node-$1.log" || true; }
# The replicas each node hosts, from the first census that described every partition.
declare -A hosted
# Polls (bounded by WAIT_S) until the metadata gives every partition a leader and a full ISR, and
# until every node has opened every replica it hosts; prints the times in ms after $1, the start,
# with $2 naming it. The metadata alone proves little: the controller assigns a new partition's
# whole replica set as its ISR, and keeps leaders and ISRs over a restart.
await_leaders() {
  local start=$1 what=$2 t_leaders="" t_opened="" seen=0 led=0 full=0 h1 h2 h3 now i all
  local deadline=$((SECONDS + wait_s))
  while :; do
    now=$(now_ms)
    if [[ -z $t_leaders || -z ${hosted[1]:-} ]]; then
      read -r seen led full h1 h2 h3 < <(census)
      if ((seen == total)) && [[ -z ${hosted[1]:-} ]]; then hosted=([1]=$h1 [2]=$h2 [3]=$h3); fi
      if ((seen == total && led == total && full == total)); then t_leaders=$(now_ms); fi
    fi
    if [[ -z $t_opened && -n ${hosted[1]:-} ]]; then
      all=1
      for i in 1 2 3; do (($(opened "$i") >= hosted[$i])) || all=0; done
      ((all)) && t_opened=$now
    fi
    [[ -n $t_leaders && -n $t_opened ]] && break
    if ((SECONDS >= deadline)); then
      echo "error: after $wait_s s: $seen partitions described, $led with a leader, $full with a full ISR;" \
        "opened per node: $(opened 1)/${hosted[1]:-?} $(opened 2)/${hosted[2]:-?} $(opened 3)/${hosted[3]:-?}"
      break
    fi
    sleep 1
  done
  [[ -n $t_leaders ]] && echo "metadata gives every partition a leader and $rf replicas in sync: $((t_leaders - start)) ms after $what"
  [[ -n $t_opened ]] && echo "every node has opened every replica it hosts: $((t_opened - start)) ms after $what"
  return 0
}
await_leaders "$t0" "the first creation"

# Serving: one acks=all record to each sampled partition, read back as the partition's $1th
# record ($1: how many checks have run, this one included).
serve() {
  ((sample > 0)) || return 0
  local ok=0 failed=0 s ti t p v got
  for s in $(seq 0 $((sample - 1))); do
    ti=$((s % ${#topics[@]}))
    t=${topics[$ti]}
    # shellcheck disable=SC2017 # s / topics is the round: each round moves 97 partitions on
    p=$(((s / ${#topics[@]} * 97 + s) % ${topic_parts[$ti]}))
    v="scale-check-$1-$s"
    if echo "$v" | "$CAPSTAN" produce "$t" --partition "$p" --acks all --bootstrap "$bootstrap" \
      >/dev/null 2>"$dir/sample.err" &&
      got=$("$CAPSTAN" consume "$t" --partition "$p" --from-beginning --max-messages "$1" \
        --timeout-ms 10000 --bootstrap "$bootstrap" 2>>"$dir/sample.err" | tail -n 1) && [[ $got == "$v" ]]; then
      ok=$((ok + 1))
    else
      failed=$((failed + 1))
      echo "error: $t-$p does not serve: $(tail -n 1 "$dir/sample.err")"
    fi
  done
  echo "serving: $ok of $sample sampled partitions produced to and read back, $failed failed"
}
serve 1

echo "per node (replicas hosted: $((total * rf / 3)) on average):"
for i in 1 2 3; do
  read -r rss fds < <(node_stats "$i")
  h=${hosted[$i]:-0}
  offline=$(grep -cE "on node $i is offline|cannot open" "$dir/node-$i.log" || true)
  ((offline == 0)) || echo "error: node $i could not open $offline of its replicas (see its log)"
  per=$([[ $rss != dead && $h -gt 0 ]] && echo "$(((rss - rss_before[$i]) / h)) KiB" || echo NA)
  echo "  node $i: RSS ${rss_before[$i]} -> $rss KiB, fds ${fd_before[$i]} -> $fds," \
    "$h replicas, $per per replica, $offline offline/unopened log lines"
done

# Idle CPU: each node's user + system time over IDLE_S seconds in which no client sends anything
# (the followers' fetches, timers and metrics are all that runs).
if ((idle_s > 0)); then
  ticks() { # PID -> user + system clock ticks so far; nothing once the process is gone
    awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || true
  }
  hz=$(getconf CLK_TCK)
  declare -A idle_pid idle_start
  for i in 1 2 3; do
    idle_pid[$i]=$(live_pid "$dir" "$i")
    [[ -n ${idle_pid[$i]} ]] && idle_start[$i]=$(ticks "${idle_pid[$i]}")
  done
  sleep "$idle_s"
  for i in 1 2 3; do
    now=""
    [[ -n ${idle_pid[$i]} ]] && now=$(ticks "${idle_pid[$i]}")
    [[ -n $now && -n ${idle_start[$i]:-} ]] || { echo "idle: node $i is not running"; continue; }
    echo "idle: node $i used $(awk -v t=$((now - idle_start[$i])) -v hz="$hz" -v s="$idle_s" \
      'BEGIN { printf "%.1f", 100 * t / hz / s }')% of one core over ${idle_s} s"
  done
fi

# Whole-cluster restart (RESTART=1, the default): SIGTERM to every node, then the same nodes
# again on their data dirs, timed until they are ready and until every partition is led again.
if [[ ${RESTART:-1} == 1 ]]; then
  t_stop=$(now_ms)
  STOP_TIMEOUT_S=120 cluster_stop "$dir" >/dev/null
  t_start=$(now_ms)
  echo "restart: the nodes stopped in $((t_start - t_stop)) ms"
  START_TIMEOUT_S=$wait_s cluster_start 3 3 "$dir" 1 "$here" >/dev/null
  trap cleanup EXIT # cluster_start cleared it
  echo "restart: nodes ready and $TOPIC led again $(($(now_ms) - t_start)) ms after the start"
  await_leaders "$t_start" "the start"
  serve 2
  for i in 1 2 3; do
    read -r rss fds < <(node_stats "$i")
    echo "  node $i after the restart: RSS $rss KiB, fds $fds," \
      "$(grep -cE "on node $i is offline|cannot open" "$dir/node-$i.log" || true) offline/unopened log lines"
  done
fi

# Failover at scale (FAILOVER=N trials, default 0): kill -9 of the node leading the most
# partitions, timed until `topic describe` names another leader for every partition, and until an
# acks=all record to one of its partitions is acknowledged; then the node is started again on its
# data dir and the trial waits until every ISR is full. The describe round over every topic takes
# a second or more, so the first time is that coarse.
leaders_census() {
  local t out
  for t in "${topics[@]}"; do
    out=$("$CAPSTAN" topic describe "$t" --bootstrap "$bootstrap" 2>/dev/null) || continue
    echo "$out"
  done | awk '/Partition: / { n++; for (f = 1; f <= NF; f++)
      if ($f == "Leader:" && $(f + 1) != "none") { l++; by[$(f + 1)]++ } }
    END { printf "%d %d %d %d %d\n", n, l, by[1], by[2], by[3] }'
}
# A partition node $1 leads, as "TOPIC PARTITION".
led_by() {
  "$CAPSTAN" topic describe "${topics[0]}" --bootstrap "$bootstrap" 2>/dev/null |
    awk -v node="$1" '/Partition: / { p = ""; l = ""; for (f = 1; f <= NF; f++) {
        if ($f == "Partition:") p = $(f + 1); if ($f == "Leader:") l = $(f + 1) }
      if (l == node) { print p; exit } }'
}
failover_trials=${FAILOVER:-0}
# The nodes are this shell's jobs: without this it reports each kill.
((failover_trials == 0)) || disown -a
for trial in $(seq 1 "$failover_trials"); do
  read -r n l by1 by2 by3 < <(leaders_census)
  declare -A led=([1]=$by1 [2]=$by2 [3]=$by3)
  victim=1
  for i in 2 3; do ((led[$i] > led[$victim])) && victim=$i; done
  part=$(led_by "$victim")
  pid=$(live_pid "$dir" "$victim")
  [[ -n $pid && -n $part ]] || die "failover $trial: node $victim is not running or leads nothing in ${topics[0]}"
  mapfile -d '' -t victim_cmd <"/proc/$pid/cmdline"
  t_kill=$(now_ms)
  kill -9 "$pid"
  t_led="" t_ack=""
  deadline=$((SECONDS + wait_s))
  while [[ -z $t_led || -z $t_ack ]] && ((SECONDS < deadline)); do
    if [[ -z $t_ack ]] && echo "failover-$trial" | timeout 30 "$CAPSTAN" produce "${topics[0]}" --partition "$part" \
      --acks all --delivery-timeout-ms 20000 --bootstrap "$bootstrap" >/dev/null 2>&1; then
      t_ack=$(now_ms)
    fi
    if [[ -z $t_led ]]; then
      read -r n l by1 by2 by3 < <(leaders_census)
      declare -A now_led=([1]=$by1 [2]=$by2 [3]=$by3)
      ((n == total && l == total && now_led[$victim] == 0)) && t_led=$(now_ms)
    fi
  done
  [[ -n $t_led && -n $t_ack ]] || die "failover $trial: no new leader for every partition, or no acknowledgement, within $wait_s s"
  wait_until "$wait_s" 0.1 "node $victim gone" bash -c "[[ ! -d /proc/$pid ]] || [[ \$(awk '{print \$3}' /proc/$pid/stat) == Z ]]"
  t_start=$(now_ms)
  "${victim_cmd[@]}" </dev/null >>"$dir/node-$victim.log" 2>&1 &
  echo $! >"$dir/node-$victim.pid"
  disown $!
  t_full=""
  deadline=$((SECONDS + wait_s))
  while [[ -z $t_full ]] && ((SECONDS < deadline)); do
    read -r seen _ full _ < <(census)
    ((seen == total && full == total)) && t_full=$(now_ms)
    [[ -n $t_full ]] || sleep 1
  done
  [[ -n $t_full ]] || die "failover $trial: ISRs not full within $wait_s s of node $victim's restart"
  echo "failover $trial: kill -9 of node $victim (leading ${led[$victim]} of $total partitions):" \
    "every partition led elsewhere after $((t_led - t_kill)) ms, an acks=all record to" \
    "${topics[0]}-$part acknowledged after $((t_ack - t_kill)) ms; started again, every ISR full" \
    "after $((t_full - t_start)) ms"
done
echo "load: $(uptime | sed 's/.*load average/load average/')"
