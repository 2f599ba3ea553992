#!/usr/bin/env python3
"""Determinism and soak checks of the kvtier command (docs/reliability.md).

  determinism.py jobs KVTIER TRACE
      `kvtier experiment c1` with --jobs 1 and --jobs 2: the table and every simulation's
      stats.json (kept with --keep) must be bit-identical, wall time aside.
  determinism.py builds KVTIER_A KVTIER_B TRACE
      the same runs with two builds (release and asan): stats.json bit-identical, wall aside.
  determinism.py cluster KVTIER TRACE
      a cluster run whose routers read the replicas at each arrival (least_loaded and
      prefix_affinity, three replicas, the trace's first 150 requests), twice in two processes:
      every JSON file written (the cluster's and each replica's) and requests.jsonl
      bit-identical, wall time aside.
  determinism.py soak KVTIER TRACE LIMIT COPIES [--no-rss-bound]
      the first LIMIT requests of the Mooncake trace (0: all) written COPIES times back to back
      into one native workload (each copy shifted past the previous one, its sessions
      renumbered, its block keys the same, so later copies reuse what the first left in the
      cache), run in one process while its resident set is sampled; then run again in a second
      process. Prints peak RSS per half; fails when the two processes' stats.json differ, or
      when the second half's peak exceeds the first half's by more than 16 MiB + 5 % + 64 B per
      block reference of the second half (a referenced position counts once per layer group). The per-reference allowance is what the model keeps
      by design: the control plane records every block reference (16 B, in a vector that may
      double) for the offline-optimal bound computed at the end of the run, whose working set
      is about as large again. --no-rss-bound reports without the bound (sanitizer builds, whose
      allocator quarantine grows by design).
Exit status 0 when every check holds; a failed check prints why and exits 1.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def fail(why):
    print("FAIL: " + why)
    sys.exit(1)


def without_wall(x):
    """The JSON value with every key naming wall-clock time removed."""
    if isinstance(x, dict):
        return {k: without_wall(v) for k, v in x.items() if "wall" not in k}
    if isinstance(x, list):
        return [without_wall(v) for v in x]
    return x


def canonical(path):
    return json.dumps(without_wall(json.loads(Path(path).read_text())), sort_keys=True)


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        fail(f"{' '.join(map(str, cmd))} exited {p.returncode}:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return p


def compare_trees(a, b, what):
    files_a = sorted(p.relative_to(a) for p in Path(a).rglob("*.json"))
    files_b = sorted(p.relative_to(b) for p in Path(b).rglob("*.json"))
    if files_a != files_b:
        fail(f"{what}: different files: {files_a} vs {files_b}")
    if not files_a:
        fail(f"{what}: no stats.json written")
    for f in files_a:
        if canonical(Path(a) / f) != canonical(Path(b) / f):
            fail(f"{what}: {f} differs")
    return len(files_a)


def experiment(kvtier, trace, jobs, tmp):
    keep = Path(tmp) / f"keep-{jobs}"
    table = Path(tmp) / f"c1-{jobs}.json"
    # Four layer groups instead of C1's block per layer: the same streamed path at a twentieth of
    # the blocks, which keeps the test fast under the sanitizers.
    run([kvtier, "experiment", "c1", "--workload", f"mooncake:{trace},limit=300", "--loads", "1,2",
         "--set", "host.layer_groups=4", "--json", table, "--keep", keep, "--jobs", str(jobs)])
    return table, keep


def check_jobs(kvtier, trace):
    with tempfile.TemporaryDirectory() as tmp:
        t1, k1 = experiment(kvtier, trace, 1, tmp)
        t2, k2 = experiment(kvtier, trace, 2, tmp)
        if canonical(t1) != canonical(t2):
            fail("experiment c1 table differs between --jobs 1 and --jobs 2")
        n = compare_trees(k1, k2, "--jobs 1 vs --jobs 2")
        print(f"jobs: c1 table and {n} stats.json identical between --jobs 1 and --jobs 2 (wall time aside)")


def stats_of(kvtier, args, out):
    run([kvtier, "run", *args, "--out", out])
    return canonical(Path(out) / "stats.json")


def check_builds(kvtier_a, kvtier_b, trace):
    cases = [["--seed", "7"],
             ["--workload", f"mooncake:{trace},limit=400"],
             ["--workload", "synthetic:sessions=30,tenants=3", "--seed", "11", "--set", "ctrl.impl=rtl"]]
    with tempfile.TemporaryDirectory() as tmp:
        for i, args in enumerate(cases):
            a = stats_of(kvtier_a, args, Path(tmp) / f"a{i}")
            b = stats_of(kvtier_b, args, Path(tmp) / f"b{i}")
            if a != b:
                fail(f"kvtier run {' '.join(args)}: stats.json differs between {kvtier_a} and {kvtier_b}")
        print(f"builds: {len(cases)} runs bit-identical between {kvtier_a} and {kvtier_b} (wall time aside)")


def check_cluster(kvtier, trace):
    with tempfile.TemporaryDirectory() as tmp:
        n = 0
        for router in ("least_loaded", "prefix_affinity"):
            outs = []
            for k in range(2):
                out = Path(tmp) / f"{router}-{k}"
                run([kvtier, "run", "--quiet", "--workload", f"mooncake:{trace},limit=150",
                     "--set", "cluster.replicas=3", "--set", f"cluster.router={router}",
                     "--out", out])
                outs.append(out)
            n += compare_trees(outs[0], outs[1], f"cluster.router={router}, two processes")
            for f in sorted(p.relative_to(outs[0]) for p in outs[0].rglob("requests.jsonl")):
                if (outs[0] / f).read_bytes() != (outs[1] / f).read_bytes():
                    fail(f"cluster.router={router}: {f} differs between two processes")
        print(f"cluster: {n} JSON files and every requests.jsonl identical between two processes "
              "for least_loaded and prefix_affinity (wall time aside)")


def rss_kib(pid):
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return None


def sampled_run(cmd):
    """Runs cmd, sampling its resident set every 20 ms; returns [(t, kib)] and wall seconds."""
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    samples = []
    while p.poll() is None:
        kib = rss_kib(p.pid)
        if kib is not None:
            samples.append((time.monotonic() - start, kib))
        time.sleep(0.02)
    out, err = p.communicate()
    if p.returncode != 0:
        fail(f"{' '.join(map(str, cmd))} exited {p.returncode}:\n{out[-2000:]}\n{err[-2000:]}")
    return samples, time.monotonic() - start


def repeated_native(kvtier, trace, limit, copies, path):
    """The trace's first `limit` requests as a native workload, written `copies` times back to
    back; returns (requests, block references per copy)."""
    once = Path(str(path) + ".once")
    spec = f"mooncake:{trace}" + (f",limit={limit}" if limit else "")
    run([kvtier, "trace-stats", spec, "--write-native", once])
    lines = once.read_text().splitlines()
    header, requests = lines[0], [json.loads(l) for l in lines[1:]]
    # Copies are spaced by more than the default session lifetime (host.session_idle_s = 300 s):
    # each copy's sessions have ended, and their blocks are freed, before the next one starts.
    span = max(r["arrival_s"] for r in requests) + 360.0
    sessions = max(r["session"] for r in requests) + 1
    with open(path, "w") as f:
        f.write(header + "\n")
        for c in range(copies):
            for r in requests:
                s = dict(r)
                s["arrival_s"] = r["arrival_s"] + c * span
                s["session"] = r["session"] + c * sessions
                f.write(json.dumps(s, separators=(",", ":")) + "\n")
    block_tokens = json.loads(header)["block_tokens"]
    references = sum(len(r["prefix_hashes"]) + r["output_tokens"] // block_tokens + 1 for r in requests)
    return len(requests) * copies, references


def check_soak(kvtier, trace, limit, copies, rss_bound):
    with tempfile.TemporaryDirectory() as tmp:
        native = Path(tmp) / "repeated.jsonl"
        n, references = repeated_native(kvtier, trace, limit, copies, native)
        cmd = [kvtier, "run", "--workload", f"native:{native}"]
        samples, wall = sampled_run(cmd + ["--out", Path(tmp) / "first"])
        run(cmd + ["--out", Path(tmp) / "second"])
        a, b = canonical(Path(tmp) / "first" / "stats.json"), canonical(Path(tmp) / "second" / "stats.json")
        if a != b:
            fail("the soak run's stats.json differs between two processes")
        stats = json.loads((Path(tmp) / "first" / "stats.json").read_text())
        if len(samples) < 10:
            fail(f"only {len(samples)} RSS samples in {wall:.1f} s: the run is too short to judge growth")
        half = wall / 2
        first = max(k for t, k in samples if t < half)
        second = max(k for t, k in samples if t >= half)
        growth = second - first
        # The control plane records a reference per block, and a position has a block per layer
        # group (blocks.layer_groups; four on the default platform).
        groups = stats["blocks"]["layer_groups"]
        allowance = 16 * 1024 + 0.05 * first + 64 * references * groups * copies / 2 / 1024
        print(f"soak: {n} requests ({copies} copies of {limit or 'all'} requests of {Path(trace).name}), "
              f"{references * copies} positions referenced x {groups} layer groups, {wall:.1f} s wall, {len(samples)} RSS samples; "
              f"peak RSS first half {first / 1024:.1f} MiB, second half {second / 1024:.1f} MiB, "
              f"growth {growth / 1024:+.1f} MiB (bound {allowance / 1024:.1f} MiB); "
              f"{stats.get('requests_completed')} requests completed; stats.json identical across two processes")
        if rss_bound and growth > allowance:
            fail(f"resident set grew by {growth / 1024:.1f} MiB between the halves, more than the "
                 f"{allowance / 1024:.1f} MiB the reference log explains")


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "jobs":
        check_jobs(sys.argv[2], sys.argv[3])
    elif mode == "builds":
        check_builds(sys.argv[2], sys.argv[3], sys.argv[4])
    elif mode == "cluster":
        check_cluster(sys.argv[2], sys.argv[3])
    elif mode == "soak":
        check_soak(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), "--no-rss-bound" not in sys.argv[6:])
    else:
        fail(f"unknown mode '{mode}' (jobs, builds, soak)")
    print("ok")
