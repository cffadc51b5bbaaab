#!/usr/bin/env bash
# Stops the nodes start.sh started from $EXAMPLE_DIR, by the pids it wrote: SIGTERM, up to
# $STOP_TIMEOUT_S for a clean exit, then SIGKILL. Run with -h for help.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

usage() {
  cat <<USAGE
Usage: $0 [-h]

Stops the nodes that start.sh started from \$EXAMPLE_DIR (default ./example-5node), each by the
pid in \$EXAMPLE_DIR/node-N.pid and only if that process is still the node started there: SIGTERM,
then SIGKILL to any still running after \$STOP_TIMEOUT_S (default 30). Data dirs and logs stay.
USAGE
}
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  usage
  exit 0
fi
(($# == 0)) || { usage >&2; exit 2; }

# shellcheck source=SCRIPTDIR/../lib/cluster.sh
source "$here/../lib/cluster.sh"
dir=${EXAMPLE_DIR:-./example-5node}
[[ -d $dir ]] || die "EXAMPLE_DIR '$dir' is not a directory"
cluster_stop "$(cd "$dir" && pwd)"
