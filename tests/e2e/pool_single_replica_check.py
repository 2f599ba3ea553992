#!/usr/bin/env python3
"""One replica on a shared tier (tier.shared = true, cluster.replicas = 1): stats.json has the
group `pool` (the books, the device behind the switch, the demand on it) and the summary its two
lines, as a cluster's stats.json has `cluster.pool`; a private tier has neither. The pool's books
balance against the replica's own: every copy stored is one of its demotions or one the index
refused, and what is left at the end is what was stored less what was freed, reclaimed or
refused. With one replica nothing can come from another.

Usage: pool_single_replica_check.py KVTIER
"""
import json
import pathlib
import subprocess
import sys
import tempfile

ARGS = ["--workload", "synthetic:sessions=6", "--set", "hbm.kv_budget_gib=4"]


def run(kvtier, extra, out):
    p = subprocess.run([kvtier, "run", *ARGS, *extra, "--out", out], capture_output=True,
                       text=True)
    if p.returncode != 0:
        sys.exit(f"FAILED: kvtier run {' '.join(extra)} exited {p.returncode}: {p.stderr.strip()}")
    return p.stdout, json.loads(pathlib.Path(out, "stats.json").read_text())


def main():
    kvtier = sys.argv[1]
    failed = []
    with tempfile.TemporaryDirectory() as d:
        summary, j = run(kvtier, ["--set", "tier.shared=true"], f"{d}/shared")
        pool = j.get("pool")
        if not isinstance(pool, dict):
            sys.exit(f"FAILED: stats.json has no group pool with tier.shared: {pool!r}")
        b = j["blocks"]
        checks = {
            "copies were stored": pool["stored"] > 0,
            "stored = demotions + refused by the index":
                pool["stored"] == j["demotions"] + b["dropped_index_full"],
            "used at end = stored - freed - reclaimed - refused":
                pool["used_at_end"] == pool["stored"] - pool["freed"] - pool["reclaimed"]
                - b["dropped_index_full"],
            "used at end <= peak <= slots":
                pool["used_at_end"] <= pool["peak_used"] <= pool["slots"],
            "nothing from another replica":
                pool["found_foreign"] == 0 and pool["held_again"] == 0
                and b["pool_foreign_hits"] == 0,
            "the device moved the replica's bytes":
                pool["dram_read_bytes"] > 0 and pool["dram_write_bytes"] > 0,
            "demand windows counted": pool["demand"]["windows"] > 0,
            "every pool key described": all(f"pool.{k}" in j["about"] for k in pool),
            "the summary says it": "shared tier: " in summary and "shared device: " in summary,
        }
        failed += [f"shared: {what}" for what, ok in checks.items() if not ok]
        summary, j = run(kvtier, [], f"{d}/private")
        if "pool" in j or "shared tier: " in summary:
            failed.append("private: a pool is reported without tier.shared")
    if failed:
        print("\n".join(failed))
        sys.exit(1)
    print("ok")


if __name__ == "__main__":
    main()
