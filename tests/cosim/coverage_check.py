#!/usr/bin/env python3
"""Checks `kvtier cosim --coverage` output directories.

usage: coverage_check.py [--min-each F] [--min-union F] DIR...

Each DIR must hold coverage.json ({"bins": {...}, "covered": N, "total": M}) whose counts
agree with its bins, and verilator_coverage.txt with the line/toggle total. Every run must
cover at least --min-each of the bins, their union at least --min-union. Prints the union's
table and what stays uncovered.
"""
import argparse
import json
import os
import re
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--min-each", type=float, default=0.0)
    ap.add_argument("--min-union", type=float, default=0.0)
    ap.add_argument("dirs", nargs="+")
    args = ap.parse_args()
    union = None
    failed = False
    for d in args.dirs:
        path = os.path.join(d, "coverage.json")
        with open(path) as f:
            cov = json.load(f)
        bins = cov["bins"]
        covered = sum(1 for v in bins.values() if v > 0)
        if covered != cov["covered"] or len(bins) != cov["total"]:
            print("%s: covered/total %d/%d disagree with the bins (%d/%d)" % (path, cov["covered"], cov["total"],
                                                                             covered, len(bins)))
            failed = True
        share = covered / len(bins)
        print("%s: %d of %d bins (%.1f %%)" % (path, covered, len(bins), 100 * share))
        if share < args.min_each:
            print("  below %.1f %%" % (100 * args.min_each))
            failed = True
        with open(os.path.join(d, "verilator_coverage.txt")) as f:
            m = re.search(r"Total coverage \((\d+)/(\d+)\)", f.read())
        if not m or int(m.group(2)) == 0:
            print("%s: no line/toggle coverage total" % d)
            failed = True
        else:
            print("  line and toggle coverage %s of %s points" % (m.group(1), m.group(2)))
        if union is None:
            union = dict(bins)
        else:
            if set(union) != set(bins):
                print("%s: a different bin set than the first directory" % path)
                failed = True
            for k, v in bins.items():
                union[k] = union.get(k, 0) + v
    covered = sum(1 for v in union.values() if v > 0)
    print("union: %d of %d bins (%.1f %%)" % (covered, len(union), 100 * covered / len(union)))
    for k in sorted(union):
        print("  %-45s %d" % (k, union[k]))
    if covered / len(union) < args.min_union:
        print("union below %.1f %%; uncovered: %s" % (100 * args.min_union,
                                                     ", ".join(k for k, v in union.items() if v == 0)))
        failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
