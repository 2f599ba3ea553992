#!/usr/bin/env python3
"""Checks of series.json (`kvtier run --out`) against the constraint report, and of
`kvtier plot` on a run folder, on a sweep folder and on link-study curves: PNG and SVG written, axes labelled with
units; a sweep's figures of at most 6 panels, one per metric group, lines in numeric order,
constant metrics titled "constant", metrics with no value "n/a", heat-map cells with their
values; bad input refused with one line and exit 1, never a traceback.

Usage: plot_checks.py KVTIER CHECK
"""
import csv
import json
import os
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from sweep_checks import GRID, WORKLOAD, expect, run  # noqa: E402


def png_size(path):
    data = pathlib.Path(path).read_bytes()
    expect(data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG")
    w, h = struct.unpack(">II", data[16:24])
    return w, h


def svg_texts(path):
    root = ET.parse(path).getroot()
    return [t.text or "" for t in root.iter() if t.tag.endswith("text")] + \
           ["".join(t.itertext()) for t in root.iter() if t.tag.endswith("text")]


def svg_text_list(path):
    """The texts of an SVG in document order (a legend's entries top to bottom)."""
    return ["".join(t.itertext()) for t in ET.parse(path).getroot().iter() if t.tag.endswith("text")]


def svg_panels(path):
    """The panels of a sweep figure: the script names each one's group panelN."""
    return [e for e in ET.parse(path).getroot().iter() if re.fullmatch(r"panel\d+", e.get("id", ""))]


def expect_refused(p, needle, what):
    """An error: exit 1, one line `kvtier plot: ...` naming it, no Python traceback."""
    err = p.stderr.strip()
    expect(p.returncode == 1 and "Traceback" not in p.stderr and len(err.splitlines()) == 1
           and err.startswith("kvtier plot: ") and needle in err, f"{what}: exit {p.returncode}, stderr {p.stderr}")


def one_run(kvtier, d):
    out = pathlib.Path(d) / "run"
    p = run(kvtier, "run", "--workload", WORKLOAD, "--set", "hbm.kv_budget_gib=2", "--set", "link.lanes=4", "--out", out)
    expect(p.returncode == 0, p.stderr)
    return out


def check_series(kvtier):
    with tempfile.TemporaryDirectory() as d:
        out = one_run(kvtier, d)
        s = json.loads((out / "stats.json").read_text())
        j = json.loads((out / "series.json").read_text())
        c = s["constraints"]
        n = c["sustainability"]["windows"]
        expect(len(j["hbm_kv_occupancy"]) == n and len(j["demand_to_hbm_bytes_per_s"]) == n, "series length")
        # The per-window occupancy integrates to the run's time-weighted occupancy.
        tw = sum(j["hbm_kv_occupancy"]) * j["window_s"] / s["sim_time_s"]
        expect(abs(tw - c["capacity"]["time_weighted_occupancy"]) < 1e-9, f"occupancy {tw} vs {c['capacity']}")
        expect(all(0 <= x <= 1 + 1e-12 for x in j["hbm_kv_occupancy"]), "occupancy outside [0, 1]")
        expect(max(j["demand_to_hbm_bytes_per_s"]) == c["sustainability"]["peak_demand_to_hbm_bytes_per_s"], "peak to HBM")
        expect(max(j["demand_to_tier_bytes_per_s"]) == c["sustainability"]["peak_demand_to_tier_bytes_per_s"], "peak to tier")
        mean = sum(j["demand_to_hbm_bytes_per_s"]) / n
        expect(abs(mean - c["sustainability"]["mean_demand_to_hbm_bytes_per_s"]) <= 1e-9 * mean, "mean to HBM")
        expect(j["b_tier_bytes_per_s"] == c["sustainability"]["b_tier_bytes_per_s"], "B_tier")
        h = j["hiding"]
        expect(sum(h["lateness_counts"]) == c["hiding"]["missed"] > 0, f"missed {sum(h['lateness_counts'])}")
        expect(h["on_time"] == c["hiding"]["transfers"] - c["hiding"]["missed"], "on time")
        edges = h["lateness_bin_edges_s"]
        expect(len(edges) == len(h["lateness_counts"]) + 1 and edges == sorted(edges), "bin edges")
        # The largest lateness falls in the last occupied bin.
        last = max(i for i, k in enumerate(h["lateness_counts"]) if k)
        expect(edges[last] <= c["hiding"]["lateness_max_s"] < edges[last + 1], "max lateness outside its bin")


def check_plot_run(kvtier):
    with tempfile.TemporaryDirectory() as d:
        src = one_run(kvtier, d)
        figs = pathlib.Path(d) / "figs"
        p = run(kvtier, "plot", src, "--out", figs)
        expect(p.returncode == 0, p.stderr)
        w, h = png_size(figs / "dashboard.png")
        expect(w > 1000 and h > 600, f"dashboard.png is {w}x{h}")
        texts = " | ".join(svg_texts(figs / "dashboard.svg"))
        for needle in ["CAPACITY", "SUSTAINABILITY", "HIDING", "TTFT per tenant", "ITL per tenant", "simulated time (s)",
                       "boundary KV demand per 1 s window (GB/s)", "lateness of a missed transfer (s)", "B_tier",
                       "time to first token (s)", "tenant 0"]:
            expect(needle in texts, f"dashboard.svg lacks '{needle}'")
        # A run has one value per metric: --metrics is refused, not ignored.
        p = run(kvtier, "plot", src, "--out", figs, "--metrics", "ttft_p99_s")
        expect_refused(p, "--metrics selects results.csv columns of a sweep", "--metrics on a run")
        # --out that is a file, or below one.
        afile = pathlib.Path(d) / "afile"
        afile.write_text("x")
        p = run(kvtier, "plot", src, "--out", afile)
        expect_refused(p, "is a file, not a folder", "--out a file")
        p = run(kvtier, "plot", src, "--out", afile / "sub")
        expect_refused(p, "cannot create the folder", "--out below a file")
        p = run(kvtier, "plot", src, "--out", figs, "--format", "")
        expect_refused(p, "names no format", "an empty --format")
        # Files that are not JSON, or not as kvtier writes them.
        for name, text, needle in [("stats.json", "{", "not JSON"), ("stats.json", "{}", "not as this kvtier writes it"),
                                   ("series.json", "[1,", "not JSON"), ("requests.jsonl", "{\n", "not JSON")]:
            bad = pathlib.Path(d) / "bad"
            shutil.rmtree(bad, ignore_errors=True)
            shutil.copytree(src, bad)
            (bad / name).write_text(text)
            p = run(kvtier, "plot", bad, "--out", figs)
            expect_refused(p, needle, f"{name} = {text!r}")
        # No matplotlib for the interpreter: a module of that name that fails to import.
        shim = pathlib.Path(d) / "shim"
        shim.mkdir()
        (shim / "matplotlib.py").write_text("raise ImportError(\"No module named 'matplotlib'\")\n")
        p = run(kvtier, "plot", src, "--out", figs, env=dict(os.environ, PYTHONPATH=str(shim)))
        expect_refused(p, "python3-matplotlib", "no matplotlib")


def check_plot_sweep(kvtier):
    with tempfile.TemporaryDirectory() as d:
        src = pathlib.Path(d) / "sweep"
        p = run(kvtier, "sweep", GRID, "--workload", WORKLOAD, "--out", src, "--jobs", "2")
        expect(p.returncode == 0, p.stderr)
        figs = pathlib.Path(d) / "figs"
        p = run(kvtier, "plot", src, "--out", figs, "--metrics", "ttft_p99_s,promotions,hiding_met_fraction")
        expect(p.returncode == 0, p.stderr)
        budget_label, lanes_label = "hbm.kv_budget_gib (HBM reserved for KV blocks, GiB)", "link.lanes (lanes)"
        for name, key_labels in [("vs_hbm.kv_budget_gib", [budget_label]), ("vs_link.lanes", [lanes_label]),
                                 ("heatmap_hbm.kv_budget_gib__link.lanes", [budget_label, lanes_label])]:
            png_size(figs / f"{name}.png")
            texts = " | ".join(svg_texts(figs / f"{name}.svg"))
            for needle in ["ttft_p99_s (s)", "promotions (blocks)", "hiding_met_fraction (fraction)"]:
                expect(needle in texts, f"{name}.svg lacks '{needle}'")
            for k in key_labels:
                expect(k in texts, f"{name}.svg lacks the axis label '{k}'")
        texts = " | ".join(svg_texts(figs / "vs_link.lanes.svg"))
        expect("hbm.kv_budget_gib=1" in texts and "hbm.kv_budget_gib=4" in texts, "vs_link.lanes: no line per budget")
        # Lines in numeric order of the other key: lanes 4, 8, 16 (not 16, 4, 8).
        texts = svg_text_list(figs / "vs_hbm.kv_budget_gib.svg")
        order = [texts.index(f"link.lanes={v}") if f"link.lanes={v}" in texts else -1 for v in ["4", "8", "16"]]
        expect(-1 not in order and order == sorted(order), f"vs_hbm.kv_budget_gib: legend order {order}")

        # The default: the headline metrics in groups, one figure per group, at most 6 panels each.
        default = pathlib.Path(d) / "default"
        p = run(kvtier, "plot", src, "--out", default)
        expect(p.returncode == 0, p.stderr)
        groups = ["latency", "cache", "constraints"]
        names = [f"vs_{k}__{g}" for k in ["hbm.kv_budget_gib", "link.lanes"] for g in groups] + \
                [f"heatmap_hbm.kv_budget_gib__link.lanes__{g}" for g in groups]
        written = sorted(f.name for f in default.iterdir())
        expect(written == sorted(f"{n}.{x}" for n in names for x in ["png", "svg"]), f"default figures {written}")
        for n in names:
            panels = svg_panels(default / f"{n}.svg")
            expect(1 <= len(panels) <= 6, f"{n}: {len(panels)} panels")
            w, h = png_size(default / f"{n}.png")
            expect(800 <= w <= 2400 and 400 <= h <= 1400, f"{n}.png is {w}x{h}")
        for n, needle in [("vs_link.lanes__latency", "ttft_p99_s (s)"), ("vs_link.lanes__cache", "hit_rate (fraction)"),
                          ("vs_link.lanes__constraints", "hiding_met_fraction (fraction)")]:
            expect(needle in svg_text_list(default / f"{n}.svg"), f"{n}.svg lacks '{needle}'")

        # A constant metric (equal up to float rounding) and one with no value at any point, in a
        # copy of the sweep whose results.csv says so.
        edited = pathlib.Path(d) / "edited"
        shutil.copytree(src, edited)
        with open(edited / "results.csv", newline="") as f:
            rows = list(csv.DictReader(f))
        for i, r in enumerate(rows):
            r["promotions"] = "0.3" if i % 2 else repr(0.1 + 0.2)
            r["hit_rate"] = ""
        with open(edited / "results.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)
        figs = pathlib.Path(d) / "edited-figs"
        p = run(kvtier, "plot", edited, "--out", figs, "--metrics", "promotions,hit_rate,ttft_p99_s", "--format", "svg")
        expect(p.returncode == 0, p.stderr)
        ttft = {f"{float(r['ttft_p99_s']):.4g}" for r in rows}
        for name in ["vs_hbm.kv_budget_gib", "vs_link.lanes", "heatmap_hbm.kv_budget_gib__link.lanes"]:
            texts = svg_text_list(figs / f"{name}.svg")
            expect(any("constant: 0.3" in t for t in texts), f"{name}.svg: no 'constant: 0.3'")
            expect(sum("n/a (no value at any point)" in t for t in texts) == 1, f"{name}.svg: hit_rate not n/a")
            # The title names the sweep's folder, a temporary one whose random name may read as
            # a number with an exponent ("tmpep03e6pj"): only the other texts are ticks.
            noise = [t for t in texts if d not in t and re.search(r"\de[-\u2212+]?\d|\u00d710", t)]
            expect(not noise, f"{name}.svg: offset or scientific tick text {noise}")
        # The heat map writes each cell's value.
        texts = svg_text_list(figs / "heatmap_hbm.kv_budget_gib__link.lanes.svg")
        missing = [v for v in ttft if v not in texts]
        expect(not missing, f"heat map cells lack the ttft_p99_s values {missing}")
        # Errors: not a run or sweep, an unknown metric, an unknown format.
        empty = pathlib.Path(d) / "empty"
        empty.mkdir()
        for args, needle in [([empty, "--out", figs], "holds neither sweep.json"),
                             ([src, "--out", figs, "--metrics", "no_such_metric"], "'no_such_metric' is not a column"),
                             ([src, "--out", figs, "--format", "bmp"], "'bmp' is not png, svg or pdf"),
                             ([src, "--out", figs, "--format", ","], "names no format"),
                             ([src, "--out", figs, "--metrics", "provenance.platform"], "is not numeric"),
                             ([src], "--out")]:
            p = run(kvtier, "plot", *args)
            expect_refused(p, needle, args)
        # A results.csv or sweep.json that is not what kvtier writes.
        for name, text, needle in [("results.csv", "a,b\n1,2\n", "no column 'point'"),
                                   ("sweep.json", "{", "not JSON"), ("sweep.json", "[]", "not as this kvtier writes it")]:
            bad = pathlib.Path(d) / "bad"
            shutil.rmtree(bad, ignore_errors=True)
            shutil.copytree(src, bad)
            (bad / name).write_text(text)
            p = run(kvtier, "plot", bad, "--out", figs)
            expect_refused(p, needle, f"{name} = {text!r}")


def check_plot_curves(kvtier):
    """link-study --curves: one bwlat_<pct>.txt per read percentage (MB/s and ns, rising
    bandwidth, idle first, the device's saturation last) and the figure with one line each."""
    with tempfile.TemporaryDirectory() as d:
        src = pathlib.Path(d) / "curves"
        p = run(kvtier, "link-study", "--preset", "cxl2-x8", "--sizes", "64", "--transactions", "2000",
                "--metadata-rate", "1e6", "--bulk-bytes", "2097152", "--outstanding", "320",
                "--device-read-gbps", "21.4", "--device-write-gbps", "23", "--read-fractions", "100,50",
                "--curves", src)
        expect(p.returncode == 0, p.stderr)
        for pct in (100, 50):
            rows = [tuple(map(float, line.split())) for line in (src / f"bwlat_{pct}.txt").read_text().splitlines()]
            expect(all(len(r) == 2 for r in rows) and len(rows) >= 10, f"bwlat_{pct}.txt: {rows}")
            bws = [r[0] for r in rows]
            lats = [r[1] for r in rows]
            expect(bws[0] == 0 and all(a < b for a, b in zip(bws, bws[1:])), f"bwlat_{pct}.txt bandwidths {bws}")
            # The device saturates near its 21.4 GB/s (MB/s here) and latency rises towards it.
            expect(19000 < bws[-1] < 23000, f"bwlat_{pct}.txt saturates at {bws[-1]} MB/s")
            expect(lats[-1] > 2 * lats[0] and lats[-2] > lats[1], f"bwlat_{pct}.txt latencies {lats}")
        doc = json.loads((src / "curves.json").read_text())
        expect([c["read_percent"] for c in doc["curves"]] == [100, 50], str(doc["curves"]))
        figs = pathlib.Path(d) / "figs"
        p = run(kvtier, "plot", src, "--out", figs)
        expect(p.returncode == 0, p.stderr)
        w, h = png_size(figs / "bwlat.png")
        expect(w > 600 and h > 400, f"bwlat.png is {w}x{h}")
        texts = " | ".join(svg_texts(figs / "bwlat.svg"))
        for needle in ["100 % reads", "50 % reads", "achieved bandwidth, GB/s", "latency, ns", "20 banks"]:
            expect(needle in texts, f"bwlat.svg lacks '{needle}'")
        (src / "curves.json").write_text("{")
        p = run(kvtier, "plot", src, "--out", figs)
        expect_refused(p, "not JSON", "a broken curves.json")
        (src / "curves.json").write_text("{}")
        p = run(kvtier, "plot", src, "--out", figs)
        expect_refused(p, "not as this kvtier writes it", "an empty curves.json")


if __name__ == "__main__":
    kvtier, check = sys.argv[1], sys.argv[2]
    globals()["check_" + check](pathlib.Path(kvtier).resolve())
    print("ok:", check)
