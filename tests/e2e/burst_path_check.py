#!/usr/bin/env python3
"""The direct burst path against its reference: every DMA burst placed by direct calls on tier
DRAM, the link and HBM (ctrl.burst_path = direct, the default) must give exactly what one TLM
transaction per access through the sockets gives (ctrl.burst_path = tlm), whether a transfer's
bursts are placed as one train (ctrl.burst_model = train, the default) or burst after burst
(ctrl.burst_model = per_burst): stats.json (but the wall clock), requests.jsonl and series.json,
and on two cases the timeline, byte for byte. Each case also checks that it moved blocks, so
that no case passes by doing nothing.

Usage: burst_path_check.py KVTIER
"""
import json
import pathlib
import subprocess
import sys
import tempfile

SMALL = ["--workload", "synthetic:sessions=4", "--set", "hbm.kv_budget_gib=4"]
CASES = {
    # Every link protocol: simple, PCIe 5, CXL 2 (68 B flits, the default), CXL 3, CXL 3 latency-optimised.
    "simple": SMALL + ["--set", "link.protocol=simple"],
    "pcie5": SMALL + ["--set", "link.protocol=pcie5"],
    "cxl2": SMALL,
    "cxl3": SMALL + ["--set", "link.protocol=cxl3"],
    "cxl3-lopt": SMALL + ["--set", "link.protocol=cxl3-lopt"],
    "cxl2-x8-credits": SMALL + ["--set", "link.lanes=8", "--set", "link.credits_posted=512"],
    # Bit errors: link-level retry replays units.
    "ber": SMALL + ["--set", "link.bit_error_rate=1e-9"],
    # Compressed tier copies through the compression engine.
    "compressed": SMALL + ["--set", "host.tier_format=fp8", "--set", "ctrl.compress_gbps=200"],
    # Deadline order with prefetches held in the engine's queue.
    "deadline": SMALL + ["--set", "ctrl.transfer_order=deadline", "--set", "host.prefetch_horizon_steps=8"],
    # One DMA engine: every burst of a transfer queues behind the one before on it.
    "one-engine": SMALL + ["--set", "ctrl.dma_engines=1"],
    # Recompression (tier to tier, burst by burst even in a train) with a tier small enough to evict.
    # (1,052 recompressions, 6,789 tier evictions.)
    "recompress": ["--workload", "synthetic:sessions=4", "--set", "hbm.kv_budget_gib=2",
                   "--set", "tier.capacity_gib=1", "--set", "host.tier_format=bf16",
                   "--set", "host.recompress_format=fp8", "--set", "ctrl.compress_gbps=200"],
    # Per-layer blocks (80 per position; the DMA bursts of a block are 1/80 the size).
    "per-layer": ["--workload", "synthetic:sessions=2", "--set", "hbm.kv_budget_gib=2",
                  "--set", "host.layers_per_block=1", "--set", "ctrl.index_sets=262144"],
    # The pinned preset: all-layer 5 MiB blocks.
    "pinned": ["--platform", "h200-cxl2-x16-pinned", "--workload", "synthetic:sessions=10",
               "--set", "hbm.kv_budget_gib=4"],
}

# Timelines are large (one event per burst): compared on two cases.
TIMELINE_CASES = {"cxl2", "deadline"}


def comparable(folder):
    # The wall clock differs, and so does what the provenance records of the two runs' own
    # --set ctrl.burst_path and ctrl.burst_model (its overrides and configuration hash); every other
    # key must agree.
    stats = json.loads(pathlib.Path(folder, "stats.json").read_text())
    stats.pop("wall_time_s", None)
    for key in ("overrides", "config_fnv1a64"):
        stats.get("provenance", {}).pop(key, None)
    stats = json.dumps(stats, indent=1)
    files = ["requests.jsonl", "series.json"] + (["timeline.json"] if pathlib.Path(folder, "timeline.json").exists() else [])
    return [stats] + [pathlib.Path(folder, f).read_text() for f in files]


def main():
    kvtier = sys.argv[1]
    failed = []
    with tempfile.TemporaryDirectory() as d:
        for name, args in CASES.items():
            outs = []
            for path, model in (("tlm", "per_burst"), ("direct", "per_burst"), ("direct", "train")):
                out = f"{d}/{name}-{path}-{model}"
                cmd = [kvtier, "run", *args, "--set", f"ctrl.burst_path={path}",
                       "--set", f"ctrl.burst_model={model}", "--out", out]
                if name in TIMELINE_CASES:  # every burst on its engine's track, every transfer on its direction's
                    cmd += ["--timeline", f"{out}/timeline.json"]
                p = subprocess.run(cmd, capture_output=True, text=True)
                if p.returncode != 0:
                    print(f"FAILED: {name} ({path}) exited {p.returncode}: {p.stderr.strip()}")
                    sys.exit(1)
                outs.append(comparable(out))
            stats = json.loads(pathlib.Path(f"{d}/{name}-direct-train/stats.json").read_text())
            moved = stats["promotions"] + stats["demotions"]
            same = outs[0] == outs[1] == outs[2]
            print(f"{name:18s} {'identical' if same else 'DIFFERENT'}  ({moved} blocks moved)")
            if not same:
                failed.append(name)
            if moved == 0:
                failed.append(name + " (moved nothing)")
    if failed:
        print("FAILED:", ", ".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    main()
