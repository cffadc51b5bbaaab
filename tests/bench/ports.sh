# Sourced by the benchmark scripts that start three nodes.

# True if nothing listens on TCP port $1 of 127.0.0.1.
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Prints a base port B, picked at random, such that B..B+2, B+100..B+102 and B+200..B+202 (each
# node's client, cluster and metrics ports) are free on 127.0.0.1; fails after 50 tries.
free_port_base() {
  local base ok off
  for _ in $(seq 1 50); do
    base=$((20000 + RANDOM % 120 * 100))
    ok=1
    for off in 0 1 2 100 101 102 200 201 202; do port_free $((base + off)) || { ok=0; break; }; done
    ((ok)) && { echo "$base"; return 0; }
  done
  echo "found no free ports for three nodes" >&2
  return 1
}
