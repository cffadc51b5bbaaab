#!/usr/bin/env bash
# The keyed workload of perf_rf3.sh (MODES=keyed) against NATS JetStream, for figures beside
# capstan's from the same machine and run: three JetStream servers on 127.0.0.1 (nats_cluster.sh)
# and nats_keyed.c, ROUNDS times (default 3): RECORDS (default 1,000,000) messages of 100 bytes
# keyed over KEYS (default 10,000) keys, a key's subject being keyed.<key % SUBJECTS> (default
# 100) of one stream of 3 replicas, published by PUBLISHERS (default 4) connections with at most
# MAX_PENDING (default 1000) un-acked each; then the same messages unkeyed from one publisher to
# one subject. JetStream acknowledges a publish once a raft quorum (2 of 3) stored it, the
# analogue of acks=all with min.insync.replicas=2. Prints each round's messages/s and the
# keyed/single ratio, then min / median / max, with the load average at the start and the end.
# Stops every server by pid.
# Usage: tests/bench/nats_keyed.sh [RECORDS]       (needs nats-server, libnats-dev, cc, curl)
# Environment: ROUNDS, KEYS, SUBJECTS, PUBLISHERS, MAX_PENDING, WAIT_S (bound on every wait,
# default 60), BENCH_DIR (default a fresh temporary dir, removed at the end unless KEEP=1).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
records=${1:-${RECORDS:-1000000}}
rounds=${ROUNDS:-3}
wait_s=${WAIT_S:-60}
# shellcheck source=SCRIPTDIR/../../examples/lib/cluster.sh
source "$root/examples/lib/cluster.sh" # die, wait_until
# shellcheck source=SCRIPTDIR/ports.sh
source "$here/ports.sh" # free_port_base
# shellcheck source=SCRIPTDIR/nats_cluster.sh
source "$here/nats_cluster.sh" # start_servers, stop_servers

for v in records rounds; do [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive number, not '${!v}'"; done
command -v nats-server >/dev/null || die "no nats-server (apt-get install -y nats-server)"
command -v curl >/dev/null || die "no curl"

dir=${BENCH_DIR:-$(mktemp -d /tmp/capstan-nats-keyed.XXXXXX)}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
base_dir=$dir/nats
client_bin=$dir/nats_keyed
cc -O2 -Wall -o "$client_bin" "$here/nats_keyed.c" -lnats -lpthread || die "cannot build nats_keyed.c (libnats-dev)"

cleanup() {
  stop_servers
  if [[ ${KEEP:-0} == 1 ]]; then echo "kept $dir"; else rm -rf "$dir"; fi
}
trap cleanup EXIT
trap "exit 130" INT
trap "exit 143" TERM

port_base=$(free_port_base)
export NATS_BENCH_CPORT=$port_base NATS_BENCH_RPORT=$((port_base + 100))
export NATS_BENCH_HPORT=$((port_base + 200))
echo "== load at start: $(uptime | sed 's/.*load average/load average/')"
start_servers
servers=$(awk '{ printf "%s%s=%s", (NR > 1 ? "," : ""), $1, $2 }' "$base_dir/servers")
echo "== nats-server $(nats-server --version | awk '{ print $NF }'), 3 servers, R3 stream," \
  "$records messages of 100 B keyed over ${KEYS:-10000} keys on ${SUBJECTS:-100} subjects," \
  "${PUBLISHERS:-4} publishers, then 1 publisher on 1 subject"

results=$dir/results
: >"$results"
for round in $(seq 1 "$rounds"); do
  out=$(timeout $((wait_s * 10)) "$client_bin" -n "$records" -k "${KEYS:-10000}" -S "${SUBJECTS:-100}" \
    -p "${PUBLISHERS:-4}" -m "${MAX_PENDING:-1000}" "$servers") || die "round $round: nats_keyed failed"
  keyed=$(awk '$1 == "keyed" { print $2 }' <<<"$out")
  single=$(awk '$1 == "single" { print $2 }' <<<"$out")
  ratio=$(awk -v k="$keyed" -v s="$single" 'BEGIN { printf "%.2f", k / s }')
  echo "round $round: keyed $keyed msg/s, single $single msg/s, keyed/single $ratio"
  echo "$keyed $single $ratio" >>"$results"
done

stats() { # column N of the results: min / median / max
  awk -v c="$1" '{ print $c }' "$results" | sort -g | awk '{ v[NR] = $1 } END {
    m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
    printf "%s / %s / %s\n", v[1], m, v[NR] }'
}
echo "== min / median / max of $rounds rounds, load at end: $(uptime | sed 's/.*load average/load average/')"
echo "keyed msg/s:       $(stats 1)"
echo "single msg/s:      $(stats 2)"
echo "keyed / single:    $(stats 3)"
