#!/usr/bin/env python3
"""A timeline is streamed to its file while the run goes: the run with --timeline needs at most
twice the peak RSS of the same run without one (it held every event as a JSON object: 7 GB for
the default run's 387 MB file), and the file is the one the in-memory writer gave (valid JSON,
the documented top-level keys, every event inside the window).
Usage: timeline_memory_check.py KVTIER WORKDIR"""
import json
import os
import resource
import subprocess
import sys

kvtier, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
args = [kvtier, "run", "--quiet", "--workload", "synthetic:sessions=12"]


def peak_kib_of(extra):
    # ru_maxrss of RUSAGE_CHILDREN is the largest child so far; each run goes in its own
    # grandchild so that the two figures are apart.
    probe = [sys.executable, "-c",
             "import resource,subprocess,sys; subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"] + args + extra
    return int(subprocess.run(probe, check=True, stdout=subprocess.PIPE, text=True).stdout.split()[-1])


timeline = os.path.join(work, "t.json")
without = peak_kib_of([])
with_timeline = peak_kib_of(["--timeline", timeline])
with open(timeline) as f:
    doc = json.load(f)
failures = []
if with_timeline > 2 * without:
    failures.append(f"peak RSS {with_timeline} KiB with the timeline against {without} KiB without (> 2x)")
if sorted(doc.keys()) != ["displayTimeUnit", "otherData", "traceEvents"]:
    failures.append(f"top-level keys {sorted(doc.keys())}")
if len(doc["traceEvents"]) < 1000:
    failures.append(f"only {len(doc['traceEvents'])} events")
if failures:
    print("timeline_memory_check: FAILED: " + "; ".join(failures))
    sys.exit(1)
print(f"timeline_memory_check: ok ({len(doc['traceEvents'])} events, peak RSS {with_timeline} KiB with the "
      f"timeline, {without} KiB without)")
