#!/usr/bin/env python3
"""`kvtier experiment` on a reduced excerpt of the bundled Mooncake trace.

Usage: experiment_checks.py KVTIER TRACE CHECK
"""
import json
import pathlib
import subprocess
import sys
import tempfile

LIMIT = 200  # requests: each experiment's simulations together stay well under a minute


def run(kvtier, *args):
    return subprocess.run([kvtier, *args], capture_output=True, text=True)


def expect(cond, message):
    if not cond:
        print("FAILED:", message)
        sys.exit(1)


def experiment(kvtier, trace, name, *extra):
    with tempfile.TemporaryDirectory() as d:
        out = pathlib.Path(d) / f"{name}.json"
        p = run(kvtier, "experiment", name, "--workload", f"mooncake:{trace},limit={LIMIT}", "--json", str(out),
                "--jobs", "2", *extra)
        expect(p.returncode == 0, f"{name} exited {p.returncode}: {p.stderr}")
        for needle in ["measurement that would support it", "measurement that would refute it", "verdict:"]:
            expect(needle in p.stdout, f"{name}: output lacks '{needle}':\n{p.stdout}")
        table = json.loads(out.read_text())
        expect(table["experiment"] == name and table["rows"], f"{name}: JSON has no rows")
        return p.stdout, table


def check_flip(name, t, axis_word, values):
    """The JSON's flip point against its own points, recomputed here: the first value in
    ascending order whose verdict differs from the smallest measured value's; null without one."""
    f = t["flip"]
    expect(axis_word in f["axis"], f"{name}: flip axis '{f['axis']}' does not name {axis_word}")
    pts = f["points"]
    expect([p["value"] for p in pts] == sorted(values), f"{name}: flip points {pts} are not {values}")
    expect(f["range"] == [min(values), max(values)], f"{name}: flip range {f['range']}")
    measured = [p for p in pts if p["supported"] is not None]
    flip = next((p["value"] for p in measured if p["supported"] != measured[0]["supported"]), None) \
        if measured else None
    expect(f["value"] == flip, f"{name}: flip value {f['value']}, recomputed {flip}")
    expect((f["supported_below_value"] is None) == (flip is None), f"{name}: supported_below_value")


def check_c1(kvtier, trace):
    out, t = experiment(kvtier, trace, "c1", "--loads", "1,2")
    expect(len(t["rows"]) == 4, "c1: two loads x two decision modes")
    dev = [r for r in t["rows"] if r["decision"] == "device"]
    host = [r for r in t["rows"] if r["decision"] == "host"]
    expect(len(dev) == 2 and len(host) == 2, "c1: a device and a host row per load")
    expect(all(r["dma"] == "device" for r in t["rows"]), "c1: both arms move with the device's DMA")
    expect(all(r["promotions"] > 0 for r in t["rows"]), "c1: every run promotes")
    expect(all(h["promotion_latency_p50_s"] > 0 for h in host), "c1: host path has latency")
    for d, h in zip(dev, host):
        # Only who issues differs: the same blocks, and the device's chains save exactly the
        # descriptors of what it issued, less the CHAINs that handed the chains over.
        expect(d["promotions"] == h["promotions"] and d["demotions"] == h["demotions"],
               "c1: same promotions and demotions in both modes")
        expect(h["device_issued"] == 0 and h["chain_descriptors"] == 0, "c1: host arm issues all")
        expect(d["device_issued"] > 0 and d["chain_descriptors"] > 0, "c1: device arm issues")
        expect(h["descriptors"] - d["descriptors"] == d["device_issued"] - d["chain_descriptors"],
               "c1: descriptors saved")
        expect(d["promotion_latency_p50_s"] < h["promotion_latency_p50_s"],
               "c1: device-issued promotions are usable sooner")
        expect("host.layers_per_block=1" in d["command"] and "host.decision=device" in d["command"],
               "c1: streamed per-layer KV, and the arm named in the command")
    check_flip("c1", t, "load", [1, 2])
    expect("flip: " in out, "c1: the flip line is printed")
    # The verdict both ways. At the default 250 ns of host CPU per descriptor the round trips are
    # hidden: refuted. At 20 us a descriptor (a host 80 times slower), the host arm builds a
    # resuming 50-position prefix's 4,000 per-layer descriptors in 80 ms, longer than the step
    # they are due in, so its layer groups arrive late and stall; the device's chain needs one
    # descriptor: supported.
    expect(t["supported"] is False, "c1: refuted at the default descriptor cost")
    slow_out, slow = experiment(kvtier, trace, "c1", "--set", "host.descriptor_cpu_ns=20000")
    expect(slow["supported"] is True, f"c1: supported with a slow host:\n{slow_out}")
    d, h = slow["rows"]
    expect(h["exposed_stall_per_token_s"] > 1.05 * d["exposed_stall_per_token_s"],
           "c1: the slow host's stall is materially above the device's")


def check_c2(kvtier, trace):
    out, t = experiment(kvtier, trace, "c2", "--index-sizes", "256,65536")
    cached = [r for r in t["rows"] if r["org"] == "cached"]
    host = [r for r in t["rows"] if r["org"] == "host"]
    full = [r for r in t["rows"] if r["org"] == "full"]
    expect(len(cached) == 2 and len(host) == 2 and len(full) == 2,
           "c2: the three organisations at both sizes")
    expect(all(r["index_dram_read_bytes"] == 0 == r["index_host_read_bytes"] for r in full),
           "c2: a full index never reads a table")
    expect(cached[0]["index_dram_read_bytes"] > 0 and cached[0]["index_host_read_bytes"] == 0,
           "c2: a small cache misses, into tier DRAM")
    expect(host[0]["index_host_read_bytes"] > 0 and host[0]["index_dram_read_bytes"] == 0,
           "c2: a small cache of the host table misses, across the link")
    expect(cached[0]["lookup_share"] > full[1]["lookup_share"], "c2: misses lengthen the lookup")
    # A miss across the link takes longer than one into the device's own DRAM.
    expect(host[0]["promotion_latency_lookup_s"] > cached[0]["promotion_latency_lookup_s"],
           f"c2: a host-DRAM miss is slower ({host[0]['promotion_latency_lookup_s']} vs "
           f"{cached[0]['promotion_latency_lookup_s']})")
    # 256 entries of a full index keep too few tier copies to promote any at 200 requests: its
    # share is unmeasured (null), not 0.
    expect(full[0]["promotions"] == 0 and full[0]["lookup_share"] is None,
           f"c2: a run without promotions has no lookup share: {full[0]}")
    check_flip("c2", t, "entries", [256, 65536])
    # The claim at one size needs both tables' shares material: the flip both ways, from this
    # run's own shares. A --material between the smaller of the two at 256 entries and the larger
    # of the two at 65536 makes it hold at 256 only (flip at 65536); one above both fails
    # everywhere (no flip).
    small = min(cached[0]["lookup_share"], host[0]["lookup_share"])
    large = min(cached[1]["lookup_share"], host[1]["lookup_share"])
    expect(small > large, f"c2: a smaller cache misses more ({small} vs {large})")
    for material, value, below in [((small + large) / 2, 65536, True), (small * 2, None, None)]:
        _, m = experiment(kvtier, trace, "c2", "--index-sizes", "256,65536", "--material", repr(material))
        expect(m["flip"]["value"] == value and m["flip"]["supported_below_value"] == below,
               f"c2 --material {material}: flip {m['flip']}, expected value {value}")


def check_c3(kvtier, trace):
    out, t = experiment(kvtier, trace, "c3", "--tenants", "1,8")
    rows = t["rows"]
    expect(len(rows) == 8, "c3: two tenant counts x two completion modes x two DMA modes")
    for r in rows:
        expect(r["core_utilisation"] > 0, "c3: CPU time is accounted")
        expect(r["command_queues"] == r["tenants"], f"c3: a queue per tenant that moved blocks: {r}")
        if r["dma"] == "host":
            expect(r["copy_issue_s"] > 0 and r["descriptor_s"] == 0, "c3: host mode pays per-copy calls only")
        if r["completion"] == "interrupt":
            expect(r["interrupts"] > 0 and r["completion_polls"] == 0 and r["poll_s"] == 0,
                   "c3: interrupts, no polls")
            if r["dma"] == "device":
                # One interrupt per queue's run of commands, each kicked by its own doorbell.
                expect(r["interrupts"] == r["doorbells"], f"c3: an interrupt per doorbell: {r}")
        else:
            expect(r["interrupts"] == 0 and r["interrupt_s"] == 0, "c3: polls, no interrupts")
            # Every open queue once a step: exactly the steps with one tenant, more with eight
            # (queues open as their tenants first move a block), never more than eight a step.
            if r["tenants"] == 1:
                expect(r["completion_polls"] == r["steps"], f"c3: one poll a step: {r}")
            else:
                expect(r["steps"] < r["completion_polls"] <= 8 * r["steps"], f"c3: polls per step: {r}")
            expect(abs(r["poll_s"] - r["completion_polls"] * 131.5e-9) < 1e-12, "c3: 131.5 ns a poll")
        # The runtime's own CPU work: every step's, on top of KV movement's; the host's share is
        # the two together, and KV movement's part of it is its own share over that.
        expect(r["runtime_core_utilisation"] > 0, f"c3: the runtime's CPU work is counted: {r}")
        expect(abs(r["with_kv_core_utilisation"] -
                   (r["runtime_core_utilisation"] + r["core_utilisation"])) < 1e-9,
               f"c3: the host's share is the runtime's and KV movement's: {r}")
        expect(abs(r["kv_share_of_host"] - r["core_utilisation"] / r["with_kv_core_utilisation"])
               < 1e-9, f"c3: KV movement's part of the host's CPU time: {r}")
    # Rows of different tenant counts differ where the arithmetic says they do: polling grows
    # with the queues.
    def poll_s(tenants, dma):
        return next(r["poll_s"] for r in rows
                    if r["tenants"] == tenants and r["dma"] == dma and r["completion"] == "poll")
    for dma in ("device", "host"):
        expect(poll_s(8, dma) > 2 * poll_s(1, dma), f"c3: {dma} polling grows with tenants")
    check_flip("c3", t, "tenants", [1, 8])


def check_c3_supported(kvtier, trace):
    """C3 the other way, worked by hand. The host arm's CPU is almost all copy calls (one per
    block moved, host.copy_issue_cpu_ns each; the device arm makes none). The excerpt's first 200
    requests move 157,774 blocks over about 1,058 simulated seconds: at the default 3 us a call
    that is about 0.0005 of a core, refuted. At 1 ms a call (a driver 330 times slower) it is 157.8 s,
    0.149 of a core, over the 0.1 threshold in both completion modes, while the device arm keeps
    about 0.0001: supported."""
    out, t = experiment(kvtier, trace, "c3", "--tenants", "1,8", "--set", "host.copy_issue_cpu_ns=1000000")
    expect(t["supported"] and "verdict: supported" in out, f"c3 with 1 ms copy calls: {t['verdict']}")
    for r in t["rows"]:
        if r["dma"] == "host":
            copies = r["copy_issue_s"] / 1e-3
            expect(abs(copies - round(copies)) < 1e-6 and copies > 150000,
                   f"c3: copy_issue_s is whole 1 ms copy calls: {r}")
            expect(r["core_utilisation"] >= 0.1, f"c3: the host arm above a tenth of a core: {r}")
        else:
            expect(r["copy_issue_s"] == 0 and r["core_utilisation"] < 0.001, f"c3: device arm: {r}")


def c4_better(a, b, rel):
    """The measures on which placement a is materially better than b (the experiment's rule)."""
    on = []
    if (a["hit"] - b["hit"]) * 100 > 1 + 1e-9:
        on.append("hit rate")
    if a["a_read"] < b["a_read"] * (1 - rel):
        on.append("A_read")
    if a["a_traffic"] < b["a_traffic"] * (1 - rel):
        on.append("A_traffic")
    if a["reuse"] > b["reuse"] * (1 + rel):
        on.append("reuse per moved byte")
    return on


def check_c4(kvtier, trace):
    out, t = experiment(kvtier, trace, "c4", "--budgets", "8,32")
    expect(len(t["rows"]) == 4, "c4: two budgets x two policies")
    expect("+34.15" in out and "+24.85" in out and "Simulated, provisional" in out,
           "c4: the spec's figures are quoted in the text with their class")
    expect("spec_pts" not in out.split("measurement that would support it")[0],
           "c4: the spec's figure is not a column")
    holds = {8: False, 32: False}
    for r in t["rows"]:
        arms = {}
        for arm, suffix in (("none", ""), ("device", "_device"), ("host", "_persistent")):
            arms[arm] = {"hit": r["hit_rate" + suffix], "a_read": r["a_read" + suffix],
                         "a_traffic": r["a_traffic" + suffix], "reuse": r["reuse_per_moved_byte" + suffix]}
            expect(0 <= arms[arm]["hit"] <= 1, "c4: hit rates are fractions")
            expect(arms[arm]["a_read"] <= arms[arm]["a_traffic"], "c4: A_read <= A_traffic")
        expect(len(r["commands"]) == 3 and "host.persistent_policy=device" in r["commands"][1],
               "c4: three runs per row, the second with the policy state in the device's entry")
        # The verdict's inputs, recomputed from the row's own figures.
        gains = c4_better(arms["device"], arms["none"], 0.05)
        over_host = c4_better(arms["device"], arms["host"], 0.05)
        expect(r["device_better_than_none"] == gains, f"c4: device vs none {r['device_better_than_none']} != {gains}")
        expect(r["device_better_than_host"] == over_host, "c4: device vs host recomputed")
        holds[r["budget_gib"]] |= bool(gains) and bool(over_host)
    expect(t["supported"] == any(holds.values()), "c4: the verdict reads the rows")
    check_flip("c4", t, "budget", [8, 32])


def check_prefetch_deadline(kvtier, trace):
    """Prefetch on the pinned preset with deadline order across doorbells: the device holds the
    prefetches (the host does not wait for them), later admissions' earlier deadlines overtake
    them, every held one is moved by the end, and a queue head that waits behind prefetch pins
    with nothing running is not left waiting forever (it was: 'nothing runs and nothing can be
    admitted')."""
    stats = {}
    for order in ("fifo", "deadline"):
        with tempfile.TemporaryDirectory() as d:
            p = run(kvtier, "run", "--platform", "h200-cxl2-x16-pinned", "--workload", f"mooncake:{trace}",
                    "--set", "host.prefetch_horizon_steps=8", "--set", f"ctrl.transfer_order={order}", "--out", d)
            expect(p.returncode == 0, f"{order}: exited {p.returncode}: {p.stderr}")
            stats[order] = json.loads((pathlib.Path(d) / "stats.json").read_text())
    n = sum(1 for line in pathlib.Path(trace).read_text().splitlines() if line.strip())
    for order, j in stats.items():
        expect(j["requests_completed"] + j["requests_rejected"] == n, f"{order}: not every request settled")
        # Every prefetched block was promoted, held or not (tier hits are promoted on admission).
        expect(j["promotions"] >= j["prefetch"]["prefetched"], f"{order}: prefetches left unmoved")
    f, e = stats["fifo"]["prefetch"], stats["deadline"]["prefetch"]
    expect(f["deferred_transfers"] == 0 and f["overtaking_transfers"] == 0, "fifo holds nothing")
    expect(e["deferred_transfers"] == e["prefetched"], "deadline order holds every prefetch the host does not wait for")
    expect(0 < e["overtaking_transfers"] < stats["deadline"]["promotions"], "some transfers overtake held ones")
    expect(e["peak_held_transfers"] > 0, "the held queue is reported")


def check_cluster(kvtier, trace):
    """C2, C3 and C4 on a cluster platform (two replicas of the default platform, sessions kept
    on their replica): each used to stop on a metric the cluster's stats.json did not carry.
    The fleet's figures are the replicas' sums, so a count that is one per replica (a queue per
    tenant) is the replicas' count times the tenants."""
    platform = pathlib.Path(trace).resolve().parents[3] / "platforms" / "cluster-16x-h200-cxl2.ini"
    fleet = ["--platform", str(platform), "--set", "cluster.replicas=2",
             "--set", "cluster.router=session_affinity"]
    _, c2 = experiment(kvtier, trace, "c2", *fleet, "--index-sizes", "1024,65536")
    cached = [r for r in c2["rows"] if r["org"] == "cached"]
    expect(len(c2["rows"]) == 6 and cached and all(r["promotions"] > 0 for r in cached),
           f"c2 on a cluster: {c2['rows']}")
    expect(all(r["sram_hit_rate"] < 1 for r in cached), "c2 on a cluster: the caches missed")
    _, c3 = experiment(kvtier, trace, "c3", *fleet, "--tenants", "1,4")
    for r in c3["rows"]:
        expect(r["core_utilisation"] > 0, f"c3 on a cluster: {r}")
        expect(r["command_queues"] <= 2 * r["tenants"], f"c3 on a cluster: queues {r}")
        if r["tenants"] == 1:
            expect(r["command_queues"] == 2, f"c3 on a cluster: one queue per replica: {r}")
    _, c4 = experiment(kvtier, trace, "c4", *fleet, "--budgets", "8")
    for r in c4["rows"]:
        expect(0 <= r["hit_rate"] <= 1 and r["a_read"] <= r["a_traffic"], f"c4 on a cluster: {r}")
        expect(r["a_traffic_opt"] is not None and r["a_traffic_opt"] <= r["a_traffic"],
               f"c4 on a cluster: the bound {r}")


def check_errors(kvtier, trace):
    cases = [
        (["experiment"], "name an experiment", 2),
        (["experiment", "c9"], "unknown experiment 'c9'", 2),
        (["experiment", "c1", "--loads", "0"], "--loads: '0' is not a positive number", 2),  # a usage error, as everywhere
        # A tenant count is whole: 2.5 used to pass as a positive number and print as 2.
        (["experiment", "c3", "--tenants", "2.5"], "--tenants: '2.5' is not a whole number of tenants (1 to 65535)", 2),
        (["experiment", "c3", "--workload", "synthetic:sessions=5"], "synthetic workload", 1),
        (["experiment", "c2", "--index-sizes", "1000"], "not a power of two", 1),
        (["experiment", "c1", "--workload", f"mooncake:{trace},limit=5", "--set", "host.bogus=1"], "unknown key 'host.bogus'", 1),
        (["experiment", "c1", "--workload", "mooncake:/nonexistent.jsonl"], "failed", 1),
        # A metric a run could not measure is an error naming it and the run, never a 0.
        (["experiment", "c1", "--workload", f"mooncake:{trace},limit=5"],
         "has no value (null) for 'promotion_latency_", 1),
        (["experiment", "c2", "--workload", f"mooncake:{trace},limit=5", "--index-sizes", "256"],
         "no run with the cached index promoted a block", 1),
        (["run", "--set", "sched.tenant_qos=0:abc:1"], "sched.tenant_qos", 1),
        (["run", "--set", "host.dma=host", "--set", "host.tier_format=fp8"], "host.dma = host", 1),
        (["run", "--set", "ctrl.transfer_order=random"], "ctrl.transfer_order", 1),
    ]
    for args, needle, code in cases:
        p = run(kvtier, *args)
        expect(p.returncode == code, f"{args} exited {p.returncode}, expected {code}: {p.stderr}")
        expect(needle in p.stderr, f"{args}: stderr lacks '{needle}': {p.stderr}")


def check_deterministic(kvtier, trace):
    a = experiment(kvtier, trace, "c1")[1]
    b = experiment(kvtier, trace, "c1")[1]
    expect(a == b, "c1 twice on the same inputs gave different tables")


if __name__ == "__main__":
    globals()["check_" + sys.argv[3]](sys.argv[1], sys.argv[2])
    print("ok")
