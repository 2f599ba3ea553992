#!/usr/bin/env bash
# Wall and CPU (user) time of one workload with the first-order link (simple), the
# flit-accurate cxl2 link with the fast flit engine, and the same with the reference
# (flit-by-flit) engine, run one after another in this script; then the ratios (CPU time is
# the steadier figure on a loaded machine) and the fast/reference difference on the figures
# link studies read (exit 1 above 0.1 %).
# Usage: tools/link_engine_speed.sh [path/to/kvtier] [extra kvtier run options...]
# Example: tools/link_engine_speed.sh build/platforms/kvtier --workload mooncake:trace.jsonl
set -euo pipefail
kvtier=${1:-build/platforms/kvtier}
shift || true
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() {  # name, then --set options
  local name=$1
  shift
  local TIMEFORMAT='%3R %3U'
  { time "$kvtier" run "$@" --out "$out/$name" "${extra[@]}" >/dev/null; } 2>"$out/$name.time"
  read -r wall user <"$out/$name.time"
  printf '%-14s %8.2f s wall %8.2f s user\n' "$name" "$wall" "$user"
}
extra=("$@")
run simple --set link.protocol=simple
run cxl2-fast --set link.protocol=cxl2 --set link.flit_engine=fast
run cxl2-reference --set link.protocol=cxl2 --set link.flit_engine=reference
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
t = {n: [float(x) for x in open(f"{out}/{n}.time").read().split()] for n in ("simple", "cxl2-fast", "cxl2-reference")}
for i, what in ((0, "wall"), (1, "user")):
    print(f"cxl2-fast / simple {what} time       {t['cxl2-fast'][i] / t['simple'][i]:.2f}x")
    print(f"cxl2-reference / cxl2-fast {what}    {t['cxl2-reference'][i] / t['cxl2-fast'][i]:.1f}x")
f = json.load(open(f"{out}/cxl2-fast/stats.json"))
r = json.load(open(f"{out}/cxl2-reference/stats.json"))
worst = 0.0
for key in ("link_wire_bytes_per_payload_byte", "promotion_latency_p50_s", "promotion_latency_p99_s",
            "exposed_stall_per_token_s"):
    rel = abs(f[key] - r[key]) / abs(r[key]) if r[key] else abs(f[key])
    worst = max(worst, rel)
    print(f"{key:34s} fast {f[key]:.9g}  reference {r[key]:.9g}  difference {100 * rel:.4f} %")
sys.exit(0 if worst <= 1e-3 else 1)
PY
