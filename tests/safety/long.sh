#!/usr/bin/env bash
# The long safety run (docs/safety.md): the long profile (600 faults drawn, none started after
# an hour, so faults run for the whole hour), one seed, its markdown table written to
# safety-long.md with the date and the commit, ready for docs/safety.md. Run from the repository root after building:
#   cmake --build build -j2 --target safety_harness
#   tests/safety/long.sh [SEED]
# Exits as the harness does: 0 with no anomaly, 1 with one, 2 when it could not run.
set -euo pipefail
cd "$(dirname "$0")/../.."

seed="${1:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}"
commit="$(git rev-parse --short HEAD)"
title="Long run, $(date -u +%Y-%m-%d), commit ${commit}, seed ${seed}"
exec build/tests/safety_harness --seed "${seed}" --profile long --report safety-long.md \
  --title "${title}"
