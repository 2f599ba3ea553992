#!/usr/bin/env python3
"""Checks `kvtier cost --platform h100-pcie5-x16 --tokens 1,4096 --tp 1,8 --json FILE` (Llama-3-70B,
FP8 weights) against the operator formulas worked out here from the h100 GPU file's values
(platforms/gpus/h100.ini), not from the program: a memory-bound QKV at 1 token, a compute-bound
gate/up at 4,096 tokens, the all-reduce at TP 8, and the sums the JSON promises."""
import json
import sys

A = 3350e9 * 0.876                        # hbm.peak_bw_gbps x hbm.achievable_fraction
ETA_M, LAUNCH, ETA_F, W_HALF = 1.014, 4.68e-6, 0.682, 7.33e5
FP8_PEAK = 1979e12                        # FP8 weights run on the FP8 peak
H, Q, KV, I, VOCAB, LAYERS = 8192, 8192, 1024, 28672, 128256, 80


def linear(m, k, n, wbytes=1.0):
    mem = (k * n * wbytes + m * (k + n) * 2) / (A * ETA_M) + LAUNCH
    flop = 2.0 * m * k * n / (FP8_PEAK * ETA_F) * (1 + W_HALF / (m * n))
    return max(mem, flop)


def close(a, b, what, rel=1e-9):
    if abs(a - b) > rel * abs(b):
        sys.exit("%s: %r, expected %r" % (what, a, b))


rows = json.load(open(sys.argv[1]))["rows"]
if len(rows) != 4:
    sys.exit("expected 4 rows (2 TP x 2 token counts), got %d" % len(rows))
need = ["tokens", "tp", "context", "linear_s", "attention_s", "allreduce_s", "other_s", "layer_s", "step_s", "ops"]
for r in rows:
    for k in need:
        if k not in r:
            sys.exit("row lacks '%s'" % k)
    o = r["ops"]
    close(r["linear_s"], o["qkv_proj_s"] + o["out_proj_s"] + o["gate_up_s"] + o["down_s"] + o["router_s"], "linear_s sum")
    close(r["layer_s"], r["linear_s"] + r["attention_s"] + r["allreduce_s"] + r["other_s"], "layer_s sum")
    close(r["step_s"], r["layers"] * r["layer_s"] + r["lm_head_s"], "step_s")
by = {(r["tp"], r["tokens"]): r for r in rows}
# 1 token, TP 1: QKV streams 8192 x 10240 FP8 weights: memory-bound.
m = by[(1, 1)]["ops"]["qkv_proj_s"]
close(m, (H * (Q + 2 * KV) + (H + Q + 2 * KV) * 2) / (A * ETA_M) + LAUNCH, "QKV at 1 token (memory-bound)")
# 4,096 tokens, TP 1: gate/up's 2 x 4096 x 8192 x 57344 FLOPs: compute-bound.
c = by[(1, 4096)]["ops"]["gate_up_s"]
close(c, 2.0 * 4096 * H * 2 * I / (FP8_PEAK * ETA_F) * (1 + W_HALF / (4096 * 2 * I)), "gate/up at 4096 tokens (compute-bound)")
if not c > (H * 2 * I + 4096 * (H + 2 * I) * 2) / (A * ETA_M) + LAUNCH:
    sys.exit("gate/up at 4096 tokens is not compute-bound")
# TP 8: two all-reduces of tokens x 8192 x 2 B at 32.9 us + bytes / 440 GB/s.
close(by[(8, 4096)]["allreduce_s"], 2 * (32.9e-6 + 4096 * H * 2 / 440e9), "all-reduce at TP 8")
close(by[(8, 1)]["ops"]["qkv_proj_s"], linear(1, H, (Q + 2 * KV) / 8), "QKV at TP 8")
if by[(1, 1)]["allreduce_s"] != 0:
    sys.exit("all-reduce on one GPU")
print("kvtier cost JSON: 4 rows as computed by hand")
