#!/usr/bin/env bash
# Builds capstan and runs a node on its embedded single-node default (data in ./capstan-data).
# Installs missing Debian packages first (scripts/setup.sh). Extra arguments go to `capstan node`.
# Usage: scripts/run.sh [--data-dir DIR] ...
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j2 --target capstan
exec build/runtime/capstan node "$@"
