#!/usr/bin/env python3
"""Re-runs the commands behind the figures the docs quote and checks that the figures still hold.

Each checked figure carries, beside it in the Markdown, an HTML comment (invisible when
rendered) that names the command it came from and how to read the figure off its outputs:

    <!-- check: {"run": "kvtier run --out {tmp}/r", "json": "{tmp}/r/stats.json",
                 "values": ["promotion_latency_queue_s * 1e3"], "format": ["{:.2f}"],
                 "quote": "the mean split is {} ms queue", "fast": true} -->

  run     a shell command; a leading `kvtier` is the binary under test, {tmp} a scratch folder
          shared by every check of this invocation. A command is run once, however many checks
          read it; a non-zero exit fails every check that reads it.
  json    a JSON file the command wrote (`j` in the expressions), or
  jsonl   a JSON-lines file (`rows`, a list of objects), or
  csv     a CSV file (`rows`, a list of dicts; `columns`, its header), or none of these
          (`stdout`, the command's output).
  values  Python expressions over j / rows / stdout, one per {} of the quote; `get(j, "a.b")`
          reads a dotted key.
  format  one format per value (default "{}").
  quote   the text the doc must contain once the values are put in (whitespace and line
          breaks count as one space, so a quote may span lines of the paragraph).
  assert  instead of a quote: a Python expression that must be true (for a claim that is not a
          number, such as "this window holds transfers").
  block   true: the fenced code block that follows the comment must equal the command's stdout.
  table   true: the Markdown table that follows the comment (its lines starting with "|") must
          equal the command's stdout (a table the command prints itself, e.g. --markdown).
  fast    true: part of the subset CI runs (--fast); the rest runs on demand.

Usage: tools/check_docs.py --kvtier build/platforms/kvtier [--fast] [--list] [DOC.md ...]
Exit 0 when every check holds, 1 when one does not (each failure is named with its doc, line,
the command and what it found), 2 for a malformed marker.
"""
import argparse
import csv
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

MARKER = re.compile(r"<!--\s*check:\s*(\{.*?\})\s*-->", re.S)
FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)
KNOWN = {"run", "json", "jsonl", "csv", "values", "format", "quote", "assert", "block", "table", "fast"}


def normalise(text):
    return " ".join(text.split())


def get(obj, dotted):
    for part in dotted.split("."):
        obj = obj[part]
    return obj


class Check:
    def __init__(self, doc, line, spec, text_after):
        self.doc, self.line, self.spec = doc, line, spec
        self.where = f"{doc}:{line}"
        unknown = set(spec) - KNOWN
        if unknown:
            raise ValueError(f"{self.where}: unknown marker key(s) {sorted(unknown)} (known: {sorted(KNOWN)})")
        if "run" not in spec:
            raise ValueError(f"{self.where}: a check needs \"run\"")
        kinds = [k for k in ("quote", "assert", "block", "table") if k in spec]
        if len(kinds) != 1:
            raise ValueError(f"{self.where}: a check needs exactly one of quote, assert, block, table (has {kinds})")
        if "quote" in spec and spec["quote"].count("{}") != len(spec.get("values", [])):
            raise ValueError(f"{self.where}: the quote has {spec['quote'].count('{}')} {{}} for "
                             f"{len(spec.get('values', []))} values")
        self.block = None
        if spec.get("block"):
            m = FENCE.match(text_after.lstrip("\n"))
            if not m:
                raise ValueError(f"{self.where}: \"block\": true needs a fenced code block right after the marker")
            self.block = m.group(1)
        if spec.get("table"):
            rows = []
            for line in text_after.lstrip("\n").split("\n"):
                if not line.startswith("|"):
                    break
                rows.append(line)
            if not rows:
                raise ValueError(f"{self.where}: \"table\": true needs a Markdown table right after the marker")
            self.block = "\n".join(rows) + "\n"
        self.fast = bool(spec.get("fast", False))


def collect(paths):
    checks = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for m in MARKER.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            try:
                spec = json.loads(m.group(1))
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{line}: the marker is not JSON: {e}")
            checks.append(Check(path, line, spec, text[m.end():]))
    return checks


def run_command(command, kvtier, tmp, cache):
    if command in cache:
        return cache[command]
    argv_text = command.replace("{tmp}", shlex.quote(tmp))
    if argv_text.startswith("kvtier "):
        argv_text = shlex.quote(kvtier) + argv_text[len("kvtier"):]
    argv_text = re.sub(r"([;&|]\s*)kvtier ", lambda m: m.group(1) + shlex.quote(kvtier) + " ", argv_text)
    p = subprocess.run(["bash", "-c", argv_text], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    cache[command] = p
    return p


def evaluate(check, p, tmp):
    spec = check.spec
    scope = {"get": get, "stdout": p.stdout, "min": min, "max": max, "sum": sum, "len": len, "sorted": sorted}
    if "json" in spec:
        with open(spec["json"].replace("{tmp}", tmp), encoding="utf-8") as f:
            scope["j"] = json.load(f)
    if "jsonl" in spec:
        with open(spec["jsonl"].replace("{tmp}", tmp), encoding="utf-8") as f:
            scope["rows"] = [json.loads(line) for line in f if line.strip()]
    if "csv" in spec:
        with open(spec["csv"].replace("{tmp}", tmp), encoding="utf-8", newline="") as f:
            reader = csv.DictReader(f)
            scope["rows"] = list(reader)
            scope["columns"] = reader.fieldnames
    if check.block is not None:
        want, got = check.block.rstrip(), p.stdout.rstrip()
        return (want == got), f"the block after the marker differs from the command's output:\n--- doc\n{want}\n--- command\n{got}"
    if "assert" in spec:
        ok = bool(eval(spec["assert"], scope))  # noqa: S307 (the docs are this repository's own)
        return ok, f"assertion false: {spec['assert']}"
    values = [eval(v, scope) for v in spec.get("values", [])]  # noqa: S307
    formats = spec.get("format", ["{}"] * len(values))
    if isinstance(formats, str):
        formats = [formats] * len(values)
    quote = spec["quote"]
    for v, f in zip(values, formats):
        quote = quote.replace("{}", f.format(v), 1)
    with open(check.doc, encoding="utf-8") as fh:
        doc_text = normalise(MARKER.sub(" ", fh.read()))
    return normalise(quote) in doc_text, f"the doc does not say \"{normalise(quote)}\" (the command gives that now)"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kvtier", required=True, help="the kvtier binary under test")
    ap.add_argument("--fast", action="store_true", help="only the checks marked fast (the CI subset)")
    ap.add_argument("--list", action="store_true", help="list the checks, run nothing")
    ap.add_argument("docs", nargs="*", help="Markdown files (default: README.md and docs/*.md)")
    a = ap.parse_args(argv)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    docs = a.docs or [os.path.join(root, "README.md")] + sorted(
        os.path.join(root, "docs", d) for d in os.listdir(os.path.join(root, "docs")) if d.endswith(".md"))
    if not os.access(a.kvtier, os.X_OK):
        print(f"check_docs: --kvtier {a.kvtier}: not an executable file", file=sys.stderr)
        return 2
    try:
        checks = collect(docs)
    except (OSError, ValueError) as e:
        print(f"check_docs: {e}", file=sys.stderr)
        return 2
    if a.fast:
        checks = [c for c in checks if c.fast]
    if not checks:
        print("check_docs: no checks found", file=sys.stderr)
        return 2
    if a.list:
        for c in checks:
            print(f"{c.where}  {'fast' if c.fast else 'on demand'}  {c.spec['run']}")
        return 0
    os.chdir(root)  # the commands name files relative to the repository root
    failed = 0
    cache = {}
    with tempfile.TemporaryDirectory(prefix="kvtier-docs-") as tmp:
        for c in checks:
            p = run_command(c.spec["run"], os.path.abspath(a.kvtier), tmp, cache)
            if p.returncode != 0:
                ok, why = False, f"the command exited {p.returncode}: {p.stderr.strip()[-400:]}"
            else:
                try:
                    ok, why = evaluate(c, p, tmp)
                except Exception as e:  # a key that vanished, a file not written: a failed check
                    ok, why = False, f"{type(e).__name__}: {e}"
            print(f"{'ok  ' if ok else 'FAIL'}  {c.where}  ({c.spec['run']})")
            if not ok:
                failed += 1
                print("      " + why.replace("\n", "\n      "))
    print(f"check_docs: {len(checks) - failed} of {len(checks)} figures hold ({len(cache)} commands run)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
