#!/usr/bin/env bash
# Installs the Debian packages kvtier builds with. Idempotent: it only calls apt-get when a
# package is missing, so the README commands can run it every time.
set -euo pipefail
packages=(
  build-essential cmake pkg-config
  libsystemc-dev            # SystemC 2.3.4 with TLM-2.0 (pkg-config only)
  verilator                 # 5.x, ships verilator-config.cmake
  libboost-program-options-dev
  libgtest-dev
  nlohmann-json3-dev
  python3                   # generator for the command-set files
  python3-matplotlib        # plots in tools/
  clang-14 libclang-rt-14-dev   # libFuzzer targets (preset fuzz)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "kvtier setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi
