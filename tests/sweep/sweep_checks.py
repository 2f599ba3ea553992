#!/usr/bin/env python3
"""Checks of `kvtier sweep` with the local backend: the grid, the point folders, results.csv
against points run by hand, --zip, validation, failures, resume, --jobs independence and the
progress display.

Usage: sweep_checks.py KVTIER CHECK
"""
import csv
import io
import json
import os
import pathlib
import pty
import select
import shutil
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
GRID = HERE / "grid_3x3.ini"
# Few requests: each point runs in well under a second.
WORKLOAD = "synthetic:sessions=12"
BUDGETS = ["1", "2", "4"]
LANES = ["4", "8", "16"]


def run(*args, **kw):
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, **kw)


def expect(cond, message):
    if not cond:
        print("FAILED:", message)
        sys.exit(1)


def sweep(kvtier, platform, out, *extra):
    return run(kvtier, "sweep", platform, "--workload", WORKLOAD, "--out", out, *extra)


def rows_of(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def scalars(obj, prefix=""):
    """The dotted scalars of a stats.json, as results.csv has them (no wall-clock ones, and of
    `about` only the top-level keys' descriptions: a nested key's is text, one per key)."""
    out = {}
    for k, v in obj.items():
        name = f"{prefix}.{k}" if prefix else k
        if prefix == "about" and "." in k:
            continue
        if isinstance(v, dict):
            out.update(scalars(v, name))
        elif isinstance(v, list) or "wall" in k:
            continue
        elif v is None:
            out[name] = ""
        elif isinstance(v, bool):
            out[name] = "true" if v else "false"
        else:
            out[name] = v
    return out


def write(path, text):
    path.write_text(text)
    return path


def check_grid_3x3(kvtier):
    with tempfile.TemporaryDirectory() as d:
        out = pathlib.Path(d) / "s"
        p = sweep(kvtier, GRID, out, "--jobs", "2")
        expect(p.returncode == 0, f"sweep exited {p.returncode}: {p.stderr}")
        expect("9 of 9 points succeeded, 0 failed" in p.stdout, p.stdout)
        rows = rows_of(out / "results.csv")
        expect(len(rows) == 9, f"{len(rows)} rows, expected 9")
        header = (out / "results.csv").read_text().splitlines()[0].split(",")
        expect(header[:4] == ["point", "hbm.kv_budget_gib", "link.lanes", "status"], f"header {header[:4]}")
        expect(header[-1] == "error", "the last column is not error")
        expect("wall_time_s" not in header, "results.csv holds a wall-clock column")
        # Cartesian product, the last key fastest.
        expected = [(b, l) for b in BUDGETS for l in LANES]
        got = [(r["hbm.kv_budget_gib"], r["link.lanes"]) for r in rows]
        expect(got == expected, f"point order {got}")
        expect(all(r["status"] == "ok" and r["error"] == "" for r in rows), "a point is not ok")
        record = json.loads((out / "sweep.json").read_text())
        expect([g["key"] for g in record["grid"]] == ["hbm.kv_budget_gib", "link.lanes"], "sweep.json grid keys")
        expect(record["grid"][0]["values"] == BUDGETS and record["grid"][1]["values"] == LANES, "sweep.json grid values")
        expect(record["seeds"] == [1] * 9, f"sweep.json seeds {record['seeds']}")
        expect(len(record["points"]) == 9, "sweep.json points")
        for i, (b, l) in enumerate(expected):
            pdir = out / "points" / f"{i:04d}"
            for f in ("stats.json", "requests.jsonl", "log", "status.json"):
                expect((pdir / f).is_file(), f"{pdir / f} missing")
            cmd = record["points"][i]["command"]
            expect(f"hbm.kv_budget_gib={b}" in cmd and f"link.lanes={l}" in cmd, f"point {i} command {cmd}")
            expect(cmd[cmd.index("--out") + 1] == str(pdir), f"point {i} writes elsewhere: {cmd}")
        # Each row against the point run by hand, outside the sweep.
        for i in (0, 5, 8):
            b, l = expected[i]
            hand = pathlib.Path(d) / f"hand{i}"
            h = run(kvtier, "run", "--platform", GRID, "--workload", WORKLOAD, "--set", f"hbm.kv_budget_gib={b}",
                    "--set", f"link.lanes={l}", "--out", hand)
            expect(h.returncode == 0, h.stderr)
            want = scalars(json.loads((hand / "stats.json").read_text()))
            for k, v in want.items():
                expect(k in rows[i], f"results.csv lacks column {k}")
                expect(str(v) == rows[i][k] or float(v) == float(rows[i][k]), f"point {i} {k}: csv {rows[i][k]} run {v}")
        # Independent of the table: the HBM budget in blocks scales with hbm.kv_budget_gib, and the
        # workload (same seed) is the same at every point.
        budget = {r["hbm.kv_budget_gib"]: int(r["blocks.budget"]) for r in rows}
        expect(abs(budget["2"] - 2 * budget["1"]) <= 1 and abs(budget["4"] - 2 * budget["2"]) <= 1, f"budgets {budget}")
        offered = {int(r["requests_completed"]) + int(r["requests_rejected"]) for r in rows}
        expect(len(offered) == 1, f"the points ran different workloads: {offered}")
        # The tier is used, and a narrower link is busier moving the same blocks.
        expect(all(int(r["promotions"]) > 0 for r in rows), "a point never promoted")
        for b in BUDGETS:
            busy = [float(r["link_busy_s.upstream"]) + float(r["link_busy_s.downstream"]) for r in rows
                    if r["hbm.kv_budget_gib"] == b]
            expect(busy[0] > busy[1] > busy[2], f"link busy time over lanes 4, 8, 16 at {b} GiB: {busy}")


def check_jobs_independent(kvtier):
    with tempfile.TemporaryDirectory() as d:
        a = sweep(kvtier, GRID, f"{d}/a", "--jobs", "1")
        b = sweep(kvtier, GRID, f"{d}/b", "--jobs", "3")
        expect(a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr)
        ta = pathlib.Path(f"{d}/a/results.csv").read_text()
        tb = pathlib.Path(f"{d}/b/results.csv").read_text()
        expect(ta == tb, "results.csv differs between --jobs 1 and --jobs 3")


def check_zip(kvtier):
    with tempfile.TemporaryDirectory() as d:
        p = sweep(kvtier, GRID, f"{d}/z", "--zip", "--jobs", "2")
        expect(p.returncode == 0, p.stderr)
        rows = rows_of(f"{d}/z/results.csv")
        got = [(r["hbm.kv_budget_gib"], r["link.lanes"]) for r in rows]
        expect(got == list(zip(BUDGETS, LANES)), f"zipped points {got}")
        bad = write(pathlib.Path(d) / "uneven.ini", "include = h200-cxl2-x16\n[sweep]\nhbm.kv_budget_gib = 2, 4\nlink.lanes = 4, 8, 16\n")
        p = sweep(kvtier, bad, f"{d}/u", "--zip")
        expect(p.returncode == 125, f"uneven --zip exited {p.returncode}")
        expect("'link.lanes' has 3 values and 'hbm.kv_budget_gib' has 2" in p.stderr and "uneven.ini:4" in p.stderr, p.stderr)


def check_invalid_points(kvtier):
    with tempfile.TemporaryDirectory() as d:
        cases = [
            # value outside its declared range: named with key and value, before anything runs
            ("[sweep]\nhbm.kv_budget_gib = 2, 20000\n", ["point 0001 (hbm.kv_budget_gib = 20000): ",
                                                       "bad.ini:3: [sweep] key 'hbm.kv_budget_gib' = 20000 is outside the allowed range"]),
            # in range, but the platform's cross-key check fails (KV budget larger than HBM)
            ("[sweep]\nhbm.kv_budget_gib = 2, 500\n", ["point 0001 (hbm.kv_budget_gib = 500)", "exceed hbm.capacity_gb"]),
            ("[sweep]\nlink.protocol = cxl2, cxl9\n", ["point 0001 (link.protocol = cxl9)", "'cxl9' is not one of"]),
            ("[sweep]\nhbm.kv_budget_gb = 2, 4\n", ["bad.ini:3: [sweep] unknown key 'hbm.kv_budget_gb'"]),
            ("[sweep]\nseed = 1, x\n", ["point 0001 (seed = x)", "'seed' = 'x' is not a whole number"]),
            ("[sweep]\nhbm.kv_budget_gib = 2,,4\n", ["bad.ini:3: [sweep] key 'hbm.kv_budget_gib' has an empty value"]),
            ("[sweep]\nhbm.kv_budget_gib\n", ["bad.ini:3: [sweep] line 'hbm.kv_budget_gib' is not KEY = V1, V2"]),
            ("[sweep]\n", ["the [sweep] section declares no key"]),
            ("[hbm]\nkv_budget_gib = 4\n", ["has no [sweep] section"]),
            ("[sweep]\nworkload.spec = synthetic:sessions=2, nosuchkind:x\n", ["point 0001", "workload error", "unknown kind"]),
        ]
        for i, (body, needles) in enumerate(cases):
            f = write(pathlib.Path(d) / "bad.ini", "include = h200-cxl2-x16\n" + body)
            out = pathlib.Path(d) / f"o{i}"
            p = run(kvtier, "sweep", f, "--out", out)
            expect(p.returncode == 125, f"case {i} exited {p.returncode}: {p.stderr}")
            for n in needles:
                expect(n in p.stderr, f"case {i}: stderr lacks '{n}': {p.stderr}")
            expect(not (out / "points").exists(), f"case {i}: points ran despite an invalid point")
        p = run(kvtier, "sweep", GRID, "--out", f"{d}/x", "--set", "link.lanes=8")
        expect(p.returncode == 125 and "is also set with --set link.lanes=8" in p.stderr, p.stderr)
        p = run(kvtier, "sweep", GRID)
        expect(p.returncode == 125 and "--out DIR is required" in p.stderr, p.stderr)
        p = run(kvtier, "sweep", GRID, "--out", f"{d}/y", "--backend", "pbs")
        expect(p.returncode == 125 and "--backend must be local or slurm" in p.stderr, p.stderr)
        p = run(kvtier, "sweep", f"{d}/missing.ini", "--out", f"{d}/y")
        expect(p.returncode == 125 and "cannot open platform file" in p.stderr, p.stderr)


def check_failure_and_resume(kvtier):
    with tempfile.TemporaryDirectory() as d:
        out = pathlib.Path(d) / "s"
        # Point 4 cannot write its requests.jsonl (a folder with a file in it holds the name):
        # its run fails after validation, and the other points go on.
        blocker = out / "points" / "0004" / "requests.jsonl"
        blocker.mkdir(parents=True)
        (blocker / "keep").write_text("x")
        p = sweep(kvtier, GRID, out, "--jobs", "2")
        expect(p.returncode == 1, f"one failed point: exit {p.returncode}, expected 1: {p.stderr}")
        expect("8 of 9 points succeeded, 1 failed" in p.stdout, p.stdout)
        rows = rows_of(out / "results.csv")
        expect([r["status"] for r in rows] == ["ok"] * 4 + ["failed"] + ["ok"] * 4, [r["status"] for r in rows])
        expect("cannot write" in rows[4]["error"] and "requests.jsonl" in rows[4]["error"], rows[4]["error"])
        expect(rows[4]["requests_completed"] == "", "a failed point has metrics")
        status = json.loads((out / "points" / "0004" / "status.json").read_text())
        expect(status["ok"] is False and status["exit_status"] == 1, status)
        expect("point 0004 FAILED" in p.stderr, p.stderr)
        kept = {i: (out / "points" / f"{i:04d}" / "stats.json").stat().st_mtime_ns for i in range(9) if i != 4}
        # Resume: only point 4 runs again.
        shutil.rmtree(blocker)
        p = sweep(kvtier, GRID, out, "--jobs", "2")
        expect(p.returncode == 0, f"resume exited {p.returncode}: {p.stderr}")
        expect("8 already finished, 1 to run" in p.stdout, p.stdout)
        for i, t in kept.items():
            expect((out / "points" / f"{i:04d}" / "stats.json").stat().st_mtime_ns == t, f"point {i} ran again")
        rows = rows_of(out / "results.csv")
        expect(all(r["status"] == "ok" for r in rows), "a point failed after resume")
        # Nothing left to do: a third run keeps everything.
        p = sweep(kvtier, GRID, out)
        expect(p.returncode == 0 and "9 already finished, 0 to run" in p.stdout, p.stdout)
        # The same folder with another grid is refused.
        p = sweep(kvtier, GRID, out, "--zip")
        expect(p.returncode == 125 and "holds a different sweep" in p.stderr, p.stderr)


def check_seed_axis(kvtier):
    with tempfile.TemporaryDirectory() as d:
        f = write(pathlib.Path(d) / "seeds.ini", "include = h200-cxl2-x16\n[sweep]\nseed = 3, 4, 3\n")
        p = run(kvtier, "sweep", f, "--workload", "synthetic:sessions=6", "--out", f"{d}/s")
        expect(p.returncode == 0, p.stderr)
        record = json.loads(pathlib.Path(f"{d}/s/sweep.json").read_text())
        expect(record["seeds"] == [3, 4, 3], f"seeds {record['seeds']}")
        rows = rows_of(f"{d}/s/results.csv")
        expect([r["seed"] for r in rows] == ["3", "4", "3"], "seed column")
        same = {k: v for k, v in rows[0].items() if k != "point"} == {k: v for k, v in rows[2].items() if k != "point"}
        expect(same, "the same seed gave different results")


def check_progress_plain(kvtier):
    with tempfile.TemporaryDirectory() as d:
        p = sweep(kvtier, GRID, f"{d}/s", "--jobs", "2", "--zip")
        expect(p.returncode == 0, p.stderr)
        lines = [l for l in p.stderr.splitlines() if l.startswith("sweep: point ")]
        expect(len(lines) == 3, f"plain progress lines: {p.stderr}")
        expect("(3/3 done, 0 running, 0 failed)" in lines[-1], lines[-1])


def check_progress_tty(kvtier):
    with tempfile.TemporaryDirectory() as d:
        argv = [str(kvtier), "sweep", str(GRID), "--workload", WORKLOAD, "--out", f"{d}/s", "--jobs", "2"]
        pid, fd = pty.fork()
        if pid == 0:
            os.execv(argv[0], argv)
        text = b""
        while True:
            r, _, _ = select.select([fd], [], [], 60)
            if not r:
                break
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            text += chunk
        _, status = os.waitpid(pid, 0)
        out = text.decode(errors="replace")
        expect(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, f"tty sweep failed: {out}")
        expect("\r[" in out and "] 9/9 done, 0 running, 0 failed" in out, f"no progress bar: {out!r}")
        expect("running" in out and "ETA " in out, f"no running count or ETA: {out!r}")


if __name__ == "__main__":
    kvtier, check = sys.argv[1], sys.argv[2]
    globals()["check_" + check](pathlib.Path(kvtier).resolve())
    print("ok:", check)
