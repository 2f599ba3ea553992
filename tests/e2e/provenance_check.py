#!/usr/bin/env python3
"""stats.json's provenance tells two different runs apart and two equal ones not: the workload
spec as given (options included), every --set in order, the model, and a hash of the effective
configuration that does not depend on how a setting was spelt.
Usage: provenance_check.py KVTIER WORKDIR"""
import json
import os
import subprocess
import sys

kvtier, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)


def provenance(name, *args):
    out = os.path.join(work, name)
    subprocess.run([kvtier, "run", "--quiet", "--out", out, *args], check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "stats.json")) as f:
        return json.load(f)["provenance"]


failures = []


def check(what, ok):
    if not ok:
        failures.append(what)


a = provenance("a", "--workload", "synthetic:sessions=2")
b = provenance("b", "--workload", "synthetic:sessions=2,tenants=2")
c = provenance("c", "--workload", "synthetic:sessions=2", "--set", "link.lanes=8")
d = provenance("d", "--workload", "synthetic:sessions=2", "--set", " link.lanes = 8 ")
e = provenance("e", "--workload", "synthetic:sessions=2", "--set", "link.lanes=16")  # the default's own value

check("workload options recorded", b["workload_spec"] == "synthetic:sessions=2,tenants=2")
check("runs with different workload options differ", a != b)
check("--set recorded as given", c["overrides"] == ["link.lanes=8"] and d["overrides"] == [" link.lanes = 8 "])
check("a different setting changes the hash", a["config_fnv1a64"] != c["config_fnv1a64"])
check("the same setting spelt two ways has one hash", c["config_fnv1a64"] == d["config_fnv1a64"])
check("setting the default's own value leaves the hash", a["config_fnv1a64"] == e["config_fnv1a64"])
check("hash is 16 hex digits", len(a["config_fnv1a64"]) == 16 and all(ch in "0123456789abcdef" for ch in a["config_fnv1a64"]))
check("model named", a["model"] == "llama-3.1-70b")
check("old keys kept", all(k in a for k in ("platform", "workload", "requests_in_workload", "seed", "link_protocol")))
if failures:
    print("provenance_check: FAILED: " + "; ".join(failures))
    print(json.dumps({"a": a, "b": b, "c": c, "d": d, "e": e}, indent=1))
    sys.exit(1)
print("provenance_check: ok (5 runs)")
