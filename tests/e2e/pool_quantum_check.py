#!/usr/bin/env python3
"""A tier shared by two replicas (tier.shared) on the default synthetic workload, routed round
robin over a 4 GiB KV budget each, so that a returning turn often lands where its prefix is not:

  1. The same run under two quanta (sched.quantum_us = 1 and 100000) gives the same outputs: the
     replicas keep lockstep at every step, so they reach the shared device in simulated-time
     order whatever the quantum (tlm/pool/pool_device.h).
  2. Against private tiers (tier.shared = false, the same otherwise): the shared tier serves
     cross-replica hits and the cluster recomputes fewer prompt tokens.

Usage: pool_quantum_check.py KVTIER WORKDIR (exit 1 on any failure)."""
import json
import pathlib
import shutil
import subprocess
import sys

kvtier, work = sys.argv[1], pathlib.Path(sys.argv[2])
shutil.rmtree(work, ignore_errors=True)
work.mkdir(parents=True)
base = ["--set", "cluster.replicas=2", "--set", "cluster.router=round_robin",
        "--set", "hbm.kv_budget_gib=4", "--quiet"]
failures = []


def run(name, *sets):
    out = work / name
    args = [kvtier, "run", *base, "--out", str(out)]
    for s in sets:
        args += ["--set", s]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        print(p.stdout, p.stderr)
        sys.exit(f"{name}: kvtier exited {p.returncode}")
    return out


def results(out):
    """stats.json of the cluster and of each replica, without the wall clock and the records of
    the inputs (the overrides differ by the quantum)."""
    files = [out / "stats.json"] + sorted(out.glob("replica-*/stats.json"))
    got = []
    for f in files:
        s = json.loads(f.read_text())
        s.pop("wall_time_s", None)
        s.pop("provenance", None)
        s.get("about", {}).pop("wall_time_s", None)
        got.append(s)
    reqs = [(f.parent / "requests.jsonl").read_text() for f in files]
    return got, reqs


fine = run("quantum-1us", "tier.shared=true", "sched.quantum_us=1")
coarse = run("quantum-100ms", "tier.shared=true", "sched.quantum_us=100000")
private = run("private", "tier.shared=false", "sched.quantum_us=1")

a, b = results(fine), results(coarse)
if a != b:
    failures.append("the shared-tier run differs between sched.quantum_us = 1 and 100000")

shared_stats = a[0][0]
private_stats = results(private)[0][0]
pool = shared_stats["cluster"]["pool"]
if pool["found_foreign"] <= 0:
    failures.append(f"no cross-replica hit in the shared tier: {pool}")
if private_stats["cluster"]["pool"] is not None:
    failures.append("private tiers report a pool")
if not shared_stats["prefill_tokens"] < private_stats["prefill_tokens"]:
    failures.append(f"the shared tier recomputes {shared_stats['prefill_tokens']} prompt tokens, "
                    f"private tiers {private_stats['prefill_tokens']}")
if pool["held_again"] <= 0:
    failures.append("no eviction held another replica's copy (write-once across replicas)")
# Each replica's own count of cross-replica hits adds up to the pool's.
foreign = sum(s["blocks"]["pool_foreign_hits"] for s in a[0][1:])
if foreign != pool["found_foreign"]:
    failures.append(f"replicas' pool_foreign_hits sum to {foreign}, the pool says {pool['found_foreign']}")

print(f"shared: prefill {shared_stats['prefill_tokens']} tokens, cross-replica hits "
      f"{pool['found_foreign']}, held again {pool['held_again']}; private: prefill "
      f"{private_stats['prefill_tokens']} tokens")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
