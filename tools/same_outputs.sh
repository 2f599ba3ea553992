#!/usr/bin/env bash
# Checks that a change to the simulator's internals changed no result: runs a baseline kvtier
# and a changed kvtier on the same cases and compares stats.json (all but the top-level
# "wall_time_s", the host's wall clock, and the provenance's records of the inputs),
# requests.jsonl and series.json byte for byte (and
# cache-curve's table and JSON).
# The cases cover the paths a host control-plane change can reach: the default platform's
# streamed regime and the pinned preset's all-layer blocks, per-layer blocks, every replacement policy, persistent policy state, idle session end, streamed decode
# residency, prefetch, host-issued copies, recompression with a tier small enough to evict, the
# RTL engine, every link protocol (credits that keep DMA bursts from joining, bit errors, a
# retry buffer that holds flits back, an ACK per TLP);
# then kvtier cache-curve over every policy. Baseline outputs are kept in WORKDIR/base/CASE
# and reused when present (build the baseline once, check many changes against it).
# Run from the repository root (the excerpt case reads workloads/traces/).
# Usage: tools/same_outputs.sh BASELINE_KVTIER CHANGED_KVTIER [WORKDIR]   (exit 1 on any difference)
# Example: tools/same_outputs.sh /tmp/kvtier.main build/platforms/kvtier /tmp/same
# SAME_OUTPUTS_IGNORE=group[,group...]: top-level stats.json keys left out of the comparison, for
# a change that adds a group by design (say so where the result is quoted), e.g.
#   SAME_OUTPUTS_IGNORE=runtime_cpu tools/same_outputs.sh /tmp/kvtier.before build/platforms/kvtier
set -euo pipefail
base=${1:?baseline kvtier binary}
changed=${2:?changed kvtier binary}
work=${3:-$(mktemp -d)}
mkdir -p "$work/base" "$work/new"

per_layer=(--set host.layers_per_block=1 --set ctrl.index_sets=262144)
# A 3 GiB KV budget makes 20 sessions of the default's long answers spill and stream (195 k
# streamed promotions, 606 blocks restored, 11 preemptions; 685 k with host.restore_streamed=false).
streamed=(--set host.layers_per_block=10 --set host.block_tokens=128 --set host.decode_residency=streamed
          --workload synthetic:sessions=20 --set hbm.kv_budget_gib=3)
declare -A cases=(
  [default]=""
  [default-idle]="--set host.session_end=idle"
  [default-simple]="--set link.protocol=simple"
  [default-cxl3]="--set link.protocol=cxl3"
  [default-cxl3-lopt]="--set link.protocol=cxl3-lopt"
  [default-pcie5]="--set link.protocol=pcie5"
  [default-x8]="--set link.lanes=8"
  [default-credits-512]="--set link.credits_posted=512"
  [default-ber]="--set link.bit_error_rate=1e-9"
  [default-retry-bound]="--set link.device_port_ns=100"
  [default-cxl3-retry-bound]="--set link.protocol=cxl3 --set link.retry_buffer_units=64 --set link.device_port_ns=100"
  [default-ack-per-tlp]="--set link.tlps_per_ack=1"
  [default-lfu-persistent]="--set host.policy=lfu --set host.persistent_policy=true"
  [default-prefetch]="--set host.prefetch_horizon_steps=8"
  [default-deadline-prefetch]="--set ctrl.transfer_order=deadline --set host.prefetch_horizon_steps=8"
  [default-host-dma]="--set host.dma=host"
  [default-recompress-small-tier]="--set host.tier_format=bf16 --set host.recompress_format=fp8 --set tier.capacity_gib=40"
  [small-rtl]="--set ctrl.impl=rtl --workload synthetic:sessions=20 --set hbm.kv_budget_gib=3"
  [small-rtl-layer]="--set ctrl.impl=rtl --workload synthetic:sessions=20 --set hbm.kv_budget_gib=3 --set host.layers_per_block=1"
  [layer]="${per_layer[*]}"
  [layer-lfu]="${per_layer[*]} --set host.policy=lfu"
  [layer-ema]="${per_layer[*]} --set host.policy=ema"
  [layer-priority]="${per_layer[*]} --set host.policy=priority --set host.tenant_qos=0,1,2"
  [layer-admission]="${per_layer[*]} --set host.policy=admission"
  [layer-persistent]="${per_layer[*]} --set host.persistent_policy=true"
  [layer-ema-persistent]="${per_layer[*]} --set host.policy=ema --set host.persistent_policy=true"
  [layer-idle]="${per_layer[*]} --set host.session_end=idle"
  [layer-cxl2-small]="${per_layer[*]} --set link.protocol=cxl2 --workload synthetic:sessions=40"
  [streamed]="${streamed[*]}"
  [streamed-lfu]="${streamed[*]} --set host.policy=lfu"
  [streamed-keep]="${streamed[*]} --set host.restore_streamed=false"
  [streamed-preset]="--platform h200-cxl2-x16-streamed.ini"
  [pinned]="--platform h200-cxl2-x16-pinned"
  [pinned-idle]="--platform h200-cxl2-x16-pinned --set host.session_end=idle"
  [pinned-layer]="--platform h200-cxl2-x16-pinned ${per_layer[*]}"
  [excerpt]="--workload mooncake:workloads/traces/mooncake/conversation_trace_head1000.jsonl"
)

strip() {  # the comparable part of a run's outputs
  # stats.json without the wall clock, and without the provenance keys that record the inputs
  # (workload_spec, overrides, model, config_fnv1a64): equal inputs give equal values, and a
  # baseline older than them lacks them.
  python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
s.pop("wall_time_s", None)
for k in filter(None, sys.argv[2].split(",")):
    s.pop(k, None)
    about = s.get("about", {})  # what each key means, flat and dotted
    for a in [a for a in about if a == k or a.startswith(k + ".")]:
        del about[a]
for k in ("workload_spec", "overrides", "model", "config_fnv1a64"):
    s.get("provenance", {}).pop(k, None)
print(json.dumps(s, indent=2))' "$1/stats.json" "${SAME_OUTPUTS_IGNORE:-}"
  cat "$1/requests.jsonl" "$1/series.json"
}

failed=0
for name in $(printf '%s\n' "${!cases[@]}" | sort); do
  read -r -a opts <<<"${cases[$name]}"
  if [[ ! -f $work/base/$name/stats.json ]]; then
    "$base" run "${opts[@]}" --out "$work/base/$name" >/dev/null
  fi
  start=$(date +%s.%N)
  "$changed" run "${opts[@]}" --out "$work/new/$name" >/dev/null
  wall=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN{printf "%.1f", e - s}')
  if cmp -s <(strip "$work/base/$name") <(strip "$work/new/$name"); then
    printf '%-24s identical  (%s s)\n' "$name" "$wall"
  else
    printf '%-24s DIFFERENT  (diff %s/base/%s %s/new/%s)\n' "$name" "$work" "$name" "$work" "$name"
    failed=1
  fi
done
# The replacement policies alone (kvtier cache-curve: the standalone policy store), with and
# without persistent state.
for persistent in "" --persistent; do
  name=cache-curve${persistent}
  curve=(cache-curve synthetic: --sizes 100,1000,10000 --policies lru,lfu,ema,priority,admission,belady $persistent)
  if [[ ! -f $work/base/$name.json ]]; then
    "$base" "${curve[@]}" --json "$work/base/$name.json" >"$work/base/$name.txt"
  fi
  "$changed" "${curve[@]}" --json "$work/new/$name.json" >"$work/new/$name.txt"
  if cmp -s "$work/base/$name.json" "$work/new/$name.json" && cmp -s "$work/base/$name.txt" "$work/new/$name.txt"; then
    printf '%-24s identical\n' "$name"
  else
    printf '%-24s DIFFERENT  (diff %s/base/%s.txt %s/new/%s.txt)\n' "$name" "$work" "$name" "$work" "$name"
    failed=1
  fi
done
exit $failed
