#!/usr/bin/env python3
"""Checks of series.json (`kvtier run --out`) against the constraint report, and of
`kvtier plot` on a run folder and on a sweep folder: PNG and SVG written, axes labelled with
units, bad input refused.

Usage: plot_checks.py KVTIER CHECK
"""
import json
import pathlib
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
        # Errors: not a run or sweep, an unknown metric, an unknown format.
        empty = pathlib.Path(d) / "empty"
        empty.mkdir()
        for args, needle in [([empty, "--out", figs], "holds neither sweep.json"),
                             ([src, "--out", figs, "--metrics", "no_such_metric"], "'no_such_metric' is not a column"),
                             ([src, "--out", figs, "--format", "bmp"], "'bmp' is not png, svg or pdf"),
                             ([src], "--out")]:
            p = run(kvtier, "plot", *args)
            expect(p.returncode != 0 and needle in p.stderr, f"{args}: exit {p.returncode}, stderr {p.stderr}")


if __name__ == "__main__":
    kvtier, check = sys.argv[1], sys.argv[2]
    globals()["check_" + check](pathlib.Path(kvtier).resolve())
    print("ok:", check)
