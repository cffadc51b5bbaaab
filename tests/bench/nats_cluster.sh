# Sourced by the benchmark scripts that run a NATS JetStream peer: three nats-server processes on
# 127.0.0.1, one JetStream cluster over their routes, stopped by pid. The caller sets base_dir
# (configs, logs, stores, pids, servers), wait_s (bound on every wait), the ports
# NATS_BENCH_CPORT, NATS_BENCH_RPORT and NATS_BENCH_HPORT (client, route and monitoring ports of
# server 1; server I uses base+I-1), and has sourced examples/lib/cluster.sh (wait_until).

# Starts servers n1..n3 (config BASE/nI.conf, store BASE/nI, log BASE/nI.log), one JetStream
# cluster over their routes; line I of BASE/servers ("NAME URL") and of BASE/pids are server I.
# Waits (at most WAIT_S) until each one's /healthz is ok.
start_servers() {
  local i routes=""
  mkdir -p "$base_dir"
  : >"$base_dir/pids"
  : >"$base_dir/servers"
  for i in 1 2 3; do routes+="    nats-route://127.0.0.1:$((NATS_BENCH_RPORT + i - 1))"$'\n'; done
  for i in 1 2 3; do
    mkdir -p "$base_dir/n$i"
    cat >"$base_dir/n$i.conf" <<CONF
server_name: n$i
listen: 127.0.0.1:$((NATS_BENCH_CPORT + i - 1))
http: 127.0.0.1:$((NATS_BENCH_HPORT + i - 1))
jetstream {
  store_dir: "$base_dir/n$i"
}
cluster {
  name: capstan-bench
  listen: 127.0.0.1:$((NATS_BENCH_RPORT + i - 1))
  routes: [
$routes  ]
}
CONF
    nats-server -c "$base_dir/n$i.conf" </dev/null >"$base_dir/n$i.log" 2>&1 &
    echo $! >>"$base_dir/pids"
    disown # killed by pid on purpose: no job notice
    echo "n$i nats://127.0.0.1:$((NATS_BENCH_CPORT + i - 1))" >>"$base_dir/servers"
  done
  for i in 1 2 3; do
    wait_until "$wait_s" 0.2 "server n$i healthy" curl -fs --max-time 2 \
      "http://127.0.0.1:$((NATS_BENCH_HPORT + i - 1))/healthz" -o /dev/null
  done
}

# SIGTERM to every server in BASE/pids that still runs its config, SIGKILL after 10 s.
stop_servers() {
  [[ -f $base_dir/pids ]] || return 0
  local i pid
  for i in 1 2 3; do
    pid=$(sed -n "${i}p" "$base_dir/pids")
    [[ -n $pid ]] && runs_server "$pid" "$i" && kill -TERM "$pid" 2>/dev/null
  done
  for _ in $(seq 1 100); do
    local left=0
    for i in 1 2 3; do
      pid=$(sed -n "${i}p" "$base_dir/pids")
      [[ -n $pid ]] && runs_server "$pid" "$i" && left=1
    done
    ((left)) || return 0
    sleep 0.1
  done
  for i in 1 2 3; do
    pid=$(sed -n "${i}p" "$base_dir/pids")
    [[ -n $pid ]] && runs_server "$pid" "$i" && kill -KILL "$pid" 2>/dev/null
  done
  return 0
}

cmdline_of() { tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null; }
runs_server() { # PID I: is PID alive and the nats-server of server I (not a reused pid)?
  [[ $(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) =~ ^[^Z]$ ]] &&
    [[ $(cmdline_of "$1") == *nats-server*" $base_dir/n$2.conf"* ]]
}

