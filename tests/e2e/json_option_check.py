#!/usr/bin/env python3
"""--json [FILE] alike in every command that writes JSON: without FILE the JSON alone is on
standard output (the tables go to standard error); with FILE the tables print as always and the
file holds the same JSON document. Usage: json_option_check.py KVTIER WORKDIR"""
import json
import os
import subprocess
import sys

kvtier, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
failures = []
commands = {
    "cost": ["cost", "--tokens", "4,16"],
    "index-study": ["index-study"],
    "trace-stats": ["trace-stats", "synthetic:sessions=3"],
    "cache-curve": ["cache-curve", "synthetic:sessions=3", "--sizes", "10,100"],
    "link-study": ["link-study", "--preset", "cxl2-x8", "--sizes", "64", "--transactions", "2000",
                   "--outstanding", "64", "--bulk-bytes", "65536"],
}
for name, args in commands.items():
    alone = subprocess.run([kvtier, *args, "--json"], capture_output=True, text=True)
    try:
        doc = json.loads(alone.stdout)
    except json.JSONDecodeError as e:
        failures.append(f"{name} --json: stdout is not one JSON document ({e}): {alone.stdout[:200]!r}")
        continue
    if alone.returncode != 0:
        failures.append(f"{name} --json: exit {alone.returncode}: {alone.stderr[-300:]}")
    if not alone.stderr.strip():
        failures.append(f"{name} --json: the tables should have gone to standard error, which is empty")
    path = os.path.join(work, name + ".json")
    to_file = subprocess.run([kvtier, *args, "--json", path], capture_output=True, text=True)
    if to_file.returncode != 0:
        failures.append(f"{name} --json FILE: exit {to_file.returncode}: {to_file.stderr[-300:]}")
        continue
    with open(path) as f:
        written = json.load(f)
    if written.keys() != doc.keys():
        failures.append(f"{name}: the file's keys {sorted(written)} differ from stdout's {sorted(doc)}")
    try:
        json.loads(to_file.stdout)
        failures.append(f"{name} --json FILE: stdout should be the tables, not JSON")
    except json.JSONDecodeError:
        pass
    # An unwritable FILE is refused before any work, as a usage error.
    bad = subprocess.run([kvtier, *args, "--json", os.path.join(work, "no", "such", "dir.json")],
                         capture_output=True, text=True)
    if bad.returncode != 2 or "does not exist" not in bad.stderr:
        failures.append(f"{name} --json into a missing folder: exit {bad.returncode}, {bad.stderr[-200:]!r}")
# "--json=" names no file: Boost refuses it, so it never reads as "no --json".
empty = subprocess.run([kvtier, "cost", "--tokens", "4", "--json="], capture_output=True, text=True)
if empty.returncode != 2 or "--json" not in empty.stderr:
    failures.append(f"--json= (empty): exit {empty.returncode}, {empty.stderr[-200:]!r}")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
