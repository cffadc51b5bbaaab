#!/usr/bin/env bash
# Failover with no acknowledged record lost: starts the 3-node example cluster, produces numbered
# records with acks=all without pause, kill -9s the partition leader, shows the leader the
# controller elects from the ISR, then reads the topic back and checks that every acknowledged
# record is there and the offsets have no gap. Exits 1 if not. Stops every node it started.
# Run with -h for help.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

usage() {
  cat <<USAGE
Usage: $0 [-h]

Runs examples/three-node/start.sh (topic \$TOPIC, default failover), produces with
'capstan produce --acks all' in batches of 20 numbered records, kill -9s the leader of partition 0,
waits for a new leader, produces on, then consumes the topic from the beginning and compares:
every record of every acknowledged batch must be read back, at offsets 0, 1, 2, ... without a
gap. Exit code 0 when so, 1 otherwise or on an error. Stops the cluster with
examples/three-node/stop.sh at the end.

Reads the variables of examples/three-node/start.sh (CAPSTAN, CLIENT_PORTS, CLUSTER_PORTS,
METRICS_PORTS, KAFKA_PORTS, CLUSTER_ID, START_TIMEOUT_S), with EXAMPLE_DIR defaulting to
./example-failover and CLUSTER_ID to capstan-example-failover.
Unless NODE_CONFIG names a config file, the nodes get one with short heartbeats and sessions
(broker.session.timeout.ms = 3000), so that the controller fences the killed node within seconds.
Also: RECORDS_BEFORE / RECORDS_AFTER, how many acknowledged records to wait for before the kill
and after the new leader is there (default 200 each); DEMO_TIMEOUT_S, the bound on each wait
(default 90).
USAGE
}
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  usage
  exit 0
fi
(($# == 0)) || { usage >&2; exit 2; }

# shellcheck source=SCRIPTDIR/../lib/cluster.sh
source "$here/../lib/cluster.sh"
export CAPSTAN=${CAPSTAN:-./build/runtime/capstan}
export TOPIC=${TOPIC:-failover}
export PARTITIONS=1
export CLUSTER_ID=${CLUSTER_ID:-capstan-example-failover}
dir=${EXAMPLE_DIR:-./example-failover}
mkdir -p "$dir" || die "cannot create EXAMPLE_DIR '$dir'"
dir=$(cd "$dir" && pwd)
export EXAMPLE_DIR=$dir
before=${RECORDS_BEFORE:-200}
after=${RECORDS_AFTER:-200}
timeout=${DEMO_TIMEOUT_S:-90}
batch=20
[[ $before =~ ^[0-9]+$ && $after =~ ^[0-9]+$ ]] || die "RECORDS_BEFORE and RECORDS_AFTER must be integers"

if [[ -z ${NODE_CONFIG:-} ]]; then
  cat >"$dir/failover.toml" <<TOML
broker.heartbeat.interval.ms = 500
broker.session.timeout.ms = 3000
controller.quorum.election.timeout.ms = 500
replica.fetch.wait.max.ms = 200
TOML
  export NODE_CONFIG=$dir/failover.toml
fi

producer_pid=""
# The producer ends after its current batch, which --delivery-timeout-ms bounds (30 s).
stop_producer() {
  touch "$dir/stop-producing"
  [[ -z $producer_pid ]] || wait "$producer_pid" || true
  producer_pid=""
}
cleanup() {
  stop_producer
  echo "== stopping the cluster"
  "$here/../three-node/stop.sh" || true
}

echo "== starting the 3-node cluster in $dir"
"$here/../three-node/start.sh"
trap cleanup EXIT
bootstrap=$(<"$dir/bootstrap")

# leader_of: the leader of partition 0 as the cluster describes it now ("none" when offline).
leader_of() {
  "$CAPSTAN" topic describe "$TOPIC" --bootstrap "$bootstrap" 2>/dev/null |
    awk '/Partition: 0/ { for (f = 1; f <= NF; f++) if ($f == "Leader:") print $(f + 1) }'
}
acked_count() { [[ -f $dir/acked ]] && wc -l <"$dir/acked" || echo 0; }

# The producer: batch after batch of numbered records, each batch one `capstan produce --acks all`;
# a batch it exits 0 for is acknowledged as a whole, and its numbers go to $dir/acked. It runs
# until $dir/stop-producing exists.
rm -f "$dir/acked" "$dir/stop-producing" "$dir/produce.err"
: >"$dir/acked"
(
  n=0
  while [[ ! -e $dir/stop-producing ]]; do
    seq $((n + 1)) $((n + batch)) >"$dir/batch"
    if "$CAPSTAN" produce "$TOPIC" --acks all --delivery-timeout-ms 30000 \
      --bootstrap "$bootstrap" <"$dir/batch" 2>>"$dir/produce.err"; then
      cat "$dir/batch" >>"$dir/acked"
    fi
    n=$((n + batch))
  done
) &
producer_pid=$!

at_least_acked() { (($(acked_count) >= $1)); }

echo "== producing with acks=all"
wait_until "$timeout" 0.2 "$before records acknowledged" at_least_acked "$before"
old=$(leader_of)
[[ $old =~ ^[0-9]+$ ]] || die "partition 0 of $TOPIC has no leader: '$old'"
victim=$(live_pid "$dir" "$old")
[[ -n $victim ]] || die "the leader, node $old, is not a node of $dir"
echo "== $(acked_count) records acknowledged; the leader of $TOPIC-0 is node $old: kill -9 $victim"
kill -KILL "$victim"
new_leader() {
  local l
  l=$(leader_of)
  [[ $l =~ ^[0-9]+$ && $l != "$old" ]]
}
wait_until "$timeout" 0.2 "a new leader" new_leader
echo "== new leader elected:"
"$CAPSTAN" topic describe "$TOPIC" --bootstrap "$bootstrap" | grep "Partition: "
target=$(($(acked_count) + after))
wait_until "$timeout" 0.2 "$after more records acknowledged after the failover" at_least_acked "$target"
stop_producer

echo "== consuming $TOPIC from the beginning"
"$CAPSTAN" consume "$TOPIC" --from-beginning --timeout-ms 5000 --print-offset \
  --bootstrap "$bootstrap" >"$dir/consumed.offsets" 2>"$dir/consume.err" ||
  die "consume failed: $(<"$dir/consume.err")"
cut -f2 "$dir/consumed.offsets" >"$dir/consumed"
# The log itself has no holes: the offsets read are 0, 1, 2, ... without a gap.
gaps=$(awk -F'\t' '$1 != NR - 1 { n++ } END { print n + 0 }' "$dir/consumed.offsets")
sort -n -u "$dir/acked" >"$dir/acked.sorted"
sort -n -u "$dir/consumed" >"$dir/consumed.sorted"
acked=$(wc -l <"$dir/acked.sorted")
read_total=$(wc -l <"$dir/consumed")
read_distinct=$(wc -l <"$dir/consumed.sorted")
missing=$(comm -23 "$dir/acked.sorted" "$dir/consumed.sorted" | wc -l)
echo "acknowledged: $acked, read: $read_total ($read_distinct distinct), missing: $missing," \
  "offset gaps: $gaps"
echo "(records read more than once were retried by the producer; records read but not" \
  "acknowledged are from batches the producer gave up on during the failover)"
if ((missing > 0)); then
  echo "error: acknowledged records missing (first 20):" >&2
  comm -23 "$dir/acked.sorted" "$dir/consumed.sorted" | head -n 20 >&2
  exit 1
fi
if ((gaps > 0)); then
  echo "error: the offsets read are not 0..$((read_total - 1)) without a gap:" >&2
  awk -F'\t' '$1 != NR - 1 { print "  offset " $1 " read as record " NR; if (++n == 20) exit }' \
    "$dir/consumed.offsets" >&2
  exit 1
fi
echo "every acknowledged record was read back, at offsets without a gap"
