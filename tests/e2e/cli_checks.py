#!/usr/bin/env python3
"""Command-line checks of the kvtier binary: exit codes, messages, determinism.

Usage: cli_checks.py KVTIER CHECK
"""
import json
import pathlib
import subprocess
import sys
import tempfile


def run(kvtier, *args):
    return subprocess.run([kvtier, *args], capture_output=True, text=True)


def expect(cond, message):
    if not cond:
        print("FAILED:", message)
        sys.exit(1)


def check_same_seed_same_stats(kvtier):
    with tempfile.TemporaryDirectory() as d:
        outs = []
        for i in range(2):
            p = run(kvtier, "run", "--workload", "synthetic:sessions=30", "--set", "hbm.kv_budget_gib=6",
                    "--seed", "11", "--out", f"{d}/{i}")
            expect(p.returncode == 0, p.stderr)
            text = pathlib.Path(f"{d}/{i}/stats.json").read_text()
            outs.append("\n".join(l for l in text.splitlines() if '"wall_time_s"' not in l))
        expect(outs[0] == outs[1], "two runs with the same seed wrote different stats.json")
        stats = json.loads(pathlib.Path(f"{d}/0/stats.json").read_text())
        expect(stats["promotions"] > 0 and stats["demotions"] > 0, "the run did not use the tier")


def check_bad_input_exits_nonzero(kvtier):
    cases = [
        (["run", "--set", "hbm.bogus=1"], "unknown key 'hbm.bogus'"),
        (["run", "--set", "hbm.eta_kv=2"], "outside the allowed range"),
        (["run", "--platform", "/nonexistent.ini"], "cannot open platform file"),
        (["run", "--workload", "synthetic:sessions=abc"], "non-numeric"),
        (["run", "--workload", "nosuchkind:x"], "unknown kind"),
        (["run", "--no-such-option"], "unrecognised option"),
        (["frobnicate"], "unknown command"),
    ]
    for args, needle in cases:
        p = run(kvtier, *args)
        expect(p.returncode != 0, f"{args} exited 0")
        expect(needle in p.stderr, f"{args}: stderr lacks '{needle}': {p.stderr}")


def check_help_lists_defaults(kvtier):
    p = run(kvtier, "run", "--help")
    expect(p.returncode == 0, p.stderr)
    for opt in ["--platform", "--workload", "--set", "--out", "--seed"]:
        expect(opt in p.stdout, f"run --help lacks {opt}")
    expect("(=1)" in p.stdout, "run --help does not show the seed default")
    p = run(kvtier, "config", "--help")
    expect("hbm.eta_kv" in p.stdout and "[0.01, 1]" in p.stdout, "config --help lacks key ranges")


def check_config_prints_effective_values(kvtier):
    p = run(kvtier, "config", "--set", "hbm.kv_budget_gib=12")
    expect(p.returncode == 0, p.stderr)
    expect("kv_budget_gib = 12" in p.stdout, "config does not show the override")
    expect("[workload]" in p.stdout and "[ctrl]" in p.stdout, "config lacks sections")


CHECKS = {f.__name__[len("check_"):]: f for f in [check_same_seed_same_stats, check_bad_input_exits_nonzero,
                                                   check_help_lists_defaults, check_config_prints_effective_values]}

if __name__ == "__main__":
    CHECKS[sys.argv[2]](sys.argv[1])
    print("ok")
