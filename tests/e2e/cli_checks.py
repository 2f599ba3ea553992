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


def bench_figure(text, label):
    for line in text.splitlines():
        if line.strip().startswith(label):
            return float(line.strip()[len(label):].split()[0])
    expect(False, f"bench output lacks '{label}'")


def check_bench_reports_ceiling_and_promotions(kvtier):
    # All-layer and per-layer: promotions per wall second, and the run's boundary transactions
    # per wall second as a fraction of the bare b_transport ceiling measured in the same process.
    for layers in ["0", "1"]:
        p = run(kvtier, "bench", "--platform", "h200-cxl2-x16-pinned", "--workload", "synthetic:sessions=20",
                "--set", "hbm.kv_budget_gib=6",
                "--set", f"host.layers_per_block={layers}", "--set", "link.protocol=cxl2",
                "--ceiling-transactions", "200000")
        expect(p.returncode == 0, p.stderr)
        ceiling = bench_figure(p.stdout, "b_transport ceiling per wall s")
        boundary = bench_figure(p.stdout, "boundary transactions per wall s")
        ratio = bench_figure(p.stdout, "boundary / ceiling")
        promotions = bench_figure(p.stdout, "promotions ")
        per_s = bench_figure(p.stdout, "promotions per wall s")
        expect(ceiling > 1e5, f"implausible b_transport ceiling {ceiling}")
        expect(abs(ratio - boundary / ceiling) <= 0.002 + 0.01 * ratio, "ratio is not boundary / ceiling")
        expect(promotions > 0 and per_s > 0, "the run promoted nothing")
        # Transfers are promotions plus demotions; the cost per transfer is the simulation's wall
        # time over them (printed to 3 decimals of a microsecond).
        wall = bench_figure(p.stdout, "wall time, simulation")
        transfers = bench_figure(p.stdout, "transfers ")
        bursts = bench_figure(p.stdout, "DMA bursts / descriptors")
        per_transfer = bench_figure(p.stdout, "wall us per transfer")
        expect(transfers >= promotions, f"transfers {transfers} below promotions {promotions}")
        expect(bursts >= transfers, f"fewer DMA bursts ({bursts}) than transfers ({transfers})")
        expect(abs(per_transfer - wall * 1e6 / transfers) <= 0.0005 + 1e-3 * per_transfer + 0.0005e6 / transfers,
               f"wall us per transfer {per_transfer} is not {wall} s / {transfers}")
        expect(("per-layer" in p.stdout) == (layers == "1"), "bench does not say which block layout ran")
        # The offline bound, computed after the run as a run writing stats.json computes it: its
        # wall time, and its share of simulation plus bound.
        bound_line = next(l for l in p.stdout.splitlines() if l.strip().startswith("offline bound wall time"))
        words = bound_line.split()
        bound_s, share = float(words[4]), float(words[6])
        # Printed to 4 and 3 decimals: the share within what their rounding allows.
        expect(bound_s > 0 and abs(share - bound_s / (wall + bound_s)) <= 0.0005 + 0.0006 / (wall + bound_s),
               f"offline bound share {share} is not {bound_s} s / ({wall} + {bound_s}) s")
        expect(bound_line.rstrip().endswith("references)") and int(words[-2]) > 0, bound_line)
    # One session's KV fits the 32 GiB budget: nothing moves, and the cost per transfer is n/a,
    # not a number.
    p = run(kvtier, "bench", "--workload", "synthetic:sessions=1", "--ceiling-transactions", "200000")
    expect(p.returncode == 0, p.stderr)
    expect(bench_figure(p.stdout, "transfers ") == 0, "a single session moved blocks")
    expect(any(l.split() == ["wall", "us", "per", "transfer", "n/a", "(the", "run", "moved", "no", "block)"]
               for l in p.stdout.splitlines()), "no transfers, yet a wall time per transfer")
    # Without the reference string the bound is not computed, and bench says so.
    p = run(kvtier, "bench", "--workload", "synthetic:sessions=2", "--set", "sim.offline_bound=false",
            "--ceiling-transactions", "20000")
    expect(p.returncode == 0, p.stderr)
    expect(any(l.split() == ["offline", "bound", "wall", "time", "n/a", "(sim.offline_bound", "=", "false)"]
               for l in p.stdout.splitlines()), "bench reports a bound it did not compute")
    p = run(kvtier, "bench", "--ceiling-transactions", "x")
    expect(p.returncode != 0, "bench accepted a non-numeric --ceiling-transactions")


def check_bench_compares_per_layer(kvtier):
    # --per-layer runs the same workload with per-layer blocks in a child: its promotions and
    # wall time, and its promotions per wall second over this run's. 80 layer groups per
    # position: the per-layer run promotes more blocks than the all-layer one.
    p = run(kvtier, "bench", "--platform", "h200-cxl2-x16-pinned", "--workload", "synthetic:sessions=20",
            "--set", "hbm.kv_budget_gib=6", "--per-layer", "--per-layer-set", "ctrl.index_sets=262144",
            "--ceiling-transactions", "200000")
    expect(p.returncode == 0, p.stderr)
    all_promotions = bench_figure(p.stdout, "promotions ")
    all_per_s = bench_figure(p.stdout, "promotions per wall s")
    layer_promotions = bench_figure(p.stdout, "per-layer run")
    layer_per_s = bench_figure(p.stdout, "per-layer promotions per wall s")
    ratio = bench_figure(p.stdout, "per-layer / all-layer promotions per wall s")
    expect(layer_promotions > all_promotions > 0, f"per-layer {layer_promotions} vs all-layer {all_promotions} promotions")
    expect(abs(ratio - layer_per_s / all_per_s) <= 0.002 + 0.01 * ratio, "ratio is not per-layer / all-layer")
    # On the default platform's four layer groups the comparison is per-layer against 20-layer blocks.
    p = run(kvtier, "bench", "--workload", "synthetic:sessions=8", "--set", "hbm.kv_budget_gib=6", "--per-layer",
            "--per-layer-set", "ctrl.index_sets=262144", "--ceiling-transactions", "20000")
    expect(p.returncode == 0, p.stderr)
    # A 20-layer block is 20 per-layer blocks, but the two runs do not move the same bytes: the
    # decode set streams part of its KV, and a per-layer position spilled to the tier frees 79 of
    # its 80 slots (one layer in staging) where a 20-layer one frees 3 of 4, so the per-layer run
    # spills and streams less. At least ten per 20-layer block, well above the all-layer ratio.
    grouped = bench_figure(p.stdout, "promotions ")
    expect(bench_figure(p.stdout, "per-layer run") >= 10 * grouped > 0, "per-layer blocks promoted fewer than 10 per 20-layer block")
    bench_figure(p.stdout, "per-layer / 20-layer-block promotions per wall s")
    for args, message in [(["--per-layer", "--set", "host.layers_per_block=1"], "are per-layer already"),
                          (["--per-layer", "--set", "host.layer_groups=80"], "host.layer_groups = 80"),
                          (["--per-layer-set", "ctrl.index_sets=4"], "--per-layer-set needs --per-layer"),
                          (["--per-layer", "--per-layer-set", "ctrl.bogus=1"], "ctrl.bogus")]:
        p = run(kvtier, "bench", "--workload", "synthetic:sessions=2", *args)
        expect(p.returncode != 0 and message in p.stderr, f"bench {' '.join(args)}: {p.returncode} {p.stderr}")


def check_streamed_preset_regime(kvtier):
    # platforms/h200-cxl2-x16-streamed.ini: the decode set outgrows the budget while it decodes.
    # Streamed, the scheduler spills positions to the tier (within sched.stream_share of B_tier)
    # where pinned residency can only preempt: the same platform with pinned residency preempts
    # more and streams nothing (streamed, with one layer group of staging per streamed position,
    # it may absorb the squeeze without any preemption); streamed, the spilled blocks come back
    # when the squeeze ends.
    runs = {}
    with tempfile.TemporaryDirectory() as d:
        for mode in ["streamed", "pinned"]:
            p = run(kvtier, "run", "--platform", "h200-cxl2-x16-streamed.ini", "--set",
                    f"host.decode_residency={mode}", "--out", f"{d}/{mode}")
            expect(p.returncode == 0, p.stderr)
            runs[mode] = (json.loads(pathlib.Path(f"{d}/{mode}/stats.json").read_text()), p.stdout)
    s, out = runs["streamed"]
    q, qout = runs["pinned"]
    for stats in (s, q):
        expect(stats["requests_rejected"] == 0 and stats["requests_completed"] > 0, "requests were lost")
        expect(stats["max_demotions_per_block"] <= 1, "write-once broken")
        expect(stats["constraints"]["sustainability"]["violations"] == 0, "the streaming share was exceeded")
        expect(0 < stats["hiding_met_fraction"] < 1, f"HIDING is all or nothing: {stats['hiding_met_fraction']}")
    serving = s["serving"]
    expect(serving["streamed_steps"] > 0 and serving["streamed_promotions"] > 0, "the streamed preset did not stream")
    expect(serving["restored_streamed_blocks"] > 0, "no streamed block took a slot again")
    expect(s["constraints"]["capacity"]["streamed_steps"] == serving["streamed_steps"], "CAPACITY lost streamed steps")
    expect(q["serving"]["streamed_steps"] == 0 and q["serving"]["streamed_promotions"] == 0, "pinned residency streamed")
    expect(q["preemptions"] > s["preemptions"], f"pinned preempted {q['preemptions']}, streamed {s['preemptions']}")
    expect("steps streaming part of the decode set's KV from the tier" in out, "the verdict does not name streaming")
    expect("streaming part" not in qout, "the pinned verdict names streaming")


def check_max_itl_needs_two_tokens(kvtier):
    # One-token answers (output_tokens_mean = 1) have no gap between tokens: null, not 0; a
    # request with two or more tokens has a positive one.
    with tempfile.TemporaryDirectory() as d:
        p = run(kvtier, "run", "--quiet", "--workload", "synthetic:sessions=3,output_tokens_mean=1", "--out", d)
        expect(p.returncode == 0, p.stderr)
        rows = [json.loads(l) for l in pathlib.Path(d, "requests.jsonl").read_text().splitlines()]
        short = [r for r in rows if r["generated_tokens"] < 2]
        long = [r for r in rows if r["generated_tokens"] >= 2]
        expect(short and long, f"the workload gave {len(short)} one-token and {len(long)} longer answers")
        expect(all(r["max_itl_s"] is None for r in short), "a one-token answer has a max_itl_s")
        expect(all(r["max_itl_s"] is not None and r["max_itl_s"] > 0 for r in long), "a longer answer lacks its gap")


CHECKS = {f.__name__[len("check_"):]: f for f in [check_same_seed_same_stats, check_bad_input_exits_nonzero,
                                                   check_help_lists_defaults, check_config_prints_effective_values,
                                                   check_bench_reports_ceiling_and_promotions,
                                                   check_bench_compares_per_layer, check_streamed_preset_regime,
                                                   check_max_itl_needs_two_tokens]}

if __name__ == "__main__":
    CHECKS[sys.argv[2]](sys.argv[1])
    print("ok")
