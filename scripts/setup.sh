#!/usr/bin/env bash
# Installs the Debian bookworm packages capstan needs to build and test, only those missing.
# Idempotent, no prompts; run as root (CI and a fresh machine are root). Usage: scripts/setup.sh
set -euo pipefail

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

if ((${#missing[@]} == 0)); then
  exit 0
fi

if ((EUID != 0)); then
  echo "setup: missing packages (${missing[*]}); run as root to install them" >&2
  exit 1
fi

echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
