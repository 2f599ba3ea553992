#!/usr/bin/env python3
"""Excerpts the measured operator profiles of microsoft/vidur into the small tables kvtier's
calibration reads (platforms/profiles/*.csv): the median time of each linear operator per layer
at a grid of token counts and tensor-parallel widths, and all-reduce medians at power-of-two
sizes. Usage: tools/extract_vidur_profiles.py DIR_WITH_VIDUR_CSVS [OUT_DIR]"""
import collections
import csv
import os
import statistics
import sys

TOKENS = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096]
PROFILES = [  # (gpu, model as kvtier names it, vidur file)
    ("h100", "llama-2-70b", "h100_meta-llama_Llama-2-70b-hf_mlp.csv"),
    ("h100", "llama-2-7b", "h100_meta-llama_Llama-2-7b-hf_mlp.csv"),
    ("a100", "llama-2-70b", "a100_meta-llama_Llama-2-70b-hf_mlp.csv"),
    ("a100", "llama-3-70b", "a100_meta-llama_Meta-Llama-3-70B_mlp.csv"),
    ("a100", "llama-3-8b", "a100_meta-llama_Meta-Llama-3-8B_mlp.csv"),
]
OPS = ["attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj",
       "input_layernorm", "post_attention_layernorm", "attn_rope", "mlp_act", "add"]
ALLREDUCE = [("h100", "h100_dgx_all_reduce.csv"), ("a100", "a100_dgx_all_reduce.csv")]


def main():
    src = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..", "platforms", "profiles")
    with open(os.path.join(out, "vidur_linear.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["gpu", "model", "tp", "tokens"] + [o + "_ms" for o in OPS])
        for gpu, model, name in PROFILES:
            groups = collections.defaultdict(list)
            for r in csv.DictReader(open(os.path.join(src, name))):
                groups[(int(r["num_tensor_parallel_workers"]), int(r["num_tokens"]))].append(r)
            for tp in (1, 2, 4, 8):
                for t in TOKENS:
                    rows = groups[(tp, t)]  # repeated rows: the median of their medians
                    w.writerow([gpu, model, tp, t] +
                               ["%.4g" % statistics.median(float(r["time_stats.%s.median" % o]) for r in rows) for o in OPS])
    with open(os.path.join(out, "vidur_allreduce.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["gpu", "gpus", "bytes", "median_ms"])
        for gpu, name in ALLREDUCE:
            groups = collections.defaultdict(list)
            for r in csv.DictReader(open(os.path.join(src, name))):
                # One node only (a100's file also holds runs spread over nodes).
                if r["devices_per_node"] != r["num_workers"]:
                    continue
                groups[(int(r["num_workers"]), int(r["size"]))].append(float(r["time_stats.all_reduce.median"]))
            for n in (2, 4, 8):
                for p in range(11, 27):  # 2^11 .. 2^26 bf16 elements: 4 KiB .. 128 MiB
                    size = 1 << p
                    if (n, size) in groups:
                        w.writerow([gpu, n, 2 * size, "%.4g" % statistics.median(groups[(n, size)])])


if __name__ == "__main__":
    main()
