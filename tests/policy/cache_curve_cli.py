"""kvtier cache-curve: semantics against an independent count, JSON rows, and error paths."""
import json
import os
import subprocess
import sys
import tempfile

KVTIER = sys.argv[1]
TRACE = sys.argv[2]


def run(*args):
    return subprocess.run([KVTIER, "cache-curve", *args], capture_output=True, text=True)


def reuse(refs):
    seen, hits = set(), 0
    for r in refs:
        hits += r in seen
        seen.add(r)
    return hits, len(refs)


def lru_hits(refs, size):
    from collections import OrderedDict
    cache, hits = OrderedDict(), 0
    for r in refs:
        if r in cache:
            hits += 1
            cache.move_to_end(r)
        else:
            if len(cache) == size:
                cache.popitem(last=False)
            cache[r] = True
    return hits


def main():
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)

    every, full = [], []
    with open(TRACE) as f:
        for line in f:
            j = json.loads(line)
            every += j["hash_ids"]
            full += j["hash_ids"][: j["input_length"] // 512]

    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "rows.json")
        p = run("mooncake:" + TRACE, "--sizes", "50,1000000", "--policies", "lru,lfu,ema,belady", "--json", out)
        check(p.returncode == 0, "default run failed: " + p.stderr)
        rows = json.load(open(out))["rows"]
        check(len(rows) == 8, "one row per policy and size")
        check(set(rows[0]) == {"policy", "persistent", "size_blocks", "references", "hits", "hit_ratio"}, "row keys")
        hits, refs = reuse(every)
        for r in rows:
            check(r["references"] == refs, "every hash_id is one reference at 512 tokens")
            check(r["persistent"] is False, "persistent off by default")
            if r["size_blocks"] == 1000000:
                check(r["hits"] == hits, f"{r['policy']}: an unbounded cache reaches the reuse fraction")
        by = {(r["policy"], r["size_blocks"]): r for r in rows}
        check(by[("lru", 50)]["hits"] == lru_hits(every, 50), "LRU equals an independent LRU simulator")
        for name in ("lru", "lfu", "ema"):
            check(by[(name, 50)]["hits"] <= by[("belady", 50)]["hits"], f"{name} <= belady")

        p = run("mooncake:" + TRACE, "--sizes", "1000000", "--policies", "lru", "--full-blocks-only", "--json", out)
        r = json.load(open(out))["rows"][0]
        fhits, frefs = reuse(full)
        check(r["references"] == frefs and r["hits"] == fhits, "--full-blocks-only counts full blocks only")

        p = run("mooncake:" + TRACE + ",limit=100", "--sizes", "10", "--policies", "lfu", "--persistent", "--json", out)
        r = json.load(open(out))["rows"][0]
        first = []
        with open(TRACE) as f:
            for _, line in zip(range(100), f):
                first += json.loads(line)["hash_ids"]
        check(p.returncode == 0 and r["references"] == len(first) and r["persistent"] is True, "limit and --persistent")

        p = run("mooncake:" + TRACE, "--sizes", "100", "--block-tokens", "256", "--json", out)
        check(p.returncode == 0, "--block-tokens 256 runs: " + p.stderr)

        h = run("--help")
        check(h.returncode == 0 and "infinitely far" in h.stdout and "every miss" in h.stdout, "--help states the semantics")

        for args, text in [
            (["mooncake:" + TRACE, "--sizes", "10", "--policies", "lru,random"], "unknown policy 'random'"),
            (["mooncake:" + TRACE, "--sizes", "10,0"], "'0' is not a whole number of blocks (1 or more)"),
            (["mooncake:" + TRACE, "--sizes", "10,x"], "'x' is not a whole number of blocks"),
            (["mooncake:" + TRACE, "--sizes", "-5"], "'-5' is not a whole number of blocks"),
            (["mooncake:" + TRACE], "missing --sizes"),
            (["--sizes", "10"], "missing WORKLOAD"),
            (["mooncake:" + TRACE, "--sizes", "10", "--ema-alpha", "0"], "--ema-alpha"),
            (["mooncake:" + TRACE, "--sizes", "10", "--ema-clock", "minute"], "--ema-clock"),
        ]:
            p = run(*args)
            check(p.returncode == 2 and text in p.stderr, f"usage error {args}: rc {p.returncode}, {p.stderr.strip()}")
        for args, text in [
            (["mooncake:/nonexistent.jsonl", "--sizes", "10"], "nonexistent"),
            (["mooncake:" + TRACE, "--sizes", "10", "--block-tokens", "300"], "does not divide"),
            (["mooncake:" + TRACE, "--sizes", "10", "--policies", "priority", "--tenant-qos", "1,x"], "tenant QoS"),
        ]:
            p = run(*args)
            check(p.returncode == 1 and text in p.stderr, f"input error {args}: rc {p.returncode}, {p.stderr.strip()}")
        # An output that cannot be written is a usage error found before any work.
        p = run("mooncake:" + TRACE, "--sizes", "10", "--json", "/nonexistent/dir/x.json")
        check(p.returncode == 2 and "folder '/nonexistent/dir' does not exist" in p.stderr,
              f"unwritable --json: rc {p.returncode}, {p.stderr.strip()}")

        # Same inputs, same bytes.
        a, b = os.path.join(d, "a.json"), os.path.join(d, "b.json")
        for path in (a, b):
            run("mooncake:" + TRACE, "--sizes", "30,300", "--policies", "lru,lfu,ema,priority,admission,belady",
                "--persistent", "--json", path)
        check(open(a).read() == open(b).read(), "bit-identical output")

    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
