#!/usr/bin/env bash
# Wall and CPU (user) time of one workload with the first-order link (simple) and with each
# flit-accurate link (cxl2, cxl3, cxl3-lopt, pcie5) on the fast flit engine, run one after
# another in this script, each `repeat` times (the fastest kept: other work on the machine
# only adds time); then each flit link's ratio to simple. Unless --no-reference, also cxl2 on
# the reference (flit-by-flit) engine, and the fast/reference difference on the figures link
# studies read (exit 1 above 0.1 %). CPU time is the steadier figure on a loaded machine.
# Usage: tools/link_engine_speed.sh [--no-reference] [--repeat N] [path/to/kvtier] [extra kvtier run options...]
# Example: tools/link_engine_speed.sh --no-reference --repeat 3 build/platforms/kvtier
#          tools/link_engine_speed.sh build/platforms/kvtier --workload mooncake:trace.jsonl
set -euo pipefail
reference=1
repeat=1
while [[ $# -gt 0 ]]; do
  case $1 in
    --no-reference) reference=0; shift ;;
    --repeat) repeat=$2; shift 2 ;;
    *) break ;;
  esac
done
kvtier=${1:-build/platforms/kvtier}
shift || true
extra=("$@")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() {  # name, then --set options
  local name=$1
  shift
  local TIMEFORMAT='%3R %3U' best_wall='' best_user=''
  for ((i = 0; i < repeat; i++)); do
    { time "$kvtier" run "$@" --out "$out/$name" "${extra[@]}" >/dev/null; } 2>"$out/$name.time"
    read -r wall user <"$out/$name.time"
    if [[ -z $best_user ]] || awk "BEGIN{exit !($user < $best_user)}"; then best_user=$user; fi
    if [[ -z $best_wall ]] || awk "BEGIN{exit !($wall < $best_wall)}"; then best_wall=$wall; fi
  done
  echo "$best_wall $best_user" >"$out/$name.time"
  printf '%-15s %8.2f s wall %8.2f s user\n' "$name" "$best_wall" "$best_user"
}
names=(simple)
run simple --set link.protocol=simple
for p in cxl2 cxl3 cxl3-lopt pcie5; do
  run "$p-fast" --set link.protocol=$p --set link.flit_engine=fast
  names+=("$p-fast")
done
[[ $reference == 1 ]] && run cxl2-reference --set link.protocol=cxl2 --set link.flit_engine=reference
python3 - "$out" "$reference" "${names[@]}" <<'PY'
import json, sys
out, reference, names = sys.argv[1], sys.argv[2] == "1", sys.argv[3:]
t = {n: [float(x) for x in open(f"{out}/{n}.time").read().split()] for n in names}
for n in names[1:]:
    print(f"{n + ' / simple':24s} {t[n][0] / t['simple'][0]:5.2f}x wall {t[n][1] / t['simple'][1]:5.2f}x user")
if not reference:
    sys.exit(0)
ref = [float(x) for x in open(f"{out}/cxl2-reference.time").read().split()]
print(f"{'cxl2-reference / fast':24s} {ref[0] / t['cxl2-fast'][0]:5.1f}x wall {ref[1] / t['cxl2-fast'][1]:5.1f}x user")
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
