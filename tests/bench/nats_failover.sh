#!/usr/bin/env bash
# Failover time of NATS JetStream, measured as tests/bench/failover.sh measures capstan's partition
# leader failover, for a figure beside it from the same machine and run: a 3-node JetStream
# cluster on 127.0.0.1 (started here, each server with a config file of its own), a stream of 3
# replicas, and
# nats_failover.c publishing one 100-byte message at a time with js_Publish (the next after the
# ack: one in flight, acked by a raft quorum of 2, the analogue of acks=all with
# min.insync.replicas=2). TRIALS times: the stream leader (stream info) is killed with kill -9 and
# the failover is measured from the kill to the first positive ack after it (the client prints
# every pause over GAP_MS, default 200, between two acks), and to the new leader's "new stream
# leader" log line (elected). The meta leader (the analogue of capstan's active controller) is
# shown, as is the server the client was connected to. The killed server is then restarted
# with its own command line and config, and the next trial waits (bounded) until its /healthz is
# ok and the stream has 3 current replicas again. Prints every trial, min / median / max, and the
# load average at the start and the end. Stops every server and the client by pid.
# Usage: tests/bench/nats_failover.sh [TRIALS]        (needs nats-server, libnats-dev, cc, curl)
# Environment: TRIALS (default 20; the argument wins), GAP_MS (default 200), PUB_TIMEOUT_MS (how long js_Publish waits for an ack before it
# sends again, default 500: a message sent to the leader as it dies gets no answer), WAIT_S (bound
# on every wait, default 60), BENCH_DIR (default a fresh temporary dir, removed at the end unless
# KEEP=1).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
trials=${1:-${TRIALS:-20}}
gap_ms=${GAP_MS:-200}
pub_timeout_ms=${PUB_TIMEOUT_MS:-500}
wait_s=${WAIT_S:-60}
# shellcheck source=SCRIPTDIR/../../examples/lib/cluster.sh
source "$root/examples/lib/cluster.sh" # die, wait_until
# shellcheck source=SCRIPTDIR/ports.sh
source "$here/ports.sh" # free_port_base
# shellcheck source=SCRIPTDIR/nats_cluster.sh
source "$here/nats_cluster.sh" # start_servers, stop_servers, runs_server

[[ $trials =~ ^[1-9][0-9]*$ ]] || die "TRIALS must be a positive number, not '$trials'"
command -v nats-server >/dev/null || die "no nats-server (apt-get install -y nats-server)"
command -v curl >/dev/null || die "no curl"

dir=${BENCH_DIR:-$(mktemp -d /tmp/capstan-nats-failover.XXXXXX)}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
base_dir=$dir/nats # configs, logs, stores, pids, servers
client_bin=$dir/nats_failover
cc -O2 -Wall -o "$client_bin" "$here/nats_failover.c" -lnats || die "cannot build nats_failover.c (libnats-dev)"

client_pid=""
cleanup() {
  touch "$dir/stop-publishing"
  if [[ -n $client_pid ]]; then
    # The client stops at its next message; one js_Publish lasts at most PUB_TIMEOUT_MS.
    for _ in $(seq 1 50); do kill -0 "$client_pid" 2>/dev/null || break; sleep 0.1; done
    kill -TERM "$client_pid" 2>/dev/null || true
    wait "$client_pid" 2>/dev/null || true
  fi
  stop_servers
  if [[ ${KEEP:-0} == 1 ]]; then echo "kept $dir"; else rm -rf "$dir"; fi
}
trap cleanup EXIT
trap "exit 130" INT # so that the EXIT trap stops everything on ^C or kill too
trap "exit 143" TERM

# Client, route and monitoring ports of node I: base+I-1, base+100+I-1, base+200+I-1.
port_base=$(free_port_base)
export NATS_BENCH_CPORT=$port_base NATS_BENCH_RPORT=$((port_base + 100))
export NATS_BENCH_HPORT=$((port_base + 200))

load_start=$(uptime | sed 's/.*load average/load average/')
start_servers

mapfile -t names < <(awk '{ print $1 }' "$base_dir/servers")
mapfile -t urls < <(awk '{ print $2 }' "$base_dir/servers")
((${#names[@]} == 3)) || die "expected 3 servers in $base_dir/servers"
server_pid() { sed -n "$1p" "$base_dir/pids"; } # the pid of server I (1-based)
for i in 1 2 3; do
  runs_server "$(server_pid "$i")" "$i" || die "pid $(server_pid "$i") is not ${names[$i - 1]}'s server"
done
all_urls=$(IFS=,; echo "${urls[*]}")
echo "3 JetStream servers (${names[*]}) in $base_dir, load at start: $load_start"
echo "nats-server $(nats-server --version | awk '{ print $NF }'), killed with kill -9;" \
  "js_Publish timeout ${pub_timeout_ms} ms, gap ${gap_ms} ms"

index_of() { # NAME -> its 1-based line in the servers file
  local i
  for i in 1 2 3; do [[ ${names[$i - 1]} == "$1" ]] && { echo "$i"; return 0; }; done
  return 1
}
name_of_url() {
  local i
  for i in 1 2 3; do [[ ${urls[$i - 1]} == "$1" ]] && { echo "${names[$i - 1]}"; return 0; }; done
  echo "?"
}
stream_state() { "$client_bin" -i "$all_urls" 2>/dev/null; } # "LEADER REPLICAS CURRENT"
stream_leader() { stream_state | awk '$1 != "-" { print $1 }'; }
stream_whole() { [[ $(stream_state | awk '{ print $2, $3 }') == "3 3" ]]; }
healthy() { # I: server I's /healthz is ok (2.9 also checks its streams are current)
  curl -fsS --max-time 2 "http://127.0.0.1:$((NATS_BENCH_HPORT + $1 - 1))/healthz" 2>/dev/null |
    grep -q '"status": *"ok"'
}

# Restarts server I with the command line it ran with (`nats-server -c BASE/nI.conf`: the same
# ports and store dir) and records the new pid in BASE/pids, so that stop_servers stops it too.
declare -a victim_cmd
restart_server() {
  local i=$1 old=$2 pid
  gone() { ! runs_server "$old" "$i"; }
  wait_until "$wait_s" 0.05 "${names[$i - 1]} (pid $old) gone" gone
  "${victim_cmd[@]}" </dev/null >>"$base_dir/${names[$i - 1]}.log" 2>&1 &
  pid=$!
  disown "$pid"
  awk -v n="$i" -v p="$pid" 'NR == n { $0 = p } { print }' "$base_dir/pids" >"$base_dir/pids.new"
  mv "$base_dir/pids.new" "$base_dir/pids"
  runs_server "$pid" "$i" || die "restarted ${names[$i - 1]} (pid $pid) is not running"
  wait_until "$wait_s" 0.2 "${names[$i - 1]} healthy again" healthy "$i"
  wait_until "$wait_s" 0.2 "the stream's 3 replicas current again" stream_whole
}

meta_leader() { # the JetStream meta leader (the analogue of the active controller), per server 1
  curl -fsS --max-time 2 "http://127.0.0.1:$NATS_BENCH_HPORT/jsz" 2>/dev/null |
    sed -n 's/.*"leader": *"\([^"]*\)".*/\1/p' | head -1
}
# The time in ms of the first "new stream leader" line in any server's log at or after $1 (ms),
# or nothing. Log lines start "[PID] YYYY/MM/DD HH:MM:SS.micro" in local time.
elected_after() {
  local after=$1 day time t
  while read -r _ day time _; do
    t=$(date -d "$day $time" +%s%3N 2>/dev/null) || continue
    if ((t >= after)); then
      echo "$t"
      return 0
    fi
  done < <(grep -hF "new stream leader for '\$G > FAILOVER'" "$base_dir"/n*.log | sort -k2,3)
}

# min median max of the numbers on stdin (median of an even count: mean of the middle two).
stats() {
  sort -n | awk '{ v[NR] = $1 } END {
    if (NR == 0) { print "no data"; exit }
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "min %d / median %d / max %d ms (%d trials)\n", v[1], m, v[NR], NR }'
}

out=$dir/client.out
rm -f "$dir/stop-publishing"
# Bounded by itself too, in case this script dies without its trap.
"$client_bin" -g "$gap_ms" -t "$pub_timeout_ms" -x "$dir/stop-publishing" \
  -d $((trials * (4 * wait_s + 10) + 60)) "$all_urls" >"$out" 2>"$dir/client.err" &
client_pid=$!
has_first() { grep -q '^first ' "$out"; }
wait_until "$wait_s" 0.1 "the client's first ack" has_first

results=$dir/results
: >"$results"
echo "== stream leader failover: $trials trials"
printf '%-6s %-7s %-5s %-10s %9s %9s %11s %12s\n' trial leader meta client_on timeouts no_resp elected_ms failover_ms
for t in $(seq 1 "$trials"); do
  sleep 1 # acks flow before the kill
  wait_until "$wait_s" 0.2 "trial $t: a stream leader" stream_leader >/dev/null
  leader=$(stream_leader)
  i=$(index_of "$leader") || die "trial $t: unknown leader '$leader'"
  pid=$(server_pid "$i")
  runs_server "$pid" "$i" || die "trial $t: pid $pid is not $leader's server"
  mapfile -d '' -t victim_cmd <"/proc/$pid/cmdline"
  # The server the client is connected to: the last "conn" line (a reconnect prints one).
  on=$(name_of_url "$(awk '$1 == "conn" { u = $3 } END { print u }' "$out")")
  # When the stream leader is the meta leader too, the meta group elects one as well.
  meta=$(meta_leader)
  t0=$(date +%s%3N)
  kill -KILL "$pid"
  gap_after_kill() { awk -v t0="$t0" '$1 == "gap" && $3 > t0 { print; exit }' "$out"; }
  acked() { [[ -n $(gap_after_kill) ]]; }
  wait_until "$wait_s" 0.05 "trial $t: an ack after the kill (a pause over GAP_MS)" acked
  read -r _ _ t_ack timeouts no_resp _ <<<"$(gap_after_kill)"
  failover=$((t_ack - t0))
  t_elected=$(elected_after "$t0")
  elected=$([[ -n $t_elected ]] && echo $((t_elected - t0)) || echo NA)
  printf '%-6s %-7s %-5s %-10s %9s %9s %11s %12s\n' "$t" "$leader" "${meta:-?}" "$on" "$timeouts" \
    "$no_resp" "$elected" "$failover"
  echo "$failover $([[ $on == "$leader" ]] && echo on-leader || echo elsewhere) $elected" \
    "$([[ $meta == "$leader" ]] && echo both || echo stream-only)" >>"$results"
  restart_server "$i" "$pid"
done

echo "== summary (kill -9 of the stream leader -> first ack after it), load at end:" \
  "$(uptime | sed 's/.*load average/load average/')"
printf '%-46s ' "new stream leader logs it (elected)"
awk '$3 != "NA" { print $3 }' "$results" | stats
printf '%-46s ' "first ack after the kill: all trials"
awk '{ print $1 }' "$results" | stats
printf '%-46s ' "client connected to the killed leader"
awk '$2 == "on-leader" { print $1 }' "$results" | stats
printf '%-46s ' "client connected to a surviving server"
awk '$2 == "elsewhere" { print $1 }' "$results" | stats
printf '%-46s ' "stream leader not the meta leader"
awk '$4 == "stream-only" { print $1 }' "$results" | stats
