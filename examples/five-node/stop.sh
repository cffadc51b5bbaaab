#!/usr/bin/env bash
# Stops the nodes start.sh started from $EXAMPLE_DIR, by the pids it wrote: SIGTERM, up to
# $STOP_TIMEOUT_S for a clean exit, then SIGKILL. Run with -h for help.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=SCRIPTDIR/../lib/cluster.sh
source "$here/../lib/cluster.sh"
stop_main ./example-5node "$@"
