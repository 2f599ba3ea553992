#!/usr/bin/env python3
"""Fits the operator cost model's GPU parameters ([gpu] keys of platforms/gpus/*.ini) to the
measured profiles excerpted in platforms/profiles/ and prints them with the error table.

Linear operator (one GEMM of M token rows, K x N weights on one GPU, bf16):
    t = max((bytes + A eta_m t_launch) / (A eta_m), FLOPs / (P eta_f) (1 + W_half / (M N)))
    bytes = 2 (K N + M K + M N), FLOPs = 2 M K N
Elementwise kernels: t = launch + bytes / (A eta_e). All-reduce of S bytes on N GPUs: lat_N + S / bw_N.
A and P are the GPU file's achievable bandwidth and bf16 peak. Pure Python (no SciPy): Nelder-Mead.
Usage: tools/fit_operator_eta.py [--full DIR_WITH_VIDUR_CSVS] [--hold-out GPU:MODEL]
  --full: also the error over every measured token count, not only the excerpt's grid;
  --hold-out: fit without that profile and print the error of the prediction for it."""
import collections
import csv
import json
import os
import statistics
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
GPUS = {"h100": dict(A=3350e9 * 0.876, P=989e12), "a100": dict(A=2039e9 * 0.876, P=312e12)}
LINEAR = ["attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj"]


def model_shape(name):
    j = json.load(open(os.path.join(ROOT, "workloads", "models", name + ".json")))
    h, nh, nkv, inter = j["hidden_size"], j["num_attention_heads"], j["num_key_value_heads"], j["intermediate_size"]
    return dict(h=h, q=nh * (h // nh), kv=nkv * (h // nh), inter=inter)


def gemms(s, tp):  # (K, N) of QKV, output projection, gate/up, down on one GPU
    h, q, kv, i = s["h"], s["q"] / tp, s["kv"] / tp, s["inter"] / tp
    return [(h, q + 2 * kv), (q, h), (h, 2 * i), (i, h)]


def elementwise_bytes(s, tp, m):  # 2 norms, 2 residual adds, activation, rotary (as the C++ model)
    h, q, kv, i = s["h"], s["q"] / tp, s["kv"] / tp, s["inter"] / tp
    return [m * h * 4, m * h * 4, m * h * 6, m * h * 6, m * i * 6, m * (q + kv) * 4]


def linear_s(g, p, m, k, n):
    em, launch_us, ef, w_half = p
    by = 2.0 * (k * n + m * k + m * n)
    return max(by / (g["A"] * em) + launch_us * 1e-6, 2.0 * m * k * n / (g["P"] * ef) * (1 + w_half / (m * n)))


def load_grid():
    rows = collections.defaultdict(list)
    for r in csv.DictReader(open(os.path.join(ROOT, "platforms", "profiles", "vidur_linear.csv"))):
        rows[r["gpu"]].append(r)
    return rows


def load_full(src):
    files = {("h100", "llama-2-70b"): "h100_meta-llama_Llama-2-70b-hf_mlp.csv",
             ("h100", "llama-2-7b"): "h100_meta-llama_Llama-2-7b-hf_mlp.csv",
             ("a100", "llama-2-70b"): "a100_meta-llama_Llama-2-70b-hf_mlp.csv",
             ("a100", "llama-3-70b"): "a100_meta-llama_Meta-Llama-3-70B_mlp.csv",
             ("a100", "llama-3-8b"): "a100_meta-llama_Meta-Llama-3-8B_mlp.csv"}
    rows = collections.defaultdict(list)
    for (gpu, model), name in files.items():
        g = collections.defaultdict(list)
        for r in csv.DictReader(open(os.path.join(src, name))):
            if int(r["num_tokens"]) <= 4096:
                g[(r["num_tensor_parallel_workers"], r["num_tokens"])].append(r)
        for (tp, t), rs in g.items():
            row = {"gpu": gpu, "model": model, "tp": tp, "tokens": t}
            for o in LINEAR:
                row[o + "_ms"] = statistics.median(float(x["time_stats.%s.median" % o]) for x in rs)
            rows[gpu].append(row)
    return rows


def errors(gpu, p, rows):
    g, out = GPUS[gpu], collections.defaultdict(list)
    for r in rows:
        s, tp, m = model_shape(r["model"]), int(r["tp"]), int(r["tokens"])
        model = sum(linear_s(g, p, m, k, n) for k, n in gemms(s, tp))
        meas = sum(float(r[o + "_ms"]) for o in LINEAR) * 1e-3
        out[(r["model"], tp)].append((m, (model - meas) / meas))
    return out


def nelder_mead(f, x0, iters=1500):
    n = len(x0)
    pts = [list(x0)] + [[x * (1.25 if i == j else 1.0) for j, x in enumerate(x0)] for i in range(n)]
    vals = [f(p) for p in pts]
    for _ in range(iters):
        order = sorted(range(n + 1), key=lambda i: vals[i])
        pts, vals = [pts[i] for i in order], [vals[i] for i in order]
        c = [sum(p[j] for p in pts[:-1]) / n for j in range(n)]
        refl = [c[j] + (c[j] - pts[-1][j]) for j in range(n)]
        fr = f(refl)
        if fr < vals[0]:
            exp = [c[j] + 2 * (c[j] - pts[-1][j]) for j in range(n)]
            fe = f(exp)
            pts[-1], vals[-1] = (exp, fe) if fe < fr else (refl, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = refl, fr
        else:
            con = [c[j] + 0.5 * (pts[-1][j] - c[j]) for j in range(n)]
            fc = f(con)
            if fc < vals[-1]:
                pts[-1], vals[-1] = con, fc
            else:
                for i in range(1, n + 1):
                    pts[i] = [pts[0][j] + 0.5 * (pts[i][j] - pts[0][j]) for j in range(n)]
                    vals[i] = f(pts[i])
    return pts[0]


def per_profile(err):
    prof = collections.defaultdict(list)
    for (model, tp), e in err.items():
        prof[model] += [x for _, x in e]
    return prof


def linear_score(gpu, p, rows):
    if min(p) <= 0:
        return 1e9
    s = 0.0
    for e in per_profile(errors(gpu, p, rows)).values():
        a = sorted(abs(x) for x in e)
        s += statistics.median(a) + 2.0 * max(a) + sum(x * x for x in a) / len(a)
    return s


def hold_out(grid, spec):
    gpu, model = spec.split(":")
    train = [r for r in grid[gpu] if r["model"] != model]
    test = [r for r in grid[gpu] if r["model"] == model]
    if not test or not train:
        sys.exit("--hold-out %s: no such profile, or nothing left to fit" % spec)
    p = nelder_mead(lambda x: linear_score(gpu, x, train), [1.0, 5.0, 0.75, 150 * 4096.0])
    a = sorted(abs(v) for v in per_profile(errors(gpu, p, test))[model])
    print("[%s] fit without %s: %s; predicted %s: median |err| %.1f %%, worst %.1f %% (%d points)"
          % (gpu, model, ", ".join("%.4g" % v for v in p), model, 100 * statistics.median(a), 100 * max(a), len(a)))


def main():
    grid = load_grid()
    if "--hold-out" in sys.argv:
        hold_out(grid, sys.argv[sys.argv.index("--hold-out") + 1])
        return
    full = load_full(sys.argv[sys.argv.index("--full") + 1]) if "--full" in sys.argv else None
    for gpu in GPUS:
        p = nelder_mead(lambda x: linear_score(gpu, x, grid[gpu]), [1.0, 5.0, 0.75, 150 * 4096.0])
        print("[%s] linear_eta_mem = %.3f  linear_launch_us = %.2f  linear_eta_flop = %.3f  linear_half_outputs = %.0f"
              % (gpu, p[0], p[1], p[2], p[3]))
        for name, rows in (("grid", grid[gpu]), ("all measured token counts <= 4096", full[gpu] if full else None)):
            if not rows:
                continue
            err = errors(gpu, p, rows)
            print("  linear ops per layer, error vs measured (%s): model, TP, points, median |err|, worst, range" % name)
            for model, e in sorted(per_profile(err).items()):
                for tp in (1, 2, 4, 8):
                    x = [v for _, v in err[(model, tp)]]
                    a = sorted(abs(v) for v in x)
                    print("    %-12s TP%d %4d  %5.1f %%  %5.1f %%  [%+.1f, %+.1f] %%"
                          % (model, tp, len(a), 100 * statistics.median(a), 100 * max(a), 100 * min(x), 100 * max(x)))
                a = sorted(abs(v) for v in e)
                print("    %-12s all %4d  %5.1f %%  %5.1f %%" % (model, len(a), 100 * statistics.median(a), 100 * max(a)))
        # Elementwise kernels: launch and bandwidth over every grid point.
        ew = []
        for r in grid[gpu]:
            s, tp, m = model_shape(r["model"]), int(r["tp"]), int(r["tokens"])
            meas = sum(float(r[o + "_ms"]) for o in ("input_layernorm", "post_attention_layernorm", "attn_rope", "mlp_act"))
            meas = (meas + 2 * float(r["add_ms"])) * 1e-3  # vidur times one residual add; a layer has two
            ew.append((elementwise_bytes(s, tp, m), meas))
        g = GPUS[gpu]

        def ew_model(q, b):
            return sum(q[1] * 1e-6 + x / (g["A"] * q[0]) for x in b)

        def ew_score(q):
            if min(q) <= 0:
                return 1e9
            a = sorted(abs(ew_model(q, b) / meas - 1) for b, meas in ew)
            return statistics.median(a) + 0.5 * max(a)
        q = nelder_mead(ew_score, [0.5, 3.0])
        a = sorted(abs(ew_model(q, b) / meas - 1) for b, meas in ew)
        print("  elementwise_eta = %.3f  elementwise_launch_us = %.2f   (norms+adds+act+rotary: median |err| %.1f %%, worst %.1f %%)"
              % (q[0], q[1], 100 * statistics.median(a), 100 * max(a)))
        # All-reduce per GPU count.
        ar = collections.defaultdict(list)
        for r in csv.DictReader(open(os.path.join(ROOT, "platforms", "profiles", "vidur_allreduce.csv"))):
            if r["gpu"] == gpu:
                ar[int(r["gpus"])].append((float(r["bytes"]), float(r["median_ms"]) * 1e-3))
        for n, pts in sorted(ar.items()):
            def ar_score(q):
                if min(q) <= 0:
                    return 1e9
                a = sorted(abs((q[0] * 1e-6 + b / (q[1] * 1e9)) / t - 1) for b, t in pts)
                return statistics.median(a) + max(a)
            q = nelder_mead(ar_score, [20.0, 300.0], 800)
            a = sorted(abs((q[0] * 1e-6 + b / (q[1] * 1e9)) / t - 1) for b, t in pts)
            print("  allreduce_latency_us_%d = %.1f  allreduce_gbps_%d = %.0f   (%d sizes: median |err| %.1f %%, worst %.1f %%)"
                  % (n, q[0], n, q[1], len(pts), 100 * statistics.median(a), 100 * max(a)))


if __name__ == "__main__":
    main()
