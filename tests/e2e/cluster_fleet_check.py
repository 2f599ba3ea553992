#!/usr/bin/env python3
"""A cluster's stats.json carries the block-movement figures a replica's has, over the fleet, so
that `kvtier experiment` runs on a cluster platform: counts, times and CPU summed over the
replicas (each replica-K/stats.json), promotion latency percentiles pooled over every replica's
promotions (so between the replicas' own smallest and largest), and HIDING's counts summed;
the figures C2 to C4 read (index organisation, host CPU by completion mode and queue, placement
ratios and their offline bounds) as ratios of the replicas' sums.
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


def run(kvtier, out, decision, extra=()):
    p = subprocess.run([kvtier, "run", "--quiet", "--workload", "synthetic:sessions=12",
                        "--set", "cluster.replicas=3", "--set", "sched.kv_load=layerwise",
                        "--set", "hbm.kv_budget_gib=3", "--set", f"host.decision={decision}",
                        *extra, "--out", str(out)], capture_output=True, text=True)
    expect(p.returncode == 0, f"{decision}: exit {p.returncode}: {p.stderr}")
    fleet = json.loads((out / "stats.json").read_text())
    reps = [json.loads((out / f"replica-{k}" / "stats.json").read_text()) for k in range(3)]
    return fleet, reps


def check_claim_figures(label, f, reps):
    """The figures C2, C3 and C4 read, over the fleet, against the replicas' own."""
    for k in ["cache_hits", "cache_misses", "dram_read_bytes", "dram_write_bytes",
              "host_read_bytes", "host_write_bytes"]:
        expect(f["index_organisation"][k] == sum(r["index_organisation"][k] for r in reps),
               f"{label}: index_organisation.{k}")
    expect(close(f["index_organisation"]["miss_time_s"],
                 sum(r["index_organisation"]["miss_time_s"] for r in reps)),
           f"{label}: index_organisation.miss_time_s")
    expect(f["index_organisation"]["org"] == reps[0]["index_organisation"]["org"],
           f"{label}: index_organisation.org")
    expect(f["blocks"]["dropped_index_full"] ==
           sum(r["blocks"]["dropped_index_full"] for r in reps), f"{label}: dropped_index_full")
    expect(f["index"]["doorbells"] == sum(r["index"]["doorbells"] for r in reps),
           f"{label}: index.doorbells")
    expect(f["steps"] == sum(r["steps"] for r in reps), f"{label}: steps")
    c = f["host_cpu"]
    for k in ["interrupts", "completion_polls", "command_queues"]:
        expect(c[k] == sum(r["host_cpu"][k] for r in reps), f"{label}: host_cpu.{k}")
    for k in ["interrupt_s", "poll_s"]:
        expect(close(c[k], sum(r["host_cpu"][k] for r in reps)), f"{label}: host_cpu.{k}")
    utils = [r["host_cpu"]["core_utilisation"] for r in reps]
    expect(close(c["core_utilisation"], max(utils)),
           f"{label}: core_utilisation {c['core_utilisation']} is not the busiest host's {utils}")
    expect(min(utils) - 1e-12 <= c["core_utilisation_mean"] <= max(utils) + 1e-12,
           f"{label}: core_utilisation_mean outside the replicas' {utils}")
    # The runtimes' own CPU work: summed; the busiest host's shares; a runtime that did work.
    rt = f["runtime_cpu"]
    expect(rt["mode"] == reps[0]["runtime_cpu"]["mode"], f"{label}: runtime_cpu.mode")
    expect(rt["bound_steps"] == sum(r["runtime_cpu"]["bound_steps"] for r in reps),
           f"{label}: runtime_cpu.bound_steps")
    for k in ["total_s", "wait_s"]:
        expect(close(rt[k], sum(r["runtime_cpu"][k] for r in reps)), f"{label}: runtime_cpu.{k}")
    expect(rt["total_s"] > 0, f"{label}: the runtimes did no CPU work")
    for k in ["core_utilisation", "with_kv_core_utilisation"]:
        shares = [r["runtime_cpu"][k] for r in reps]
        expect(close(rt[k], max(shares)), f"{label}: runtime_cpu.{k} {rt[k]} is not the busiest's {shares}")
    shares = [r["runtime_cpu"]["core_utilisation"] for r in reps]
    expect(min(shares) - 1e-12 <= rt["core_utilisation_mean"] <= max(shares) + 1e-12,
           f"{label}: runtime_cpu.core_utilisation_mean outside the replicas' {shares}")
    # Placement: ratios of the replicas' sums, recomputed from their own counts.
    b = [r["blocks"] for r in reps]
    unique = sum(x["unique"] for x in b)
    expect(close(f["hit_rate"], sum(x["hbm_hits"] for x in b) / sum(x["references"] for x in b)),
           f"{label}: hit_rate")
    moved = [r["promotions"] + r["demotions"] for r in reps]
    expect(close(f["a_read"], f["promotions"] / unique), f"{label}: a_read")
    expect(close(f["a_traffic"], sum(moved) / unique), f"{label}: a_traffic")
    expect(close(f["reuse_per_moved_byte"],
                 sum(r["reuse_per_moved_byte"] * m for r, m in zip(reps, moved)) / sum(moved)),
           f"{label}: reuse_per_moved_byte is not the replicas' weighted by the bytes they moved")
    expect(close(f["a_read_opt"], sum(r["a_read_opt"] * x["unique"] for r, x in zip(reps, b))
                 / unique), f"{label}: a_read_opt")
    expect(close(f["a_traffic_opt"], sum(r["a_traffic_opt"] * x["unique"] for r, x in zip(reps, b))
                 / unique), f"{label}: a_traffic_opt")
    expect(f["a_traffic_opt"] <= f["a_traffic"] + 1e-12, f"{label}: the bound above the run")
    expect(f["hit_rate_opt"] >= f["hit_rate"] - 1e-12, f"{label}: the bound's hit rate below the run's")


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
            check_claim_figures(decision, f, reps)
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
        # The index in host DRAM behind a small SRAM cache, a queue per tenant and completions
        # by polling: the figures C2 and C3 read are then not zero.
        f, reps = run(kvtier, pathlib.Path(d) / "organised", "host",
                      ["--set", "ctrl.index_org=host", "--set", "ctrl.index_cache_entries=1024",
                       "--set", "host.completion=poll", "--set", "host.submission_queues=per_tenant",
                       "--set", "workload.tenants=4"])
        check_claim_figures("organised", f, reps)
        expect(f["index_organisation"]["cache_misses"] > 0, "organised: no index cache miss")
        expect(f["index_organisation"]["host_read_bytes"] > 0, "organised: no table read")
        expect(f["host_cpu"]["completion_polls"] > 0, "organised: no poll")
        expect(f["host_cpu"]["command_queues"] > 3, "organised: one queue per replica only")
        print(f"cluster_fleet_check: OK ({dev['promotions']} promotions on 3 replicas, "
              f"{saved} descriptors saved by the devices' chains; "
              f"{f['index_organisation']['cache_misses']} index misses with the table in host DRAM)")


if __name__ == "__main__":
    main()
