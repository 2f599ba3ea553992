#!/usr/bin/env python3
"""Compares two stats.json files of one workload: TLM data plane vs RTL engine.

Functional metrics must be equal; timing metrics must agree within a relative tolerance
(docs/cosim.md states it). Prints every compared metric; exit status 1 on a difference.
"""
import json
import sys

FUNCTIONAL = ["requests_completed", "tokens_generated", "promotions", "demotions", "hit_rate",
              "a_read", "a_traffic", "tier_bytes_per_token", "max_demotions_per_block",
              "requests_rejected", "tier_hit_rate", "miss_rate"]
TIMING = ["sim_time_s", "ttft_p50_s", "ttft_p99_s", "itl_p50_s", "itl_p99_s", "throughput_tokens_per_s",
          "hbm_byte_time_gib_s_per_request", "exposed_stall_per_token_s"]
RELATIVE_TOLERANCE = 0.01  # 1 %
ABSOLUTE_FLOOR = {"exposed_stall_per_token_s": 1e-4}  # seconds per token


def main(a_path, b_path):
    a = json.load(open(a_path))
    b = json.load(open(b_path))
    ok = True
    for key in FUNCTIONAL:
        same = a.get(key) == b.get(key)
        ok &= same
        print(f"{'ok  ' if same else 'DIFF'} {key:36s} tlm {a.get(key)!r:>24} rtl {b.get(key)!r:>24}")
    for key in TIMING:
        x, y = a.get(key), b.get(key)
        if x is None or y is None:
            good = x == y
            rel = 0.0
        else:
            diff = abs(x - y)
            rel = diff / abs(x) if x else (0.0 if diff == 0 else float("inf"))
            good = rel <= RELATIVE_TOLERANCE or diff <= ABSOLUTE_FLOOR.get(key, 0.0)
        ok &= good
        print(f"{'ok  ' if good else 'DIFF'} {key:36s} tlm {x!r:>24} rtl {y!r:>24} rel {rel:.2e}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
