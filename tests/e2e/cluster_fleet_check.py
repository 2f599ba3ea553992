#!/usr/bin/env python3
"""A cluster's stats.json carries the block-movement figures a replica's has, over the fleet, so
that `kvtier experiment` runs on a cluster platform: counts, times and CPU summed over the
replicas (each replica-K/stats.json), promotion latency percentiles pooled over every replica's
promotions (so between the replicas' own smallest and largest), and HIDING's counts summed.
Three replicas of the default platform, once per host.decision; the device arm must save
exactly the descriptors its chains replaced, fleet-wide.

Usage: cluster_fleet_check.py KVTIER
"""
import json
import math
import pathlib
import subprocess
import sys
import tempfile


def expect(cond, message):
    if not cond:
        print("FAILED:", message)
        sys.exit(1)


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def run(kvtier, out, decision):
    p = subprocess.run([kvtier, "run", "--quiet", "--workload", "synthetic:sessions=12",
                        "--set", "cluster.replicas=3", "--set", "sched.kv_load=layerwise",
                        "--set", "hbm.kv_budget_gib=3", "--set", f"host.decision={decision}",
                        "--out", str(out)], capture_output=True, text=True)
    expect(p.returncode == 0, f"{decision}: exit {p.returncode}: {p.stderr}")
    fleet = json.loads((out / "stats.json").read_text())
    reps = [json.loads((out / f"replica-{k}" / "stats.json").read_text()) for k in range(3)]
    return fleet, reps


def main():
    kvtier = sys.argv[1]
    with tempfile.TemporaryDirectory() as d:
        runs = {}
        for decision in ["host", "device"]:
            f, reps = run(kvtier, pathlib.Path(d) / decision, decision)
            runs[decision] = f
            for k in ["promotions", "demotions"]:
                expect(f[k] == sum(r[k] for r in reps), f"{decision}: {k} is not the replicas' sum")
            expect(f["promotions"] > 0, f"{decision}: nothing promoted")
            expect(f["index"]["descriptors"] == sum(r["index"]["descriptors"] for r in reps),
                   f"{decision}: descriptors")
            for k in ["total_s", "descriptor_s", "completion_s", "doorbell_s"]:
                expect(close(f["host_cpu"][k], sum(r["host_cpu"][k] for r in reps)),
                       f"{decision}: host_cpu.{k}")
            for k in ["chain_descriptors", "device_issued", "device_issued_promotions",
                      "step_clocks"]:
                expect(f["host_cpu"][k] == sum(r["host_cpu"][k] for r in reps),
                       f"{decision}: host_cpu.{k}")
            expect(f["host_cpu"]["decision"] == decision, f"{decision}: host_cpu.decision")
            expect(close(f["exposed_stall_total_s"], sum(r["exposed_stall_total_s"] for r in reps)),
                   f"{decision}: exposed_stall_total_s")
            # The per-token stall and the queue mean are ratios of sums: weighted by tokens and
            # by promotions, so between the replicas' own values.
            served = [r for r in reps if r["promotion_latency_p99_s"] is not None]
            for k in ["promotion_latency_p50_s", "promotion_latency_p99_s",
                      "promotion_latency_queue_s", "exposed_stall_per_token_s"]:
                vals = [r[k] for r in served]
                expect(min(vals) - 1e-12 <= f[k] <= max(vals) + 1e-12,
                       f"{decision}: {k} {f[k]} outside the replicas' {vals}")
            h = f["constraints"]["hiding"]
            for k in ["transfers", "missed", "chunks", "chunks_late"]:
                expect(h[k] == sum(r["constraints"]["hiding"][k] for r in reps),
                       f"{decision}: constraints.hiding.{k}")
        host, dev = runs["host"], runs["device"]
        saved = dev["host_cpu"]["device_issued"] - dev["host_cpu"]["chain_descriptors"]
        expect(dev["host_cpu"]["device_issued"] > 0, "device arm issued nothing")
        expect(host["promotions"] == dev["promotions"], "the arms moved different blocks")
        expect(host["index"]["descriptors"] - dev["index"]["descriptors"] == saved,
               "fleet-wide, the device arm did not save exactly its chains' descriptors")
        print(f"cluster_fleet_check: OK ({dev['promotions']} promotions on 3 replicas, "
              f"{saved} descriptors saved by the devices' chains)")


if __name__ == "__main__":
    main()
