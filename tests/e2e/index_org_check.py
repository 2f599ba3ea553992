#!/usr/bin/env python3
"""ctrl.index_org = host (the index's table in host DRAM behind the link) on the default
geometry and on per-layer blocks: every SRAM miss is one index_read message of 64 B across the
link, every row written through one index_write message; the lookup is longer than with the
table in tier DRAM (cached) at the same cache size, and with the whole index in SRAM (full) no
table is read; the direct burst path and the TLM reference (ctrl.burst_path = tlm) give the same
outputs.

Usage: index_org_check.py KVTIER
"""
import sys
import tempfile

from run_checks import Checks, run_stats

GEOMETRIES = {
    "default": ["--workload", "synthetic:sessions=6", "--set", "hbm.kv_budget_gib=2"],
    "per-layer": ["--workload", "synthetic:sessions=4,output_tokens_mean=96",
                  "--set", "hbm.kv_budget_gib=2", "--set", "host.layers_per_block=1",
                  "--set", "ctrl.index_sets=262144", "--set", "host.decode_residency=pinned"],
}


def comparable(s):
    s = dict(s)
    s.pop("wall_time_s", None)
    s["provenance"] = {k: v for k, v in s["provenance"].items() if k not in ("overrides", "config_fnv1a64")}
    return s


def main():
    kvtier = sys.argv[1]
    check = Checks()

    with tempfile.TemporaryDirectory() as d:
        for name, args in GEOMETRIES.items():
            cache = ["--set", "ctrl.index_cache_entries=256"]
            host, host_rest = run_stats(kvtier, args + cache + ["--set", "ctrl.index_org=host"], f"{d}/{name}-h")
            cached, _ = run_stats(kvtier, args + cache + ["--set", "ctrl.index_org=cached"], f"{d}/{name}-c")
            full, _ = run_stats(kvtier, args, f"{d}/{name}-f")
            ix = host["index_organisation"]
            links = host["link_classes"]
            misses = ix["cache_misses"]
            check(misses > 0, f"{name}: the host table was never read")
            check(links.get("index_read", {}).get("messages") == misses,
                  f"{name}: {misses} misses but {links.get('index_read')} index_read messages")
            check(ix["host_read_bytes"] == 64 * misses and ix["dram_read_bytes"] == 0,
                  f"{name}: host_read_bytes {ix['host_read_bytes']} for {misses} misses")
            check(links.get("index_write", {}).get("payload_bytes") == ix["host_write_bytes"] > 0,
                  f"{name}: rows written {ix['host_write_bytes']} vs link {links.get('index_write')}")
            check(host["promotion_latency_lookup_s"] > cached["promotion_latency_lookup_s"]
                  > full["promotion_latency_lookup_s"],
                  f"{name}: lookup host {host['promotion_latency_lookup_s']} cached "
                  f"{cached['promotion_latency_lookup_s']} full {full['promotion_latency_lookup_s']}")
            check("index_read" not in (cached["link_classes"] or {}) and
                  "index_read" not in (full["link_classes"] or {}),
                  f"{name}: a table in tier DRAM or none crossed the link")
            ref, ref_rest = run_stats(kvtier, args + cache + ["--set", "ctrl.index_org=host",
                                                        "--set", "ctrl.burst_path=tlm"], f"{d}/{name}-t")
            check(comparable(ref) == comparable(host) and ref_rest == host_rest,
                  f"{name}: ctrl.burst_path=tlm differs from the direct path")
            print(f"{name:10s} misses {misses}, lookup host/cached/full "
                  f"{host['promotion_latency_lookup_s']:.3g}/{cached['promotion_latency_lookup_s']:.3g}/"
                  f"{full['promotion_latency_lookup_s']:.3g} s")
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
