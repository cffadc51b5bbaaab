# shellcheck shell=bash
# Shared by examples/*/start.sh and stop.sh (sourced, not run): starts N local `capstan node`
# processes on 127.0.0.1 with a controller quorum of the first V of them, and stops them again by
# the pids it wrote. Everything lives under $EXAMPLE_DIR:
#   node-I/        node I's data dir          node-I.log   its log (stderr)
#   node-I.pid     its pid                    node-I.addr  its client address (HOST:PORT)
#   bootstrap      every client address, comma-separated, for --bootstrap
#   kafka-bootstrap  every Kafka listener address, comma-separated, for a Kafka client's -b
# Every wait is bounded; see examples/README.md for the variables the scripts read.

die() {
  echo "error: $*" >&2
  exit 1
}

# The Ith (1-based) entry of a comma- or space-separated list.
nth() {
  local list=${1//,/ }
  local -a items
  read -r -a items <<<"$list"
  echo "${items[$(($2 - 1))]:-}"
}

count() {
  local list=${1//,/ }
  local -a items
  read -r -a items <<<"$list"
  echo "${#items[@]}"
}

# wait_until TIMEOUT_S POLL_S DESCRIPTION COMMAND...: runs COMMAND every POLL_S seconds until it
# succeeds; dies naming DESCRIPTION after TIMEOUT_S.
wait_until() {
  local deadline=$((SECONDS + $1)) poll=$2 what=$3 limit=$1
  shift 3
  until "$@"; do
    ((SECONDS < deadline)) || die "$what: not within $limit s"
    sleep "$poll"
  done
}

# Pid of node I if that process is alive (a zombie is not) and is the node this directory
# started: its command line names its data dir. Empty otherwise.
live_pid() {
  local dir=$1 id=$2 pid state
  [[ -f $dir/node-$id.pid ]] || return 0
  pid=$(<"$dir/node-$id.pid")
  [[ $pid =~ ^[0-9]+$ ]] || return 0
  [[ -r /proc/$pid/stat ]] || return 0
  state=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || return 0
  [[ $state != Z ]] || return 0
  tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF -- "--data-dir $dir/node-$id " || return 0
  echo "$pid"
}

node_ids() {
  local dir=$1 f
  for f in "$dir"/node-*.pid; do
    [[ -e $f ]] || continue
    f=${f##*/node-}
    echo "${f%.pid}"
  done
}

# cluster_stop DIR: SIGTERM to every node DIR started, STOP_TIMEOUT_S (default 30) for a clean
# exit, then SIGKILL to what is left; removes the pid files of the nodes that are gone.
cluster_stop() {
  local dir=$1 id pid
  local -a ids=() pids=()
  for id in $(node_ids "$dir"); do
    pid=$(live_pid "$dir" "$id")
    if [[ -z $pid ]]; then
      echo "node $id: not running"
      rm -f "$dir/node-$id.pid"
      continue
    fi
    echo "node $id: SIGTERM to pid $pid"
    kill -TERM "$pid" 2>/dev/null || true
    ids+=("$id")
    pids+=("$pid")
  done
  local deadline=$((SECONDS + ${STOP_TIMEOUT_S:-30})) left i
  while :; do
    left=0
    for i in "${!ids[@]}"; do
      [[ -n $(live_pid "$dir" "${ids[$i]}") ]] && left=$((left + 1))
    done
    ((left == 0 || SECONDS >= deadline)) && break
    sleep 0.2
  done
  for i in "${!ids[@]}"; do
    if [[ -n $(live_pid "$dir" "${ids[$i]}") ]]; then
      echo "node ${ids[$i]}: still running after ${STOP_TIMEOUT_S:-30} s; SIGKILL to pid ${pids[$i]}"
      kill -KILL "${pids[$i]}" 2>/dev/null || true
    fi
  done
  deadline=$((SECONDS + 10))
  for i in "${!ids[@]}"; do
    while [[ -n $(live_pid "$dir" "${ids[$i]}") ]]; do
      ((SECONDS < deadline)) || die "node ${ids[$i]} (pid ${pids[$i]}) survived SIGKILL"
      sleep 0.1
    done
    echo "node ${ids[$i]}: stopped"
    rm -f "$dir/node-${ids[$i]}.pid"
  done
}

# stop_main DEFAULT_DIR [ARGS...]: the whole of a stop.sh: help for -h, then cluster_stop on
# $EXAMPLE_DIR (default DEFAULT_DIR).
stop_main() {
  local default_dir=$1
  shift
  local usage="Usage: $0 [-h]

Stops the nodes that start.sh started from \$EXAMPLE_DIR (default $default_dir), each by the
pid in \$EXAMPLE_DIR/node-N.pid and only if that process is still the node started there: SIGTERM,
then SIGKILL to any still running after \$STOP_TIMEOUT_S (default 30). Data dirs and logs stay."
  if [[ ${1:-} == -h || ${1:-} == --help ]]; then
    echo "$usage"
    return 0
  fi
  (($# == 0)) || { echo "$usage" >&2; exit 2; }
  local dir=${EXAMPLE_DIR:-$default_dir}
  [[ -d $dir ]] || die "EXAMPLE_DIR '$dir' is not a directory"
  cluster_stop "$(cd "$dir" && pwd)"
}

# cluster_start NODES VOTERS DEFAULT_DIR DEFAULT_PARTITIONS SCRIPT_DIR DEFAULT_CLUSTER_ID: starts
# the nodes (each example has a cluster id of its own, so that its nodes refuse another example's
# data dirs), creates $TOPIC with replication factor 3 and min.insync.replicas=2, waits until every
# partition has a leader and all three replicas in its ISR, and prints how to use the cluster. On
# any failure it stops the nodes it started and exits 1.
cluster_start() {
  local nodes=$1 voters=$2 script_dir=$5
  local capstan=${CAPSTAN:-./build/runtime/capstan}
  local dir=${EXAMPLE_DIR:-$3}
  local topic=${TOPIC:-example}
  local partitions=${PARTITIONS:-$4}
  local cluster_id=${CLUSTER_ID:-$6}
  local timeout=${START_TIMEOUT_S:-60}
  local i

  [[ -x $capstan ]] || die "no capstan binary at '$capstan': build it (cmake --build build) or set CAPSTAN"
  [[ $partitions =~ ^[1-9][0-9]*$ ]] || die "PARTITIONS must be an integer >= 1, not '$partitions'"
  [[ -z ${NODE_CONFIG:-} || -f ${NODE_CONFIG:-} ]] || die "NODE_CONFIG names no file: '$NODE_CONFIG'"
  mkdir -p "$dir" || die "cannot create EXAMPLE_DIR '$dir'"
  dir=$(cd "$dir" && pwd)
  for i in $(node_ids "$dir"); do
    [[ -z $(live_pid "$dir" "$i") ]] ||
      die "node $i of $dir is running already (pid $(<"$dir/node-$i.pid")); stop it with $script_dir/stop.sh"
  done

  local -a client cluster metrics kafka
  local list port
  for i in $(seq 1 "$nodes"); do
    client[i]=$((19092 + 100 * (i - 1)))
    cluster[i]=$((19093 + 100 * (i - 1)))
    metrics[i]=$((19094 + 100 * (i - 1)))
    kafka[i]=$((19095 + 100 * (i - 1)))
  done
  for list in CLIENT_PORTS CLUSTER_PORTS METRICS_PORTS KAFKA_PORTS; do
    [[ -n ${!list:-} ]] || continue
    (($(count "${!list}") == nodes)) || die "$list must list $nodes ports, not '${!list}'"
    for i in $(seq 1 "$nodes"); do
      port=$(nth "${!list}" "$i")
      if ! [[ $port =~ ^[0-9]+$ ]] || ((port < 1 || port > 65535)); then
        die "$list: '$port' is not a port"
      fi
      case $list in
        CLIENT_PORTS) client[i]=$port ;;
        CLUSTER_PORTS) cluster[i]=$port ;;
        METRICS_PORTS) metrics[i]=$port ;;
        KAFKA_PORTS) kafka[i]=$port ;;
      esac
    done
  done

  local quorum="" bootstrap="" kafka_bootstrap=""
  for i in $(seq 1 "$voters"); do quorum+="${quorum:+,}$i@127.0.0.1:${cluster[i]}"; done
  for i in $(seq 1 "$nodes"); do
    bootstrap+="${bootstrap:+,}127.0.0.1:${client[i]}"
    kafka_bootstrap+="${kafka_bootstrap:+,}127.0.0.1:${kafka[i]}"
  done
  echo "$bootstrap" >"$dir/bootstrap"
  echo "$kafka_bootstrap" >"$dir/kafka-bootstrap"

  # From here on an exit before the end stops what was started.
  # shellcheck disable=SC2064 # the directory is fixed now
  trap "echo 'start failed; stopping the nodes it started' >&2; cluster_stop $(printf %q "$dir") >&2" EXIT
  local -a config=()
  if [[ -n ${NODE_CONFIG:-} ]]; then config=(--config "$NODE_CONFIG"); fi
  # Each node's Kafka listener on a port of its own: they share one machine, and each would
  # take Kafka's 127.0.0.1:9092 by default.
  for i in $(seq 1 "$nodes"); do
    mkdir -p "$dir/node-$i"
    "$capstan" node --node-id "$i" --data-dir "$dir/node-$i" --listen "127.0.0.1:${client[i]}" \
      --cluster-listen "127.0.0.1:${cluster[i]}" --metrics-listen "127.0.0.1:${metrics[i]}" \
      --kafka-listen "127.0.0.1:${kafka[i]}" \
      --controller-quorum "$quorum" --cluster-id "$cluster_id" "${config[@]}" \
      </dev/null >"$dir/node-$i.log" 2>&1 &
    echo $! >"$dir/node-$i.pid"
    echo "127.0.0.1:${client[i]}" >"$dir/node-$i.addr"
  done

  local deadline=$((SECONDS + timeout))
  for i in $(seq 1 "$nodes"); do
    until grep -q "node $i ready" "$dir/node-$i.log"; do
      if [[ -z $(live_pid "$dir" "$i") ]]; then
        tail -n 20 "$dir/node-$i.log" >&2
        die "node $i exited during start-up; its log is $dir/node-$i.log"
      fi
      ((SECONDS < deadline)) || die "node $i not ready within $timeout s; its log is $dir/node-$i.log"
      sleep 0.2
    done
  done

  # The nodes register with the controller they elect: until three have, RF=3 is refused.
  local out=""
  until out=$("$capstan" topic create "$topic" --partitions "$partitions" --replication-factor 3 \
    --config min.insync.replicas=2 --bootstrap "$bootstrap" 2>&1) ||
    [[ $out == *TOPIC_ALREADY_EXISTS* ]]; do
    ((SECONDS < deadline)) || die "topic '$topic' not created within $timeout s: $out"
    sleep 0.5
  done
  until out=$("$capstan" topic describe "$topic" --bootstrap "$bootstrap" 2>&1) &&
    awk -v want="$partitions" '
      /Partition: / { n++; for (f = 1; f <= NF; f++) {
          if ($f == "Leader:" && $(f + 1) == "none") bad = 1
          if ($f == "Isr:" && split($(f + 1), isr, ",") != 3) bad = 1 } }
      END { exit !(n == want && !bad) }' <<<"$out"; do
    ((SECONDS < deadline)) || die "topic '$topic' has a partition without leader or with fewer than 3 replicas in sync after $timeout s:
$out"
    sleep 0.5
  done
  trap - EXIT

  echo "Cluster '$cluster_id' is up in $dir: $nodes nodes, controller quorum $quorum"
  for i in $(seq 1 "$nodes"); do
    local role="broker"
    if ((i <= voters)); then role="voter and broker"; fi
    echo "  node $i ($role): pid $(<"$dir/node-$i.pid"), client 127.0.0.1:${client[i]}," \
      "Kafka 127.0.0.1:${kafka[i]}, metrics http://127.0.0.1:${metrics[i]}/metrics," \
      "log $dir/node-$i.log"
  done
  echo
  echo "Topic '$topic': $partitions partition(s), replication factor 3, min.insync.replicas=2:"
  echo "$out"
  echo
  echo "Produce (one record per stdin line):"
  printf '  printf %s | %s\n' "'one\ntwo\n'" "$capstan produce $topic --acks all --bootstrap $bootstrap"
  echo "Consume:"
  echo "  $capstan consume $topic --from-beginning --timeout-ms 5000 --bootstrap $bootstrap"
  echo "Or with a Kafka client (kcat):"
  echo "  printf 'three\\n' | kcat -b $kafka_bootstrap -P -t $topic -X acks=all"
  echo "  kcat -b $kafka_bootstrap -C -t $topic -o beginning -e"
  echo "Describe:"
  echo "  $capstan topic describe $topic --bootstrap $bootstrap"
  echo "Stop:"
  echo "  EXAMPLE_DIR=$dir $script_dir/stop.sh"
}
