#!/usr/bin/env bash
# Starts a local 5-node capstan cluster: five `capstan node` processes on 127.0.0.1, each its
# own data dir and ports; nodes 1-3 are the controller quorum's voters, nodes 4-5 brokers only.
# Creates a topic with three partitions, replication factor 3 and min.insync.replicas=2 (so the
# replicas spread over all five nodes) and prints how to produce and consume.
# Stop it with stop.sh (same EXAMPLE_DIR). Run with -h for the variables it reads.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

usage() {
  cat <<USAGE
Usage: $0 [-h]

Starts five capstan nodes (ids 1-5; 1-3 are controller voters, all five are brokers) in the background,
writes their pids to \$EXAMPLE_DIR/node-N.pid, creates topic \$TOPIC (replication factor 3,
min.insync.replicas=2) and waits (at most \$START_TIMEOUT_S) until every partition has a leader
and three replicas in sync. Environment:
  CAPSTAN          the capstan binary               (default ./build/runtime/capstan)
  EXAMPLE_DIR      data dirs, logs and pid files    (default ./example-5node)
  CLIENT_PORTS     client ports of nodes 1-5        (default 19092,19192,...,19492)
  CLUSTER_PORTS    cluster ports of nodes 1-5       (default 19093,19193,...,19493)
  METRICS_PORTS    metrics ports of nodes 1-5       (default 19094,19194,...,19494)
  KAFKA_PORTS      Kafka ports of nodes 1-5         (default 19095,19195,...,19495)
  CLUSTER_ID       --cluster-id of every node       (default capstan-example-5node)
  TOPIC            topic to create                  (default example)
  PARTITIONS       its partitions                   (default 3)
  NODE_CONFIG      a node config file (TOML) passed as --config to every node (default none)
  START_TIMEOUT_S  bound on every wait              (default 60)
Every node listens on 127.0.0.1 only.
USAGE
}
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  usage
  exit 0
fi
(($# == 0)) || { usage >&2; exit 2; }

# shellcheck source=SCRIPTDIR/../lib/cluster.sh
source "$here/../lib/cluster.sh"
cluster_start 5 3 ./example-5node 3 "$here" capstan-example-5node
