#!/usr/bin/env bash
# Failover time: starts three `capstan node` processes with a controller quorum
# of all three (examples/lib/cluster.sh), a topic with RF=3 and min.insync.replicas=2, and
#  - partition leader failover, TRIALS times: bench_failover_producer writes one record in flight
#    with acks=all to partition 0 without pause; the leader is killed with kill -9 (or SIGTERM,
#    below); measured from the kill to the controller's "session of node N expired" line
#    (detection), to the new leader's "leader at epoch" line, and to the first acknowledgement
#    after the kill (total);
#  - controller failover, CONTROLLER_TRIALS times: the active controller (`capstan cluster
#    describe`) is killed likewise; measured to the new controller's "active in term" line
#    (detection), until `cluster describe` names a new active controller, and until a
#    `topic create` succeeds.
# After each trial the killed node is restarted with its own command line and the next trial
# waits (bounded) until its replica is back in the ISR. Prints every trial and min / median / max.
# Stops every node it started, by pid. Usage: tests/bench/failover.sh BUILD [TRIALS]
# Environment: SIGNAL (KILL, the default, or TERM: a clean stop, whose controlled shutdown moves
# the node's leaderships before it exits; detection is then the stopping node's "controlled
# shutdown done" line, and a failover is a pause of GAP_MS, default 20 rather than 200, between
# two acknowledgements; without such a pause, the first acknowledgement after the new leader
# logged its leadership, marked *), CONTROLLER_TRIALS (default TRIALS), NODE_CONFIG (a node config file;
# default none, so the nodes run with the default timeouts), BENCH_DIR (default a fresh temporary
# dir, removed at the end unless KEEP=1), WAIT_S (bound on every wait, default 60).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:?usage: $0 BUILD [TRIALS]}
build=$(cd "$build" && pwd)
trials=${2:-20}
controller_trials=${CONTROLLER_TRIALS:-$trials}
wait_s=${WAIT_S:-60}
signal=${SIGNAL:-KILL}
case $signal in
  KILL) signal_name="kill -9" gap_ms=${GAP_MS:-200} ;;
  TERM) signal_name="SIGTERM" gap_ms=${GAP_MS:-20} ;;
  *) echo "SIGNAL must be KILL or TERM, not '$signal'" >&2; exit 2 ;;
esac
# shellcheck source=SCRIPTDIR/../../examples/lib/cluster.sh
source "$here/../../examples/lib/cluster.sh"

export CAPSTAN=$build/runtime/capstan
producer_bin=$build/tests/bench_failover_producer
[[ -x $producer_bin ]] || die "no $producer_bin: build the bench_failover_producer target"
dir=${BENCH_DIR:-$(mktemp -d /tmp/capstan-failover.XXXXXX)}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
export EXAMPLE_DIR=$dir TOPIC=failover-bench PARTITIONS=1 CLUSTER_ID=capstan-failover-bench
export START_TIMEOUT_S=$wait_s
base=$((20000 + RANDOM % 400 * 100))
export CLIENT_PORTS="$base,$((base + 10)),$((base + 20))"
export CLUSTER_PORTS="$((base + 1)),$((base + 11)),$((base + 21))"
export METRICS_PORTS="$((base + 2)),$((base + 12)),$((base + 22))"
export KAFKA_PORTS="$((base + 3)),$((base + 13)),$((base + 23))"

producer_pid=""
cleanup() {
  touch "$dir/stop-producing"
  if [[ -n $producer_pid ]]; then
    kill -TERM "$producer_pid" 2>/dev/null || true
    wait "$producer_pid" 2>/dev/null || true
  fi
  cluster_stop "$dir" >/dev/null
  if [[ ${KEEP:-0} == 1 ]]; then echo "kept $dir"; else rm -rf "$dir"; fi
}

cluster_start 3 3 "$dir" 1 "$here" >/dev/null
trap cleanup EXIT
# The nodes are killed on purpose: no "Killed" notice from this shell for them.
for i in 1 2 3; do disown "$(<"$dir/node-$i.pid")"; done
bootstrap=$(<"$dir/bootstrap")
echo "3 nodes in $dir, load: $(uptime | sed 's/.*load average/load average/')"
echo "node config: ${NODE_CONFIG:-none (default timeouts)}; nodes stopped with $signal_name"

now_ns() { date +%s%N; }
ms() { echo $((($2 - $1) / 1000000)); } # START_NS END_NS -> milliseconds

# The first line of any node's log matching the extended regex $1 logged at or after $2 (ns):
# its time in ns, or nothing. Log lines start "YYYY-MM-DD HH:MM:SS.mmm" in local time.
log_time_after() {
  local pattern=$1 after=$2 line t
  while IFS= read -r line; do
    t=$(date -d "${line:0:23}" +%s%N 2>/dev/null) || continue
    if ((t >= after - 1000000)); then
      echo "$t"
      return 0
    fi
  done < <(grep -hE "$pattern" "$dir"/node-*.log | sort)
}

leader_of() {
  "$CAPSTAN" topic describe "$TOPIC" --bootstrap "$bootstrap" 2>/dev/null |
    awk '/Partition: 0/ { for (f = 1; f <= NF; f++) if ($f == "Leader:") print $(f + 1) }'
}
isr_size() {
  "$CAPSTAN" topic describe "$TOPIC" --bootstrap "$bootstrap" 2>/dev/null |
    awk '/Partition: 0/ { for (f = 1; f <= NF; f++) if ($f == "Isr:") print split($(f + 1), a, ",") }'
}
active_controller() {
  "$CAPSTAN" cluster describe --bootstrap "$1" 2>/dev/null | awk '/^Active controller:/ { print $3 }'
}

# Sends SIGNAL to node $1 and remembers its command line for restart_node.
declare -a victim_cmd
kill_node() {
  local id=$1 pid
  pid=$(live_pid "$dir" "$id")
  [[ -n $pid ]] || die "node $id is not running"
  mapfile -d '' -t victim_cmd <"/proc/$pid/cmdline"
  kill -"$signal" "$pid"
}
restart_node() {
  local id=$1
  wait_until "$wait_s" 0.1 "node $id gone" bash -c "[[ ! -d /proc/$(<"$dir/node-$id.pid") ]] || [[ \$(awk '{print \$3}' /proc/$(<"$dir/node-$id.pid")/stat) == Z ]]"
  local ready_before
  ready_before=$(grep -c "node $id ready" "$dir/node-$id.log" || true)
  "${victim_cmd[@]}" </dev/null >>"$dir/node-$id.log" 2>&1 &
  echo $! >"$dir/node-$id.pid"
  disown $!
  wait_until "$wait_s" 0.1 "node $id ready again" \
    bash -c "(( \$(grep -c 'node $id ready' '$dir/node-$id.log') > $ready_before ))"
  wait_until "$wait_s" 0.1 "node $id back in the ISR" isr_is_3
}
isr_is_3() { [[ $(isr_size) == 3 ]]; }

# min median max of the numbers on stdin (median of an even count: mean of the middle two).
stats() {
  sort -n | awk '{ v[NR] = $1 } END {
    if (NR == 0) { print "no data"; exit }
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "min %d / median %d / max %d ms (%d trials)\n", v[1], m, v[NR], NR }'
}

results=$dir/results
: >"$results"
rm -f "$dir/stop-producing"
"$producer_bin" "$bootstrap" "$TOPIC" 0 "$dir/stop-producing" "$gap_ms" >"$dir/producer.out" 2>"$dir/producer.err" &
producer_pid=$!
wait_until "$wait_s" 0.1 "the producer's first acknowledgement" grep -q '^first ' "$dir/producer.out"

echo "== partition leader failover: $trials trials"
printf '%-6s %-7s %-11s %12s %12s %12s\n' trial leader controller detect_ms elected_ms total_ms
for t in $(seq 1 "$trials"); do
  sleep 1 # acknowledgements flow before the kill
  leader=$(leader_of)
  [[ $leader =~ ^[1-3]$ ]] || die "trial $t: partition 0 has no leader ('$leader')"
  # When the leader is the active controller too, a new controller must be elected first.
  ctl=$(active_controller "$bootstrap")
  t0=$(now_ns)
  kill_node "$leader"
  first_gap() { awk -v t0="$t0" '$1 == "gap" && $3 > t0 { print $3; exit }' "$dir/producer.out"; }
  # Without a pause over GAP_MS (a clean stop can move the leadership that fast), the first
  # acknowledgement after the new leader logged its leadership; the producer prints every one.
  first_ack_after_election() {
    local elected
    elected=$(log_time_after "$TOPIC-0 on node [0-9]+: leader at epoch" "$t0")
    [[ -n $elected ]] || return 1
    awk -v t="$elected" '$1 == "ack" && $2 > t { print $2; exit }' "$dir/producer.out"
  }
  acked_after_kill() { [[ -n $(first_gap) || -n $(first_ack_after_election) ]]; }
  wait_until "$wait_s" 0.1 "trial $t: an acknowledgement after the kill" acked_after_kill
  t_ack=$(first_gap)
  shown_mark=
  if [[ -z $t_ack ]]; then
    t_ack=$(first_ack_after_election)
    shown_mark="*"
  fi
  if [[ $signal == KILL ]]; then
    t_detect=$(log_time_after "the session of node $leader expired" "$t0")
  else
    t_detect=$(log_time_after "node $leader: controlled shutdown done" "$t0")
  fi
  t_elect=$(log_time_after "$TOPIC-0 on node [0-9]+: leader at epoch" "$t0")
  detect=$([[ -n $t_detect ]] && ms "$t0" "$t_detect" || echo NA)
  elect=$([[ -n $t_elect ]] && ms "$t0" "$t_elect" || echo NA)
  total=$(ms "$t0" "$t_ack")
  shown=$total$shown_mark
  printf '%-6s %-7s %-11s %12s %12s %12s\n' "$t" "$leader" "$ctl" "$detect" "$elect" "$shown"
  echo "leader $detect $elect $total $([[ $ctl == "$leader" ]] && echo both || echo leader-only)" >>"$results"
  restart_node "$leader"
done

echo "== controller failover: $controller_trials trials"
printf '%-6s %-10s %12s %12s %12s\n' trial controller detect_ms described_ms create_ms
for t in $(seq 1 "$controller_trials"); do
  ctl=$(active_controller "$bootstrap")
  [[ $ctl =~ ^[1-3]$ ]] || die "controller trial $t: no active controller ('$ctl')"
  others=""
  for i in 1 2 3; do ((i == ctl)) || others+="${others:+,}$(<"$dir/node-$i.addr")"; done
  t0=$(now_ns)
  kill_node "$ctl"
  new_controller() { local c; c=$(active_controller "$others"); [[ $c =~ ^[1-3]$ && $c != "$ctl" ]]; }
  wait_until "$wait_s" 0.1 "controller trial $t: a new active controller" new_controller
  t_described=$(now_ns)
  create() { "$CAPSTAN" topic create "ctl-trial-$t" --partitions 1 --replication-factor 1 \
    --bootstrap "$others" >/dev/null 2>&1; }
  wait_until "$wait_s" 0.1 "controller trial $t: a topic creation" create
  t_created=$(now_ns)
  t_detect=$(log_time_after "controller [0-9]+: active in term" "$t0")
  detect=$([[ -n $t_detect ]] && ms "$t0" "$t_detect" || echo NA)
  printf '%-6s %-10s %12s %12s %12s\n' "$t" "$ctl" "$detect" "$(ms "$t0" "$t_described")" \
    "$(ms "$t0" "$t_created")"
  echo "controller $detect $(ms "$t0" "$t_described") $(ms "$t0" "$t_created")" >>"$results"
  restart_node "$ctl"
done

summary() { # KIND COLUMN LABEL
  printf '%-58s ' "$3"
  awk -v k="$1" -v c="$2" '$1 == k && $c != "NA" { print $c }' "$results" | stats
}
echo "== summary ($signal_name to ...), load: $(uptime | sed 's/.*load average/load average/')"
summary leader 2 "leader: session expired / shutdown confirmed (detection)"
summary leader 3 "leader: new leader logs 'leader at epoch'"
summary leader 4 "leader: first acks=all acknowledgement on the new leader"
summary controller 2 "controller: new controller logs 'active in term' (detection)"
summary controller 3 "controller: cluster describe names the new one"
summary controller 4 "controller: a topic creation succeeds"
printf '%-58s ' "leader: first acknowledgement, leader not the controller"
awk '$1 == "leader" && $5 == "leader-only" { print $4 }' "$results" | stats
awk '$1 == "leader" && $2 != "NA" { d += $2; s += $4; n++ }
  END { if (n) printf "detection share of the leader failover total: %.0f%%\n", 100 * d / s }' "$results"
