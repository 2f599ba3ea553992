#!/usr/bin/env python3
"""sim.offline_bound = false skips the offline-optimal bound and nothing else: the same run with
and without it gives byte-identical requests.jsonl and series.json and the same stats.json, but
for the bound's three metrics and its group `offline_bound`, which are null (with the reason in
`about`) instead of numbers, and the provenance of the run's own --set. In particular U
(`blocks.unique`, distinct keys: from the string with the bound, from the created keys without
it) and so a_read and a_traffic are the same. The default run is checked, a per-layer one, and
a streamed one whose books create blocks again after losing them (U below the creations).

Usage: offline_bound_check.py KVTIER
"""
import json
import pathlib
import subprocess
import sys
import tempfile

BOUND = ("a_read_opt", "a_traffic_opt", "hit_rate_opt")
CASES = {
    "default": [],
    "per-layer": ["--workload", "synthetic:sessions=2", "--set", "hbm.kv_budget_gib=2",
                  "--set", "host.layers_per_block=1", "--set", "ctrl.index_sets=262144"],
    "recreated": ["--workload", "synthetic:sessions=20", "--set", "hbm.kv_budget_gib=3",
                  "--set", "host.layers_per_block=10", "--set", "host.block_tokens=128",
                  "--set", "host.decode_residency=streamed"],
}


def run(kvtier, args, out):
    p = subprocess.run([kvtier, "run", *args, "--out", out], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"FAILED: kvtier run {' '.join(args)} exited {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def main():
    kvtier = sys.argv[1]
    failed = []
    with tempfile.TemporaryDirectory() as d:
        for name, args in CASES.items():
            on, off = f"{d}/{name}-on", f"{d}/{name}-off"
            run(kvtier, args, on)
            summary = run(kvtier, args + ["--set", "sim.offline_bound=false"], off)
            a = json.loads(pathlib.Path(on, "stats.json").read_text())
            b = json.loads(pathlib.Path(off, "stats.json").read_text())
            for key in BOUND:
                if not isinstance(a.get(key), (int, float)):
                    failed.append(f"{name}: {key} is {a.get(key)!r} with the bound on")
                if b.get(key, 0) is not None:
                    failed.append(f"{name}: {key} is {b.get(key)!r} with the bound off, not null")
                if "sim.offline_bound = false" not in b["about"].get(key, ""):
                    failed.append(f"{name}: about.{key} does not say why it is null")
                if f"{key} " not in summary or "n/a" not in summary.split(f"{key} ", 1)[1].split("\n", 1)[0]:
                    failed.append(f"{name}: the summary does not print {key} as n/a")
            group_on, group_off = a.get("offline_bound", {}), b.get("offline_bound", {})
            if not group_on or not all(isinstance(v, int) for v in group_on.values()):
                failed.append(f"{name}: offline_bound is {group_on!r} with the bound on")
            if set(group_off) != set(group_on) or any(v is not None for v in group_off.values()):
                failed.append(f"{name}: offline_bound is {group_off!r} with the bound off, not nulls")
            if group_on.get("distinct_keys") != a["blocks"]["unique"]:
                failed.append(f"{name}: U {a['blocks']['unique']} is not the string's distinct keys")
            if name == "recreated" and not a["blocks"]["created_again"] > 0:
                failed.append(f"{name}: no block was created again, so U's two counts were not compared")
            for s in (a, b):
                for key in BOUND + ("wall_time_s", "about", "offline_bound"):
                    s.pop(key, None)
                for key in ("overrides", "config_fnv1a64"):
                    s.get("provenance", {}).pop(key, None)
            if a != b:
                diff = [k for k in set(a) | set(b) if a.get(k) != b.get(k)]
                failed.append(f"{name}: stats.json differs beyond the bound: {sorted(diff)}")
            for f in ("requests.jsonl", "series.json"):
                if pathlib.Path(on, f).read_bytes() != pathlib.Path(off, f).read_bytes():
                    failed.append(f"{name}: {f} differs")
            print(f"{name:10s} {'ok' if not failed else 'FAILED'}")
    if failed:
        print("\n".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    main()
