#!/usr/bin/env bash
# Lockstep equivalence and bare speed of the engine against an earlier revision's RTL.
#   tools/rtl_lockstep/run.sh REVISION [CYCLES]
# Verilates rtl/ of REVISION and of the work tree with the co-simulation parameters, then
# runs two seeds in lockstep (exit 1 on any differing cycle) and each model alone. REVISION
# must have the DMA port of burst runs and done counts (rtl/kvdp_dma.sv; the revisions before
# it had one burst per handshake and one done pulse per burst).
set -euo pipefail
rev=${1:?usage: run.sh REVISION [CYCLES]}
cycles=${2:-400000}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/old_rtl"
for f in $(git -C "$root" ls-tree --name-only "$rev" rtl/); do
  case $f in *.sv|*.svh) git -C "$root" show "$rev:$f" > "$work/old_rtl/$(basename "$f")" ;; esac
done
params="-GSets=16384 -GWays=4 -GTagBits=40 -GTenantBits=16 -GTierAddrBits=64 -GTierAddrLsb=0
 -GHbmSlotBits=64 -GHbmSlotLsb=0 -GLengthBits=32 -GPolicyBits=64 -GIndexReadLatency=2 -GDescQueueDepth=8
 -GXferQueueDepth=16 -GCplQueueDepth=32 -GMaxBurstBytes=65536 -GMaxOutstanding=16 -GMaxRunBursts=32 -GCounterBits=64"
order="kvdp_cmdset_pkg.sv kvdp_pkg.sv kvdp_fifo.sv kvdp_sram.sv kvdp_index.sv kvdp_lookup.sv kvdp_dma.sv
 kvdp_cpl_queue.sv kvdp_perf.sv kvdp_engine.sv"
build() {  # build PREFIX RTL_DIR
  local srcs=()
  for f in $order; do srcs+=("$2/$f"); done
  verilator --cc --assert --x-assign fast -Wno-fatal -I"$2" $params "${srcs[@]}" --top-module kvdp_engine \
    --prefix "$1" --Mdir "$work/$1" > /dev/null
  make -s -C "$work/$1" -j2 -f "$1.mk" OPT_FAST=-O2 OPT_SLOW=-O1 > /dev/null
}
build Vold "$work/old_rtl"
build Vnew "$root/rtl"
defines=""
grep -q cycle_skip_i "$work/old_rtl/kvdp_engine.sv" && defines="-DOLD_HAS_TEST_PORTS"
vr=/usr/share/verilator/include
g++ -O2 -std=c++17 $defines -I$vr -I$vr/vltstd -I"$work/Vold" -I"$work/Vnew" "$root/tools/rtl_lockstep/lockstep.cpp" \
  "$work/Vold/Vold__ALL.a" "$work/Vnew/Vnew__ALL.a" $vr/verilated.cpp $vr/verilated_threads.cpp -lpthread \
  -o "$work/lockstep"
"$work/lockstep" "$cycles" 1
"$work/lockstep" "$cycles" 2
"$work/lockstep" "$cycles" 1 old
"$work/lockstep" "$cycles" 1 new
