#!/usr/bin/env python3
"""Figures of a kvtier run or sweep (`kvtier plot DIR --out OUT`, docs/sweeps.md).

A run folder (`kvtier run --out DIR`: stats.json, series.json, requests.jsonl) gives
dashboard.{png,svg}: the constraints over the run (CAPACITY occupancy over time,
SUSTAINABILITY demand against B_tier per window, the HIDING lateness distribution) and the
TTFT and ITL distributions per tenant.

A sweep folder (`kvtier sweep --out DIR`: sweep.json, results.csv) gives
vs_<key>.{png,svg}: every metric against each swept key (one line per value of the other
keys), and with two or more keys heatmap_<key1>__<key2>.{png,svg}: every metric over the first
two keys (mean over the other keys).

Metrics are the headline metrics of stats.json (its `about` object, which also gives their
units), or those named with --metrics.
"""
import argparse
import csv
import json
import math
import pathlib
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")  # files only, no display
# SVG text stays text (searchable, smaller), not glyph outlines.
matplotlib.rcParams["svg.fonttype"] = "none"
import matplotlib.pyplot as plt  # noqa: E402


class PlotError(Exception):
    pass


def load_json(path):
    try:
        return json.loads(pathlib.Path(path).read_text())
    except OSError as e:
        raise PlotError(f"cannot read {path}: {e.strerror}")
    except json.JSONDecodeError as e:
        raise PlotError(f"{path}: not JSON ({e})")


def save(fig, out, name, formats):
    written = []
    for fmt in formats:
        path = out / f"{name}.{fmt}"
        fig.savefig(path, format=fmt, dpi=110, bbox_inches="tight")
        written.append(path)
    plt.close(fig)
    for p in written:
        print(f"wrote {p}")


# Units by name where stats.json's `about` has none (nested keys: link_busy_s.downstream).
SUFFIX_UNITS = [("_bytes_per_s", "B/s"), ("_per_s", "1/s"), ("_bytes", "B"), ("_gib", "GiB"), ("_ns", "ns"),
                ("_us", "us"), ("_s", "s")]


def unit_of(about, metric):
    text = about.get(metric, "")
    if text:
        return text.split(";", 1)[0].strip()
    for part in reversed(metric.split(".")):
        for suffix, unit in SUFFIX_UNITS:
            if part.endswith(suffix):
                return unit
    return ""


def label(metric, about):
    u = unit_of(about, metric)
    return f"{metric} ({u})" if u else metric


# ---- a run ---------------------------------------------------------------------------------

def fmt_fraction(value):
    """A met fraction is null where nothing was judged (no transfer): shown as n/a."""
    return "n/a" if value is None else f"{value:.3f}"


def percentile_sorted(values):
    xs = sorted(values)
    ys = [(i + 1) / len(xs) for i in range(len(xs))]
    return xs, ys


def plot_run(run, out, formats):
    stats = load_json(run / "stats.json")
    series_path = run / "series.json"
    if not series_path.exists():
        raise PlotError(f"{series_path} is missing: re-run `kvtier run --out {run}` with this kvtier")
    series = load_json(series_path)
    requests = []
    try:
        with open(run / "requests.jsonl") as f:
            for n, line in enumerate(f, 1):
                if line.strip():
                    try:
                        requests.append(json.loads(line))
                    except json.JSONDecodeError as e:
                        raise PlotError(f"{run / 'requests.jsonl'}:{n}: not JSON ({e})")
    except OSError as e:
        raise PlotError(f"cannot read {run / 'requests.jsonl'}: {e.strerror}")
    c = stats["constraints"]
    w = series["window_s"]
    t = [(i + 0.5) * w for i in range(len(series["hbm_kv_occupancy"]))]
    fig, ax = plt.subplots(2, 3, figsize=(16, 9))
    fig.suptitle("\n".join(textwrap.wrap(f"kvtier run {run}: {c.get('verdict', '')}", 180)), fontsize=9)

    a = ax[0][0]
    a.step(t, [100 * x for x in series["hbm_kv_occupancy"]], where="mid")
    a.axhline(100, color="red", linestyle="--", label="HBM KV budget")
    a.set_title(f"CAPACITY: time-weighted occupancy {100 * c['capacity']['time_weighted_occupancy']:.1f} %, "
                f"{c['capacity']['capacity_waits']} waits", fontsize=9)
    a.set_xlabel("simulated time (s)")
    a.set_ylabel(f"HBM KV occupancy, mean per {w:g} s window (% of budget)")
    a.set_ylim(0, 110)
    a.legend(fontsize=8)

    a = ax[0][1]
    gb = 1e9
    if "demanded_bytes_per_s" in series:
        a.step(t, [x / gb for x in series["demanded_bytes_per_s"]], where="mid",
               label="demanded (tier bytes the steps need / their compute time)")
    a.step(t, [x / gb for x in series["demand_to_hbm_bytes_per_s"]], where="mid", label="carried to HBM (promotions)")
    a.step(t, [x / gb for x in series["demand_to_tier_bytes_per_s"]], where="mid", label="carried to tier (demotions)")
    a.axhline(series["b_tier_bytes_per_s"] / gb, color="red", linestyle="--", label="B_tier")
    a.set_title(f"SUSTAINABILITY: peak {c['sustainability']['peak_utilisation']:.3f} of B_tier, "
                f"{c['sustainability']['violations']} of {c['sustainability']['windows']} windows over", fontsize=9)
    a.set_xlabel("simulated time (s)")
    a.set_ylabel(f"boundary KV demand per {w:g} s window (GB/s)")
    a.legend(fontsize=8)

    a = ax[0][2]
    h = series["hiding"]
    edges, counts = h["lateness_bin_edges_s"], h["lateness_counts"]
    a.bar(edges[:-1], counts, width=[edges[i + 1] - edges[i] for i in range(len(counts))], align="edge")
    a.set_xscale("log")
    chunk_text = (f"{h['chunks_on_time']} of {h['chunks']} chunks, " if "chunks" in h else "")
    a.set_title(f"HIDING: {chunk_text}{h['on_time']} of {h['transfers']} transfers on time "
                f"(met {fmt_fraction(c['hiding']['met_fraction'])} per block)", fontsize=9)
    a.set_xlabel("lateness of a missed transfer (s)")
    a.set_ylabel("missed transfers (count per bin)")

    tenants = sorted({r["tenant"] for r in requests})
    done = [r for r in requests if r.get("first_token_s") is not None and not r.get("rejected")]
    a = ax[1][0]
    for tn in tenants:
        ttft = [r["first_token_s"] - r["arrival_s"] for r in done if r["tenant"] == tn]
        if ttft:
            a.step(*percentile_sorted(ttft), where="post", label=f"tenant {tn} ({len(ttft)})")
    a.set_xscale("log")
    a.set_title("TTFT per tenant", fontsize=9)
    a.set_xlabel("time to first token (s)")
    a.set_ylabel("fraction of the tenant's requests (CDF)")
    a.legend(fontsize=8)

    a = ax[1][1]
    for tn in tenants:
        itl = [(r["finish_s"] - r["first_token_s"]) / (r["generated_tokens"] - 1) for r in done
               if r["tenant"] == tn and r.get("finish_s") is not None and r["generated_tokens"] > 1]
        if itl:
            a.step(*percentile_sorted(itl), where="post", label=f"tenant {tn} ({len(itl)})")
    a.set_title("ITL per tenant (mean per request)", fontsize=9)
    a.set_xlabel("inter-token latency, request mean (s)")
    a.set_ylabel("fraction of the tenant's requests (CDF)")
    a.legend(fontsize=8)

    a = ax[1][2]
    for tn in tenants:
        mx = [r["max_itl_s"] for r in done if r["tenant"] == tn and r.get("max_itl_s")]
        if mx:
            a.step(*percentile_sorted(mx), where="post", label=f"tenant {tn}")
    a.set_xscale("log")
    a.set_title("worst ITL per request, per tenant", fontsize=9)
    a.set_xlabel("largest inter-token gap of a request (s)")
    a.set_ylabel("fraction of the tenant's requests (CDF)")
    a.legend(fontsize=8)
    fig.tight_layout()
    save(fig, out, "dashboard", formats)


# ---- a sweep -------------------------------------------------------------------------------

def number(text):
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def plot_sweep(sweep, out, formats, wanted):
    record = load_json(sweep / "sweep.json")
    try:
        with open(sweep / "results.csv", newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        raise PlotError(f"cannot read {sweep / 'results.csv'}: {e.strerror}")
    grid = record["grid"]
    keys = [g["key"] for g in grid]
    ok = [r for r in rows if r["status"] == "ok"]
    if not ok:
        raise PlotError(f"{sweep / 'results.csv'}: no point succeeded, nothing to plot")
    about = load_json(sweep / "points" / f"{int(ok[0]['point']):04d}" / "stats.json").get("about", {})
    # The top-level figures (about also describes the nested groups' keys, by dotted path).
    metrics = wanted or [m for m in about if "." not in m and m in ok[0] and number(ok[0][m]) is not None]
    for m in metrics:
        if m not in rows[0]:
            raise PlotError(f"metric '{m}' is not a column of {sweep / 'results.csv'}")
    if not metrics:
        raise PlotError("no numeric metric to plot")

    def key_label(g):
        d = g.get("description", "")
        return f"{g['key']} ({d})" if d else g["key"]

    def positions(g):
        vals = g["values"]
        nums = [number(v) for v in vals]
        if all(n is not None for n in nums):
            return {v: n for v, n in zip(vals, nums)}, False
        return {v: i for i, v in enumerate(vals)}, True

    cols = min(4, len(metrics))
    nrows = math.ceil(len(metrics) / cols)
    for ki, g in enumerate(grid):
        pos, categorical = positions(g)
        others = [k for k in keys if k != g["key"]]
        fig, axes = plt.subplots(nrows, cols, figsize=(4.2 * cols, 3.2 * nrows), squeeze=False)
        fig.suptitle(f"kvtier sweep {sweep}: each metric against {g['key']}", fontsize=10)
        for mi, m in enumerate(metrics):
            a = axes[mi // cols][mi % cols]
            lines = {}
            for r in ok:
                y = number(r[m])
                if y is None:
                    continue
                lines.setdefault(tuple(r[k] for k in others), []).append((pos[r[g["key"]]], y))
            for other, pts in sorted(lines.items()):
                pts.sort()
                name = ", ".join(f"{k}={v}" for k, v in zip(others, other)) or None
                a.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
            if categorical:
                a.set_xticks(list(pos.values()), list(pos.keys()))
            a.set_xlabel(key_label(g), fontsize=7)
            a.set_ylabel(label(m, about), fontsize=7)
            a.tick_params(labelsize=7)
            if mi == 0 and others and len(lines) <= 12:
                a.legend(fontsize=6)
        for mi in range(len(metrics), nrows * cols):
            axes[mi // cols][mi % cols].axis("off")
        fig.tight_layout()
        save(fig, out, f"vs_{g['key']}", formats)

    if len(grid) >= 2:
        gx, gy = grid[0], grid[1]
        fig, axes = plt.subplots(nrows, cols, figsize=(4.4 * cols, 3.6 * nrows), squeeze=False)
        rest = keys[2:]
        fig.suptitle(f"kvtier sweep {sweep}: metrics over {gx['key']} x {gy['key']}"
                     + (f" (mean over {', '.join(rest)})" if rest else ""), fontsize=10)
        for mi, m in enumerate(metrics):
            a = axes[mi // cols][mi % cols]
            cells = [[[] for _ in gx["values"]] for _ in gy["values"]]
            for r in ok:
                y = number(r[m])
                if y is not None:
                    cells[gy["values"].index(r[gy["key"]])][gx["values"].index(r[gx["key"]])].append(y)
            z = [[sum(c) / len(c) if c else float("nan") for c in row] for row in cells]
            im = a.imshow(z, origin="lower", aspect="auto", cmap="viridis")
            a.set_xticks(range(len(gx["values"])), gx["values"])
            a.set_yticks(range(len(gy["values"])), gy["values"])
            a.set_xlabel(key_label(gx), fontsize=7)
            a.set_ylabel(key_label(gy), fontsize=7)
            a.set_title(label(m, about), fontsize=7)
            a.tick_params(labelsize=7)
            fig.colorbar(im, ax=a).ax.tick_params(labelsize=6)
        for mi in range(len(metrics), nrows * cols):
            axes[mi // cols][mi % cols].axis("off")
        fig.tight_layout()
        save(fig, out, f"heatmap_{gx['key']}__{gy['key']}", formats)


def main(argv):
    p = argparse.ArgumentParser(prog="kvtier plot", description=__doc__.split("\n\n")[0])
    p.add_argument("dir", help="a run folder (stats.json) or a sweep folder (sweep.json)")
    p.add_argument("--out", required=True, help="folder for the figures (created if missing)")
    p.add_argument("--format", default="png,svg", help="comma-separated: png, svg, pdf")
    p.add_argument("--metrics", default="", help="comma-separated results.csv columns (sweep); default: headline metrics")
    a = p.parse_args(argv)
    src = pathlib.Path(a.dir)
    out = pathlib.Path(a.out)
    formats = [f for f in a.format.split(",") if f]
    for f in formats:
        if f not in ("png", "svg", "pdf"):
            raise PlotError(f"--format '{f}' is not png, svg or pdf")
    out.mkdir(parents=True, exist_ok=True)
    if (src / "sweep.json").exists():
        plot_sweep(src, out, formats, [m for m in a.metrics.split(",") if m])
    elif (src / "stats.json").exists():
        plot_run(src, out, formats)
    else:
        raise PlotError(f"{src} holds neither sweep.json (a sweep) nor stats.json (a run)")


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except PlotError as e:
        print(f"kvtier plot: {e}", file=sys.stderr)
        sys.exit(1)
