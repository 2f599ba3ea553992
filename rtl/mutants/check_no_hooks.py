#!/usr/bin/env python3
"""Fails when a design source of the engine carries a test hook: a mutant or broken-variant
define, a debug port, a cycle-skip input, or the mutant selector. Those belong in
rtl/mutants/ (mutants) and cosim/kvdp_cosim.vlt (public access for a co-simulation)."""
import re
import sys

HOOKS = [r"`ifn?def\s+KVDP_(BROKEN|MUTANT)", r"\bdbg_\w+", r"\bcycle_skip", r"kvdp_mutant"]

failed = False
for path in sys.argv[1:]:
    with open(path) as f:
        for number, line in enumerate(f, start=1):
            for hook in HOOKS:
                if re.search(hook, line):
                    print("%s:%d: test hook in design RTL (/%s/): %s" % (path, number, hook, line.rstrip()))
                    failed = True
sys.exit(1 if failed else 0)
