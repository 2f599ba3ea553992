#!/usr/bin/env python3
"""`cmake --install` into a fresh prefix, then from there: the installed tree, the include
search finding the installed platform files, `kvtier plot` finding its installed script, and
examples/custom_policy built out of tree with find_package(kvtier) and run.

Usage: install_check.py BUILD_DIR SOURCE_DIR
"""
import json
import os
import pathlib
import subprocess
import sys
import tempfile


def expect(cond, message):
    if not cond:
        print("FAILED:", message)
        sys.exit(1)


def run(*args, **kw):
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kw)
    return p


def main(build, source):
    env = {k: v for k, v in os.environ.items() if k not in ("KVTIER_PLATFORM_DIR", "KVTIER_PLOT_SCRIPT")}
    with tempfile.TemporaryDirectory(prefix="kvtier_install_") as d:
        d = pathlib.Path(d)
        prefix = d / "prefix"
        p = run("cmake", "--install", build, "--prefix", prefix)
        expect(p.returncode == 0, p.stdout + p.stderr)
        for f in ["bin/kvtier", "share/kvtier/kvtier_plot.py", "share/kvtier/platforms/h200-cxl2-x16.ini",
                  "share/kvtier/platforms/gpus/h200.ini", "share/kvtier/platforms/links/cxl2-x16.ini",
                  "include/kvtier/tlm/host/policy/policy.h", "include/kvtier/platforms/simulate.h",
                  "lib/libkvtier_platform.a", "lib/libkvtier_tlm.a", "lib/cmake/kvtier/kvtierConfig.cmake",
                  "lib/cmake/kvtier/kvtierConfigVersion.cmake", "lib/cmake/kvtier/kvtierTargets.cmake"]:
            expect((prefix / f).is_file(), f"{f} not installed")
        kvtier = prefix / "bin" / "kvtier"
        # The include search finds PREFIX/share/kvtier/platforms beside the installed binary:
        # an edited installed link preset shows in a user's file that includes it by path.
        preset = prefix / "share/kvtier/platforms/links/cxl2-x16.ini"
        preset.write_text(preset.read_text().replace("lanes = 16", "lanes = 2", 1))
        user = d / "mine.ini"
        user.write_text("include = gpus/h200.ini\ninclude = links/cxl2-x16\n[hbm]\nkv_budget_gib = 3\n")
        p = run(kvtier, "config", "--platform", user, env=env, cwd=d)
        expect(p.returncode == 0, p.stderr)
        expect("\nlanes = 2 " in p.stdout and "kv_budget_gib = 3 " in p.stdout, f"installed preset not used:\n{p.stdout}")
        # ... and the stock pair by name from the embedded set when it is not on disk.
        stock = d / "stock.ini"
        stock.write_text("include = h200-pcie5-x16\n")
        (prefix / "share/kvtier/platforms/h200-pcie5-x16.ini").unlink()
        p = run(kvtier, "config", "--platform", stock, env=env, cwd=d)
        expect(p.returncode == 0 and "protocol = " in p.stdout, p.stderr)
        # kvtier plot from the install: its script is the installed one.
        r = run(kvtier, "run", "--workload", "synthetic:sessions=4", "--out", d / "run", env=env)
        expect(r.returncode == 0, r.stderr)
        p = run(kvtier, "plot", d / "run", "--out", d / "figs", "--format", "png", env=env)
        expect(p.returncode == 0 and (d / "figs" / "dashboard.png").is_file(), p.stderr)
        # The example, out of tree, against the package.
        ex = d / "example"
        p = run("cmake", "-S", pathlib.Path(source) / "examples" / "custom_policy", "-B", ex,
                f"-DCMAKE_PREFIX_PATH={prefix}", "-DCMAKE_BUILD_TYPE=Release")
        expect(p.returncode == 0, p.stdout + p.stderr)
        p = run("cmake", "--build", ex, "-j2")
        expect(p.returncode == 0, p.stdout[-4000:] + p.stderr[-4000:])
        mru = ex / "mru_run"
        p = run(mru, "--replay-check", "--workload", "synthetic:sessions=12", "--set", "hbm.kv_budget_gib=2",
                "--out", d / "mru", env=env)
        expect(p.returncode == 0, p.stderr)
        # A cyclic scan A B C A B C through 2 blocks: LRU evicts each block just before its reuse
        # (0 hits); MRU keeps A, then C: the 4th and 6th references hit.
        expect("replay mru: 2 hits of 6" in p.stdout and "replay lru: 0 hits of 6" in p.stdout, p.stdout)
        victims = [int(l.split()[-1]) for l in p.stdout.splitlines() if l.startswith("mru victims chosen:")]
        stats = json.loads((d / "mru" / "stats.json").read_text())
        expect(victims and victims[0] > 0 and stats["demotions"] > 0, f"the model never asked mru for a victim: {victims}")
        expect(stats["requests_completed"] > 0, "no request completed under mru")
        # The registered name is a valid host.policy; an unknown one is still refused with the list.
        p = run(mru, "--set", "host.policy=nosuch", env=env)
        expect(p.returncode != 0 and "is not one of lru lfu ema priority admission mru" in p.stderr, p.stderr)
    print("ok: install, include search, plot and examples/custom_policy")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
