#!/usr/bin/env python3
"""Every test of the build carries exactly one of the labels fast, slow and long
(tests/test_labels.cmake): the guarantee that `ctest -L fast` under asan and `ctest -LE long`
in release between them run every test but the long ones, whichever branch added it.

  labels_check.py CTEST BUILD_DIR
"""
import json
import subprocess
import sys

ctest, build = sys.argv[1], sys.argv[2]
p = subprocess.run([ctest, "--test-dir", build, "--show-only=json-v1"], capture_output=True, text=True)
if p.returncode != 0:
    print(p.stdout, p.stderr)
    sys.exit(1)
tests = json.loads(p.stdout)["tests"]
bad = []
counts = {"fast": 0, "slow": 0, "long": 0}
for t in tests:
    if t["name"].endswith("_NOT_BUILT"):  # a discovered suite whose program is not built here
        continue
    labels = next((prop["value"] for prop in t.get("properties", []) if prop["name"] == "LABELS"), [])
    tiers = [l for l in labels if l in counts]
    if len(tiers) != 1:
        bad.append(f"{t['name']}: labels {labels}")
    else:
        counts[tiers[0]] += 1
if bad:
    print("tests without exactly one of fast, slow, long:\n  " + "\n  ".join(bad))
    sys.exit(1)
if counts["fast"] == 0:
    print("no fast test at all: the default label is not applied")
    sys.exit(1)
print(f"{sum(counts.values())} tests: {counts['fast']} fast, {counts['slow']} slow, {counts['long']} long")
