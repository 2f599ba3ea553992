#!/usr/bin/env python3
"""Every key of stats.json has a unit and a meaning in its `about` object, and `about` names no
key that is absent. Key paths: nested objects joined with dots, the keys of a list's objects as
`list[].key`; `about` may describe one of several objects alike under a placeholder segment
(`link_classes.<class>.messages`). Each entry reads "unit; meaning", both non-empty.
Runs the default platform on a short synthetic workload, plain, with the TLM protocol checkers
(which add `tlm_protocol`) and with a small streamed KV budget (traffic on the link: `link_classes`),
and checks the checker itself on reports with a key added, a key removed and a meaning blank.
Usage: stats_about_check.py KVTIER WORKDIR"""
import json
import os
import re
import subprocess
import sys

kvtier, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)


def stats(name, sessions, *args):
    out = os.path.join(work, name)
    subprocess.run([kvtier, "run", "--quiet", "--out", out, "--workload", f"synthetic:sessions={sessions}", *args],
                   check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "stats.json")) as f:
        return json.load(f)


def key_paths(node, prefix=""):
    paths = []
    for key, value in node.items():
        path = prefix + key
        paths.append(path)
        if isinstance(value, dict):
            paths += key_paths(value, path + ".")
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, dict):
                    paths += key_paths(item, path + "[].")
    return list(dict.fromkeys(paths))


def pattern(about_key):
    # A placeholder segment (<class>) stands for any one key.
    parts = re.split(r"(<[^<>.]+>)", about_key)
    return re.compile("".join("[^.]+" if p.startswith("<") and p.endswith(">") else re.escape(p) for p in parts) + r"\Z")


def problems(report):
    about = report.get("about")
    if not isinstance(about, dict):
        return ["no `about` object"]
    found = []
    patterns = [(k, pattern(k)) for k in about]
    paths = key_paths({k: v for k, v in report.items() if k != "about"})
    for path in paths:
        entry = about.get(path)
        if entry is None:
            entry = next((about[k] for k, p in patterns if p.match(path)), None)
        if entry is None:
            found.append(f"{path}: no entry in about")
            continue
        unit, sep, meaning = entry.partition("; ")
        if not sep or not unit.strip() or not meaning.strip():
            found.append(f"{path}: about entry {entry!r} is not 'unit; meaning' with both non-empty")
    for key, p in patterns:
        if not any(p.match(path) for path in paths):
            found.append(f"about names {key}, which stats.json does not have")
    return found


failures = []
plain = stats("plain", 4)
checked = stats("protocol", 4, "--set", "sim.check_tlm_protocol=true")
tiered = stats("tiered", 8, "--set", "hbm.kv_budget_gib=3", "--set", "host.decode_residency=streamed")
for name, report in (("plain", plain), ("protocol checks", checked), ("tiered", tiered)):
    failures += [f"{name}: {p}" for p in problems(report)]
if "tlm_protocol" not in checked:
    failures.append("protocol checks: no tlm_protocol group")
if not tiered.get("link_classes"):
    failures.append("tiered: nothing crossed the link, so link_classes went unchecked")
print(f"about covers {len(plain['about'])} keys (plain), {len(checked['about'])} (protocol checks), "
      f"{len(tiered['about'])} (tiered)")

# The check bites: a key without a description, and a description without its key, are caught.
undescribed = json.loads(json.dumps(plain))
undescribed["serving"]["new_counter"] = 1
if not any("serving.new_counter" in p for p in problems(undescribed)):
    failures.append("an undescribed key went unnoticed")
stale = json.loads(json.dumps(plain))
del stale["blocks"]["misses"]
if not any("blocks.misses" in p for p in problems(stale)):
    failures.append("a description of an absent key went unnoticed")
blank = json.loads(json.dumps(plain))
blank["about"]["steps"] = "count; "
if not any(p.startswith("steps:") for p in problems(blank)):
    failures.append("an empty meaning went unnoticed")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
