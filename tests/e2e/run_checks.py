"""What the run checks of tests/e2e share: one `kvtier run` with its outputs read back, and a
list of failed expectations reported at the end (every one, not only the first)."""
import json
import pathlib
import subprocess
import sys


def run_stats(kvtier, args, out):
    """`kvtier run --quiet ARGS --out OUT`: its stats.json, and requests.jsonl with series.json
    as one text; exits the check on a non-zero exit."""
    p = subprocess.run([kvtier, "run", "--quiet", *args, "--out", out], capture_output=True,
                       text=True)
    if p.returncode != 0:
        sys.exit(f"FAILED: kvtier run {' '.join(args)} exited {p.returncode}: {p.stderr.strip()}")
    out = pathlib.Path(out)
    stats = json.loads((out / "stats.json").read_text())
    return stats, (out / "requests.jsonl").read_text() + (out / "series.json").read_text()


class Checks:
    def __init__(self):
        self.failed = []

    def __call__(self, cond, what):
        if not cond:
            self.failed.append(what)

    def report(self):
        for f in self.failed:
            print("FAILED:", f)
        return 1 if self.failed else 0
