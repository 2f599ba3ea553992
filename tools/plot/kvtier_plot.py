#!/usr/bin/env python3
"""Figures of a kvtier run or sweep (`kvtier plot DIR --out OUT`, docs/sweeps.md).

A run folder (`kvtier run --out DIR`: stats.json, series.json, requests.jsonl) gives
dashboard.{png,svg}: the constraints over the run (CAPACITY occupancy over time,
SUSTAINABILITY demand against B_tier per window, the HIDING lateness distribution) and the
TTFT and ITL distributions per tenant.

A sweep folder (`kvtier sweep --out DIR`: sweep.json, results.csv) gives, for each group of
headline metrics (latency, cache, constraints; at most 6 panels a figure),
vs_<key>__<group>.{png,svg}: each metric against each swept key (one line per value of the
other keys, in numeric order), and with two or more keys
heatmap_<key1>__<key2>__<group>.{png,svg}: each metric over the first two keys (mean over the
other keys, the value written in each cell). --metrics names results.csv columns instead: one
figure per 6 of them (vs_<key>, heatmap_<key1>__<key2>; __part<N> where there are more). A
metric constant over the sweep is drawn flat and titled "constant: VALUE"; one with no value
at any point says "n/a".

A curves folder (`kvtier link-study --curves DIR`: curves.json, bwlat_<pct>.txt) gives
bwlat.{png,svg}: latency against achieved bandwidth, one line per read percentage, the
saturation point of each marked.
"""
import argparse
import csv
import json
import math
import pathlib
import sys
import textwrap

plt = None  # matplotlib.pyplot, imported by load_matplotlib() once the arguments are checked
SOURCE = "the folder"  # the run or sweep folder, for messages


class PlotError(Exception):
    pass


def load_matplotlib():
    global plt
    try:
        import matplotlib
        matplotlib.use("Agg")  # files only, no display
        import matplotlib.pyplot
    except ImportError as e:
        raise PlotError(f"matplotlib is missing for {sys.executable} ({e}): install it (Debian: "
                        f"apt-get install python3-matplotlib), or name an interpreter that has it "
                        f"with $KVTIER_PYTHON")
    # SVG text stays text (searchable, smaller), not glyph outlines.
    matplotlib.rcParams["svg.fonttype"] = "none"
    plt = matplotlib.pyplot


def load_json(path):
    try:
        return json.loads(pathlib.Path(path).read_text())
    except OSError as e:
        raise PlotError(f"cannot read {path}: {e.strerror}")
    except UnicodeDecodeError:
        raise PlotError(f"{path}: not JSON (not UTF-8 text)")
    except json.JSONDecodeError as e:
        raise PlotError(f"{path}: not JSON ({e})")


def prepare_out(out):
    if out.exists() and not out.is_dir():
        raise PlotError(f"--out {out} is a file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise PlotError(f"cannot create the folder --out {out}: {e.strerror}")


def save(fig, out, name, formats):
    written = []
    for fmt in formats:
        path = out / f"{name}.{fmt}"
        try:
            fig.savefig(path, format=fmt, dpi=110, bbox_inches="tight")
        except OSError as e:
            plt.close(fig)
            raise PlotError(f"cannot write {path}: {e.strerror}")
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
    fig, ax = plt.subplots(2, 3, figsize=(16, 9), constrained_layout=True)
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
    a.set_title("\n".join(textwrap.wrap(f"HIDING: {chunk_text}{h['on_time']} of {h['transfers']} transfers on "
                                         f"time (met {fmt_fraction(c['hiding']['met_fraction'])} per block)", 70)),
                fontsize=9)
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
    save(fig, out, "dashboard", formats)


# ---- a sweep -------------------------------------------------------------------------------

# The default metrics of a sweep's figures: the headline ones, in groups of at most 6 (one
# figure each). Those results.csv lacks (an older kvtier) are left out.
GROUPS = [
    ("latency", ["ttft_p50_s", "ttft_p99_s", "itl_p50_s", "itl_p99_s", "throughput_tokens_per_s",
                 "load_wait_per_request_s"]),
    ("cache", ["hit_rate", "hit_rate_opt", "tier_hit_rate", "promotions", "demotions", "a_traffic"]),
    ("constraints", ["hiding_met_fraction", "chunk_met_fraction", "exposed_stall_per_token_s",
                     "link_busy_s.downstream", "link_busy_s.upstream",
                     "constraints.sustainability.peak_utilisation"]),
]
PANELS_PER_FIGURE = 6
# Units of the default metrics that stats.json's `about` does not describe.
EXTRA_UNITS = {"tier_hit_rate": "fraction", "constraints.sustainability.peak_utilisation": "of B_tier"}
NA_TEXT = "n/a (no value at any point)"


def number(text):
    if text is None:
        return None
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def fmt_value(v):
    """A value as a panel or a cell shows it: 4 significant figures."""
    if v == 0:
        return "0"
    return f"{v:.4g}"


def constant_of(values):
    """The value of a metric equal at every point (up to float rounding), else None."""
    if not values:
        return None
    lo, hi = min(values), max(values)
    if hi - lo <= 1e-9 * max(abs(lo), abs(hi)):
        return (lo + hi) / 2
    return None


def sort_key(values):
    """Values of a key in numeric order when all are numbers (4, 8, 16), else as strings."""
    if all(number(v) is not None for v in values):
        return lambda v: (number(v), v)
    return lambda v: (0, v)


def show_na(a):
    a.text(0.5, 0.5, NA_TEXT, ha="center", va="center", transform=a.transAxes, fontsize=8, color="0.35")
    a.set_xticks([])
    a.set_yticks([])


def show_constant(a, value):
    """A flat metric: the axis around its value, no offset or scientific notation noise."""
    from matplotlib.ticker import FixedLocator, FuncFormatter
    d = abs(value) * 0.1 if value else 1.0
    a.set_ylim(value - d, value + d)
    a.yaxis.set_major_locator(FixedLocator([value - d, value, value + d]))
    a.yaxis.set_major_formatter(FuncFormatter(lambda y, _: fmt_value(y)))


def panel_title(a, m, about, const):
    text = label(m, about)
    if const is not None:
        text += f"\nconstant: {fmt_value(const)}"
    a.set_title(text, fontsize=8)


def grid_axes(n, cell_w, cell_h):
    cols = min(3, n)
    nrows = math.ceil(n / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(cell_w * cols, cell_h * nrows + 0.6), squeeze=False,
                             constrained_layout=True)
    flat = [axes[i // cols][i % cols] for i in range(nrows * cols)]
    for a in flat[n:]:
        a.axis("off")
    return fig, flat[:n]


def read_results(path):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        raise PlotError(f"cannot read {path}: {e.strerror}")
    except UnicodeDecodeError:
        raise PlotError(f"{path}: not CSV (not UTF-8 text)")
    except csv.Error as e:
        raise PlotError(f"{path}: not CSV ({e})")
    return rows


def plot_sweep(sweep, out, formats, wanted):
    record = load_json(sweep / "sweep.json")
    results = sweep / "results.csv"
    rows = read_results(results)
    grid = record["grid"]
    keys = [g["key"] for g in grid]
    if not rows:
        raise PlotError(f"{results}: no point, nothing to plot")
    columns = list(rows[0].keys())
    for k in ["point", "status"] + keys:
        if k not in columns:
            raise PlotError(f"{results}: no column '{k}'; is it the results.csv of this sweep.json?")
    ok = [r for r in rows if r["status"] == "ok"]
    if not ok:
        raise PlotError(f"{results}: no point succeeded, nothing to plot")
    for r in ok:
        for g in grid:
            if r[g["key"]] not in g["values"]:
                raise PlotError(f"{results}: point {r['point']} has {g['key']} = {r[g['key']]!r}, "
                                f"not a value of sweep.json's grid")
    about_path = sweep / "points" / f"{int(ok[0]['point']):04d}" / "stats.json"
    about = load_json(about_path).get("about", {}) if about_path.exists() else {}
    for m, u in EXTRA_UNITS.items():
        about.setdefault(m, u)

    if wanted:
        for m in wanted:
            if m not in columns:
                raise PlotError(f"metric '{m}' is not a column of {results}")
        figures = [(f"part{i // PANELS_PER_FIGURE + 1}", wanted[i:i + PANELS_PER_FIGURE])
                   for i in range(0, len(wanted), PANELS_PER_FIGURE)]
        if len(figures) == 1:
            figures = [(None, wanted)]
    else:
        figures = [(name, [m for m in ms if m in columns]) for name, ms in GROUPS]
        figures = [(name, ms) for name, ms in figures if ms]
        if not figures:  # a results.csv without any of them: the headline metrics it has
            # (about also describes the nested groups' keys, by dotted path: top-level ones only)
            ms = [m for m in about if "." not in m and m in columns and any(number(r[m]) is not None for r in ok)]
            figures = [(f"part{i // PANELS_PER_FIGURE + 1}", ms[i:i + PANELS_PER_FIGURE])
                       for i in range(0, len(ms), PANELS_PER_FIGURE)]
    if not figures:
        raise PlotError("no numeric metric to plot")
    # Each metric's values per point; a column of text (not numbers, not empty) is refused.
    values = {}
    for _, ms in figures:
        for m in ms:
            texts = [r[m] for r in ok if r[m] not in (None, "")]
            bad = [t for t in texts if not is_float(t)]
            if bad:
                raise PlotError(f"metric '{m}' of {results} is not numeric (e.g. {bad[0]!r})")
            values[m] = [number(t) for t in texts]

    failed = len(rows) - len(ok)
    failed_note = f" ({failed} of {len(rows)} points failed, left out)" if failed else ""

    def key_label(g):
        d = g.get("description", "")
        return f"{g['key']} ({d})" if d else g["key"]

    def positions(g):
        vals = g["values"]
        nums = [number(v) for v in vals]
        if all(n is not None for n in nums):
            return {v: n for v, n in zip(vals, nums)}, False
        return {v: i for i, v in enumerate(vals)}, True

    def suptitle(fig, text):
        fig.suptitle("\n".join(textwrap.wrap(text, 150)), fontsize=10)

    def file_name(base, group):
        return f"{base}__{group}" if group else base

    for g in grid:
        pos, categorical = positions(g)
        others = [o for o in grid if o["key"] != g["key"]]
        order = [sort_key(o["values"]) for o in others]
        for group, ms in figures:
            fig, axes = grid_axes(len(ms), 5.0, 3.6)
            suptitle(fig, f"kvtier sweep {sweep}: " + (f"{group} metrics" if group else "metrics")
                     + f" against {g['key']}{failed_note}")
            for mi, (a, m) in enumerate(zip(axes, ms)):
                a.set_gid(f"panel{mi}")
                const = constant_of(values[m])
                panel_title(a, m, about, const)
                a.set_xlabel(key_label(g), fontsize=7)
                a.tick_params(labelsize=7)
                if not values[m]:
                    show_na(a)
                    continue
                lines = {}
                for r in ok:
                    y = number(r[m])
                    if y is not None:
                        lines.setdefault(tuple(r[o["key"]] for o in others), []).append((pos[r[g["key"]]], y))
                for other in sorted(lines, key=lambda t: tuple(f(v) for f, v in zip(order, t))):
                    pts = sorted(lines[other])
                    name = ", ".join(f"{o['key']}={v}" for o, v in zip(others, other)) or None
                    a.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
                if categorical:
                    a.set_xticks(list(pos.values()), list(pos.keys()))
                a.set_ylabel(unit_of(about, m) or m, fontsize=7)
                if const is not None:
                    show_constant(a, const)
                else:
                    a.ticklabel_format(axis="y", useOffset=False)
            # The legend once a figure, on its first panel with lines.
            for a in axes:
                if others and a.get_lines() and len(a.get_lines()) <= 12:
                    a.legend(fontsize=6)
                    break
            save(fig, out, file_name(f"vs_{g['key']}", group), formats)

    if len(grid) >= 2:
        gx, gy = grid[0], grid[1]
        rest = keys[2:]
        nx, ny = len(gx["values"]), len(gy["values"])
        annotate = nx <= 16 and ny <= 16
        cell_font = max(4, min(7, 48 / max(nx, ny)))
        for group, ms in figures:
            fig, axes = grid_axes(len(ms), 5.2, 4.0)
            suptitle(fig, f"kvtier sweep {sweep}: " + (f"{group} metrics" if group else "metrics")
                     + f" over {gx['key']} x {gy['key']}" + (f" (mean over {', '.join(rest)})" if rest else "")
                     + failed_note)
            for mi, (a, m) in enumerate(zip(axes, ms)):
                a.set_gid(f"panel{mi}")
                const = constant_of(values[m])
                panel_title(a, m, about, const)
                a.set_xlabel(key_label(gx), fontsize=7)
                a.set_ylabel(key_label(gy), fontsize=7)
                a.tick_params(labelsize=7)
                if not values[m]:
                    show_na(a)
                    continue
                cells = [[[] for _ in gx["values"]] for _ in gy["values"]]
                for r in ok:
                    y = number(r[m])
                    if y is not None:
                        cells[gy["values"].index(r[gy["key"]])][gx["values"].index(r[gx["key"]])].append(y)
                z = [[sum(c) / len(c) if c else float("nan") for c in row] for row in cells]
                im = a.imshow(z, origin="lower", aspect="auto", cmap="viridis")
                a.set_xticks(range(nx), gx["values"])
                a.set_yticks(range(ny), gy["values"])
                if const is None:  # a constant's one colour needs no scale: the title gives it
                    cb = fig.colorbar(im, ax=a)
                    cb.ax.tick_params(labelsize=6)
                    cb.formatter.set_useOffset(False)
                if not annotate:
                    continue
                for yi, row in enumerate(z):
                    for xi, v in enumerate(row):
                        if math.isnan(v):
                            a.text(xi, yi, "n/a", ha="center", va="center", fontsize=cell_font, color="0.5")
                            continue
                        r_, g_, b_, _ = im.cmap(im.norm(v))
                        dark = 0.299 * r_ + 0.587 * g_ + 0.114 * b_ < 0.5
                        a.text(xi, yi, fmt_value(v), ha="center", va="center", fontsize=cell_font,
                               color="white" if dark else "black")
            save(fig, out, file_name(f"heatmap_{gx['key']}__{gy['key']}", group), formats)


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line and exit 1, like every other error
        raise PlotError(f"{message} (usage: kvtier plot RUN_OR_SWEEP_DIR --out DIR [--format png,svg] "
                        f"[--metrics a,b,...])")


def is_float(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def plot_curves(src, out, formats):
    doc = load_json(src / "curves.json")
    curves = doc["curves"]
    if not curves:
        raise PlotError(f"{src / 'curves.json'}: no curve")
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    for c in curves:
        pts = c["points"]
        bw = [0.0] + [p["achieved_gbps"] for p in pts] + [c["saturation_gbps"]]
        lat = [c["idle_ns"]] + [p["mean_ns"] for p in pts] + [c["saturation_mean_ns"]]
        line, = ax.plot(bw, lat, marker=".", label=f"{c['read_percent']} % reads")
        ax.plot([c["saturation_gbps"]], [c["saturation_mean_ns"]], marker="o", markersize=8,
                markerfacecolor="none", color=line.get_color())
    dev = doc["device"]
    limit = (f"device {dev['banks']} banks, {dev['read_gbps']:g} GB/s read, {dev['write_gbps']:g} GB/s write"
             if dev["read_gbps"] > 0 or dev["write_gbps"] > 0 else "device without a bandwidth limit")
    ax.set_title(f"{doc['link']} ({doc['protocol']} x{doc['lanes']}): {limit}", fontsize=10)
    ax.set_xlabel("achieved bandwidth, GB/s (reads + writes)")
    ax.set_ylabel("mean load-to-use latency, ns")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.text(0.01, -0.02, "kvtier link-study --curves; circles: closed-loop saturation "
             "(latency = lines in flight / bandwidth)", fontsize=7)
    save(fig, out, "bwlat", formats)


def main(argv):
    p = Parser(prog="kvtier plot", description=__doc__.split("\n\n")[0])
    p.add_argument("dir", help="a run folder (stats.json), a sweep folder (sweep.json) or a link-study "
                               "curves folder (curves.json)")
    p.add_argument("--out", required=True, help="folder for the figures (created if missing)")
    p.add_argument("--format", default="png,svg", help="comma-separated: png, svg, pdf")
    p.add_argument("--metrics", default=None,
                   help="comma-separated results.csv columns (a sweep only); default: the headline metrics "
                        "in groups (latency, cache, constraints)")
    a = p.parse_args(argv)
    global SOURCE
    src = SOURCE = pathlib.Path(a.dir)
    out = pathlib.Path(a.out)
    formats = [f.strip() for f in a.format.split(",") if f.strip()]
    if not formats:
        raise PlotError(f"--format '{a.format}' names no format: give png, svg or pdf (comma-separated)")
    for f in formats:
        if f not in ("png", "svg", "pdf"):
            raise PlotError(f"--format '{f}' is not png, svg or pdf")
    metrics = None
    if a.metrics is not None:
        metrics = [m.strip() for m in a.metrics.split(",") if m.strip()]
        if not metrics:
            raise PlotError(f"--metrics '{a.metrics}' names no metric")
    if not src.is_dir():
        raise PlotError(f"{src} is not a folder (a run's or a sweep's --out)")
    if (src / "sweep.json").exists():
        kind = "sweep"
    elif (src / "stats.json").exists():
        kind = "run"
        if metrics is not None:
            raise PlotError(f"--metrics selects results.csv columns of a sweep; {src} is a run, whose "
                            f"dashboard has no metric choice")
    elif (src / "curves.json").exists():
        kind = "curves"
        if metrics is not None:
            raise PlotError(f"--metrics selects results.csv columns of a sweep; {src} holds link-study "
                            f"curves")
    else:
        raise PlotError(f"{src} holds neither sweep.json (a sweep), stats.json (a run) nor curves.json "
                        f"(link-study --curves)")
    prepare_out(out)
    load_matplotlib()
    if kind == "sweep":
        plot_sweep(src, out, formats, metrics)
    elif kind == "curves":
        plot_curves(src, out, formats)
    else:
        plot_run(src, out, formats)


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except PlotError as e:
        print(f"kvtier plot: {e}", file=sys.stderr)
        sys.exit(1)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
        # A stats.json, series.json, sweep.json or results.csv that parses but lacks what kvtier
        # writes (another version, or edited by hand).
        print(f"kvtier plot: {SOURCE}: a file is not as this kvtier writes it ({type(e).__name__}: {e})",
              file=sys.stderr)
        sys.exit(1)
