#!/usr/bin/env bash
# Installs the Debian bookworm packages capstan needs to build and test, only those missing, and
# the kafkajs client the system tests run (from the npm registry into tests/kafkajs/node_modules,
# which git ignores, at the version tests/kafkajs/package-lock.json pins).
# Idempotent, no prompts; run as root (CI and a fresh machine are root). Usage: scripts/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  g++ cmake make pkg-config ccache
  libcaf-dev capnproto libcapnp-dev libssl-dev
  libspdlog-dev libfmt-dev catch2 libcli11-dev libtomlplusplus-dev
  zlib1g-dev libsnappy-dev liblz4-dev libzstd-dev # record batch compression
  clang libclang-rt-14-dev # the fuzz build: clang 14 and its libFuzzer and sanitizer runtimes
  kcat python3 python3-confluent-kafka python3-kafka # Kafka clients the system tests run
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

# npm comes with Node.js on some machines and as Debian's npm package on others.
command -v npm >/dev/null || missing+=(nodejs npm)

if ((${#missing[@]} > 0)); then
  if ((EUID != 0)); then
    echo "setup: missing packages (${missing[*]}); run as root to install them" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [[ ! -f tests/kafkajs/node_modules/kafkajs/package.json ]]; then
  echo "setup: installing kafkajs into tests/kafkajs/node_modules"
  npm ci --prefix tests/kafkajs --no-audit --no-fund --loglevel=error >/dev/null
fi
