#!/usr/bin/env python3
"""`kvtier run --set sim.check_tlm_protocol=true` on the default workload: a checker on every
socket binding of the platform (7), checks made, no violation; without the key, no
tlm_protocol entry in stats.json.

usage: tlm_protocol_run.py KVTIER OUT_DIR [--set KEY=VALUE ...]
"""
import json
import os
import subprocess
import sys

kvtier, out = sys.argv[1], sys.argv[2]
extra = sys.argv[3:]
failed = []
for checked in (True, False):
    d = os.path.join(out, "checked" if checked else "plain")
    args = [kvtier, "run", "--out", d] + extra + (["--set", "sim.check_tlm_protocol=true"] if checked else [])
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        failed.append("%s: exit %d\n%s" % (" ".join(args), r.returncode, r.stderr))
        continue
    with open(os.path.join(d, "stats.json")) as f:
        stats = json.load(f)
    if not checked:
        if "tlm_protocol" in stats:
            failed.append("tlm_protocol reported without sim.check_tlm_protocol")
        continue
    p = stats.get("tlm_protocol")
    if p is None:
        failed.append("no tlm_protocol in stats.json")
    else:
        print("tlm_protocol:", p)
        if p["sockets"] != 7:
            failed.append("sockets %d, expected 7 bindings" % p["sockets"])
        if p["checks"] < 10 * stats.get("steps", 1):
            failed.append("only %d checks" % p["checks"])
        if p["violations"] != 0:
            failed.append("%d violations" % p["violations"])
for f in failed:
    print(f)
sys.exit(1 if failed else 0)
