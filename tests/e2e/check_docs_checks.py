#!/usr/bin/env python3
"""tools/check_docs.py on documents written here: a figure that holds passes, a stale figure fails
with its doc and line, a changed code block fails, a marker that is not JSON or has an unknown key
is refused (exit 2), and a command that fails fails its checks.
Usage: check_docs_checks.py KVTIER WORKDIR"""
import os
import subprocess
import sys

kvtier, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
tool = os.path.join(root, "tools", "check_docs.py")
failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)


def check(name, text):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write(text)
    p = subprocess.run([sys.executable, tool, "--kvtier", kvtier, path], capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


# `kvtier config` prints the effective configuration; its link protocol on the default platform is
# cxl2 (platforms/h200-cxl2-x16.ini). Spelt over a line break, the quote still matches.
good = ('<!-- check: {"run": "kvtier config", "assert": "\\"cxl2\\" in stdout"} -->\n'
        'The default link is\ncxl2.\n')
rc, out = check("good.md", good)
expect(rc == 0 and "1 of 1 figures hold" in out, f"a true claim must pass: {rc} {out}")

# The default run has 209 requests (docs/workloads.md); the doc claims 210: a stale figure.
stale = ('<!-- check: {"run": "kvtier trace-stats synthetic: --json {tmp}/t.json > /dev/null", '
         '"json": "{tmp}/t.json", "values": ["j[\'requests\']"], "quote": "counts {} requests"} -->\n'
         'It counts 210 requests.\n')
rc, out = check("stale.md", stale)
expect(rc == 1 and "stale.md:1" in out and 'does not say "counts 209 requests"' in out,
       f"a stale figure must fail naming doc, line and the figure now: {rc} {out}")
rc, out = check("fresh.md", stale.replace("210", "209"))
expect(rc == 0, f"the same figure made right must pass: {rc} {out}")

# A code block that must equal a command's output.
block = '<!-- check: {"run": "echo one; echo two", "block": true} -->\n```\none\nthree\n```\n'
rc, out = check("block.md", block)
expect(rc == 1 and "differs from the command's output" in out, f"a changed block must fail: {rc} {out}")
rc, out = check("block_ok.md", block.replace("three", "two"))
expect(rc == 0, f"a matching block must pass: {rc} {out}")

# A Markdown table the command prints itself (no fence): a changed cell fails.
table = '<!-- check: {"run": "printf \'| a | b |\\\\n|---|---|\\\\n| 1 | 2 |\\\\n\'", "table": true} -->\n| a | b |\n|---|---|\n| 1 | 2 |\n\ntext\n'
rc, out = check("table_ok.md", table)
expect(rc == 0, f"a matching table must pass: {rc} {out}")
rc, out = check("table_stale.md", table.replace("| 1 | 2 |\n\n", "| 1 | 3 |\n\n"))
expect(rc == 1 and "differs from the command's output" in out, f"a changed table cell must fail: {rc} {out}")

# Malformed markers are refused before anything runs.
rc, out = check("bad_json.md", '<!-- check: {"run": "true", } -->\n')
expect(rc == 2 and "bad_json.md:1" in out and "not JSON" in out, f"a marker that is not JSON: {rc} {out}")
rc, out = check("bad_key.md", '<!-- check: {"run": "true", "assert": "True", "qoute": "x"} -->\n')
expect(rc == 2 and "unknown marker key" in out and "qoute" in out, f"an unknown key: {rc} {out}")
rc, out = check("bad_count.md", '<!-- check: {"run": "true", "values": ["1"], "quote": "{} and {}"} -->\n')
expect(rc == 2 and "2 {} for 1 values" in out, f"a quote with more {{}} than values: {rc} {out}")

# A command that fails fails its checks, with its exit status.
rc, out = check("failing.md", '<!-- check: {"run": "kvtier run --no-such-option", "assert": "True"} -->\n')
expect(rc == 1 and "the command exited" in out, f"a failing command must fail its check: {rc} {out}")

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
