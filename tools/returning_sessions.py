#!/usr/bin/env python3
"""Writes a native kvtier workload of returning sessions (docs/workloads.md, "Native format"):
SESSIONS conversations, each a first turn with a PREFIX-token prompt and a second turn GAP
seconds later that re-reads that prompt plus the first turn's 256-token answer and 512 new
tokens. With per-layer blocks (host.layers_per_block=1) every second turn promotes its whole
prefix, one 64 KiB block per layer and 16 tokens, which is the simulation-cost case of
docs/model.md ("Simulation cost: transfer trains and held records").

Usage: returning_sessions.py OUT.jsonl [--sessions 160] [--prefix 16384] [--gap 120] [--seed 7]
"""
import argparse
import json
import random


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--sessions", type=int, default=160)
    ap.add_argument("--prefix", type=int, default=16384, help="first prompt, tokens")
    ap.add_argument("--gap", type=float, default=120.0, help="seconds between the two turns")
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    if a.sessions < 1 or a.prefix < 16 or a.gap <= 0:
        ap.error("--sessions >= 1, --prefix >= 16 and --gap > 0")
    rng = random.Random(a.seed)
    bt, answer, added = 16, 256, 512
    header = {"kvtier_workload": 1, "block_tokens": bt, "tenants": 4,
              "source": f"tools/returning_sessions.py --sessions {a.sessions} --prefix {a.prefix} "
                        f"--gap {a.gap} --seed {a.seed}"}
    requests = []
    for s in range(a.sessions):
        t0 = s * 0.25
        keys = ["%016x" % rng.getrandbits(64) for _ in range(a.prefix // bt)]
        more = ["%016x" % rng.getrandbits(64) for _ in range((answer + added) // bt)]
        requests.append((t0, s, 0, a.prefix, keys))
        requests.append((t0 + a.gap, s, 1, a.prefix + answer + added, keys + more))
    requests.sort()
    with open(a.out, "w") as f:
        f.write(json.dumps(header) + "\n")
        for t, s, turn, prompt, keys in requests:
            f.write(json.dumps({"arrival_s": t, "tenant": s % 4, "session": s, "turn": turn,
                                "prompt_tokens": prompt, "output_tokens": answer,
                                "prefix_hashes": keys}) + "\n")


if __name__ == "__main__":
    main()
