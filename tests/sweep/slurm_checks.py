#!/usr/bin/env python3
"""`kvtier sweep --backend slurm` on a real single-node Slurm cluster on loopback
(tests/sweep/slurm_loopback.py): the 3 x 3 grid as one job array gives the same results.csv
as the local backend; a failing point is recorded the same way; resume submits only what is
left.

Usage: slurm_checks.py KVTIER
"""
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from slurm_loopback import LoopbackCluster  # noqa: E402
from sweep_checks import GRID, WORKLOAD, expect, rows_of  # noqa: E402


def main(kvtier):
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="kvtier_slurm_") as d:
        d = pathlib.Path(d)
        local = subprocess.run([kvtier, "sweep", GRID, "--workload", WORKLOAD, "--out", d / "local", "--jobs", "2"],
                               capture_output=True, text=True)
        expect(local.returncode == 0, local.stderr)
        with LoopbackCluster(d / "cluster") as cluster:
            print(f"cluster up after {time.time() - t0:.1f} s")
            out = d / "slurm"
            # Point 4 cannot write its requests.jsonl: it fails in its array task.
            blocker = out / "points" / "0004" / "requests.jsonl"
            blocker.mkdir(parents=True)
            (blocker / "keep").write_text("x")
            argv = [kvtier, "sweep", GRID, "--workload", WORKLOAD, "--out", out, "--backend", "slurm", "--jobs", "2",
                    "--poll-seconds", "0.5", "--partition", "loop", "--time", "00:05:00", "--sbatch-arg=--nice=0"]
            p = subprocess.run(argv, capture_output=True, text=True, env=cluster.env, timeout=240)
            expect(p.returncode == 1, f"slurm sweep with one failing point exited {p.returncode}: {p.stderr}\n{cluster.logs()}")
            expect("submitted Slurm job array" in p.stderr, p.stderr)
            jobs = (out / "slurm" / "jobs.txt").read_text().splitlines()
            expect(len(jobs) == 1 and "--array=0-8%2" in jobs[0] and "--partition=loop" in jobs[0]
                   and "--time=00:05:00" in jobs[0] and "--nice=0" in jobs[0], f"sbatch command: {jobs}")
            for i in range(9):
                expect((out / "slurm" / f"task-{i}.out").exists(), f"task {i} left no Slurm output")
            rows = rows_of(out / "results.csv")
            expect(rows[4]["status"] == "failed" and "cannot write" in rows[4]["error"], rows[4])
            # A job of an earlier run still in the queue blocks a new submission (a held job
            # stands in for one), until it is gone.
            held = subprocess.run(["sbatch", "--parsable", "--hold", "--wrap", "true"], capture_output=True, text=True,
                                  env=cluster.env)
            expect(held.returncode == 0, held.stderr)
            held_id = held.stdout.strip().split(";")[0]
            with open(out / "slurm" / "jobs.txt", "a") as f:
                f.write(f"{held_id} (held by the test)\n")
            p = subprocess.run(argv, capture_output=True, text=True, env=cluster.env, timeout=60)
            expect(p.returncode == 125 and f"Slurm job {held_id} of an earlier run" in p.stderr, p.stderr)
            subprocess.run(["scancel", held_id], env=cluster.env, check=True)
            for _ in range(60):
                q = subprocess.run(["squeue", "-h", "-j", held_id], capture_output=True, text=True, env=cluster.env)
                if not q.stdout.strip():
                    break
                time.sleep(0.5)
            # Resume on the cluster: only point 4 is submitted.
            shutil.rmtree(blocker)
            p = subprocess.run(argv, capture_output=True, text=True, env=cluster.env, timeout=240)
            expect(p.returncode == 0, f"slurm resume exited {p.returncode}: {p.stderr}\n{cluster.logs()}")
            expect("8 already finished, 1 to run" in p.stdout, p.stdout)
            jobs = (out / "slurm" / "jobs.txt").read_text().splitlines()
            expect(len(jobs) == 3 and "--array=4%2" in jobs[2], f"resume submitted {jobs[-1]}")
            # A task index outside the sweep is refused, not run.
            t = subprocess.run([kvtier, "sweep", "--out", out, "--task-index", "9"], capture_output=True, text=True)
            expect(t.returncode == 125 and "is not a point of" in t.stderr, t.stderr)
        a = (d / "local" / "results.csv").read_text()
        b = (out / "results.csv").read_text()
        expect(a == b, "the Slurm sweep's results.csv differs from the local one")
        record = json.loads((out / "sweep.json").read_text())
        expect(len(record["points"]) == 9, "sweep.json points")
    print(f"ok: slurm loopback sweep in {time.time() - t0:.1f} s")


if __name__ == "__main__":
    main(str(pathlib.Path(sys.argv[1]).resolve()))
