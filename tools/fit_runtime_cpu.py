#!/usr/bin/env python3
"""The serving runtime's own CPU work per scheduler step, fitted to measured figures.

microsoft/vidur profiled the CPU side of a vLLM-style serving engine step by step (Sarathi-Serve's
LLMEngine running vLLM's scheduler, on an A100 DGX host): scheduling, preparing the inputs,
sampling and processing the model's outputs, each the median over a run at a fixed batch size.
kvtier models that work as a line in the step's sequences (sched.runtime_step_cpu_us +
sched.runtime_sequence_cpu_us per sequence), and this script gives the line's two numbers and how
far the measurements lie from it.

  tools/fit_runtime_cpu.py                      fit every (model, tensor-parallel width) in the
                                                excerpt platforms/profiles/vidur_cpu_overheads.csv
  tools/fit_runtime_cpu.py --extract VIDUR_CSV  rewrite the excerpt from vidur's
                                                data/profiling/a100/cpu_overheads.csv (commit
                                                6d98aa8, see platforms/profiles/SOURCE.txt)
"""
import collections
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXCERPT = os.path.join(HERE, "..", "platforms", "profiles", "vidur_cpu_overheads.csv")
# Vidur's CPU overhead of a step is these four plus ray_comm_time (execution_time.py,
# _get_cpu_overhead). Ray's round trip is left out: it is the profiled engine's way of reaching
# its workers, not work a one-GPU vLLM replica does in-process (docs/model.md).
PARTS = ["schedule", "sampler_e2e", "prepare_inputs_e2e", "process_model_outputs"]


def extract(src):
    with open(src) as f, open(EXCERPT, "w", newline="") as out:
        w = csv.writer(out)
        w.writerow(["model", "tensor_parallel", "batch_size"] + [p + "_ms" for p in PARTS])
        for r in csv.DictReader(f):
            w.writerow([r["model_name"], r["tensor_parallel_degree"], r["batch_size"]] +
                       ["%.4f" % float(r[p + "_median"]) for p in PARTS])


def fit(points):
    """Least squares of y = a + b x; returns a, b and the largest relative error."""
    n = len(points)
    sx = sum(x for x, _ in points)
    sy = sum(y for _, y in points)
    sxx = sum(x * x for x, _ in points)
    sxy = sum(x * y for x, y in points)
    b = (n * sxy - sx * sy) / (n * sxx - sx * sx)
    a = (sy - b * sx) / n
    worst = max(abs(a + b * x - y) / y for x, y in points)
    return a, b, worst


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--extract":
        extract(sys.argv[2])
        return
    if len(sys.argv) != 1:
        sys.exit(__doc__)
    groups = collections.defaultdict(list)
    with open(EXCERPT) as f:
        for line, r in enumerate(csv.DictReader(f), start=2):
            try:
                total = sum(float(r[p + "_ms"]) for p in PARTS)
                groups[(r["model"], int(r["tensor_parallel"]))].append((int(r["batch_size"]), total))
            except (KeyError, ValueError) as e:
                sys.exit("%s:%d: %s" % (EXCERPT, line, e))
    print("%-38s %3s %8s %16s %20s %10s" % ("model", "tp", "batches", "per step (us)",
                                            "per sequence (us)", "worst err"))
    for (model, tp), pts in sorted(groups.items()):
        a, b, worst = fit(pts)
        print("%-38s %3d %3d-%-4d %16.1f %20.2f %9.1f%%" % (model, tp, min(x for x, _ in pts),
                                                           max(x for x, _ in pts), a * 1e3, b * 1e3,
                                                           worst * 100))


if __name__ == "__main__":
    main()
