#!/usr/bin/env python3
"""host.decision (claim C1): the device issuing a chain's promotions itself against the host
issuing each. Two geometries: the default platform (streamed residency, 4 layer groups) and the
pinned preset with streamed residency and 8 layer groups (10 layers a block). On each, both arms
must move the same blocks, and the device arm must save exactly one descriptor and one completion
per command the device issued, less the CHAIN descriptors that handed the chains over, with the
host CPU time those cost (host.descriptor_cpu_ns, host.completion_cpu_ns each).

Usage: decision_check.py KVTIER
"""
import json
import pathlib
import subprocess
import sys
import tempfile

GEOMETRIES = {
    "default": [],
    "pinned-preset-8-groups": ["--platform", "platforms/h200-cxl2-x16-pinned.ini",
                               "--set", "host.decode_residency=streamed",
                               "--set", "host.layers_per_block=10"],
}
DESCRIPTOR_NS, COMPLETION_NS = 250.0, 200.0
# Fields of a request that say which blocks it found and moved (not when).
REQUEST_BLOCKS = ["cached_tokens", "cached_hbm_tokens", "loaded_tokens", "loaded_bytes",
                  "prefilled_tokens", "generated_tokens", "preemptions", "rejected"]


def expect(cond, message):
    if not cond:
        print("FAILED:", message)
        sys.exit(1)


def run(kvtier, root, out, extra, decision):
    p = subprocess.run([kvtier, "run", *extra, "--set", f"host.decision={decision}",
                        "--set", f"host.descriptor_cpu_ns={DESCRIPTOR_NS}",
                        "--set", f"host.completion_cpu_ns={COMPLETION_NS}",
                        "--set", "sched.kv_load=layerwise", "--out", str(out)],
                       capture_output=True, text=True, cwd=root)
    expect(p.returncode == 0, f"run {decision} {extra} exited {p.returncode}: {p.stderr}")
    stats = json.loads((out / "stats.json").read_text())
    requests = [json.loads(l) for l in (out / "requests.jsonl").read_text().splitlines()]
    return stats, requests


def main():
    kvtier = sys.argv[1]
    root = pathlib.Path(__file__).resolve().parents[2]
    with tempfile.TemporaryDirectory() as d:
        for name, extra in GEOMETRIES.items():
            h, hreq = run(kvtier, root, pathlib.Path(d) / f"{name}-host", extra, "host")
            v, vreq = run(kvtier, root, pathlib.Path(d) / f"{name}-device", extra, "device")
            hc, vc = h["host_cpu"], v["host_cpu"]
            expect(hc["decision"] == "host" and vc["decision"] == "device", f"{name}: decision")
            expect(hc["chain_descriptors"] == 0 and hc["device_issued"] == 0,
                   f"{name}: the host arm handed chains over: {hc}")
            expect(vc["chain_descriptors"] > 0 and vc["device_issued_promotions"] > 0,
                   f"{name}: the device arm issued nothing: {vc}")
            # Streamed residency: the staging discards after a chain's promotions are the device's.
            expect(vc["device_issued"] > vc["device_issued_promotions"],
                   f"{name}: no staging discard issued by the device: {vc}")
            expect(vc["device_issued_promotions"] <= v["promotions"], f"{name}: more than promoted")
            # The step clock: one write per step while the device holds a streamed chain.
            expect(hc["step_clocks"] == 0 and vc["step_clocks"] > 0, f"{name}: step clocks")
            # The same blocks move.
            for k in ["promotions", "demotions"]:
                expect(h[k] == v[k], f"{name}: {k} {h[k]} (host) vs {v[k]} (device)")
            expect(h["blocks"] == v["blocks"], f"{name}: the blocks group differs")
            expect(len(hreq) == len(vreq), f"{name}: request counts differ")
            for a, b in zip(hreq, vreq):
                for k in REQUEST_BLOCKS:
                    expect(a[k] == b[k], f"{name}: request {a['id']} {k}: {a[k]} vs {b[k]}")
            # Exactly the round trips of the device-issued commands saved, less the CHAINs.
            saved = vc["device_issued"] - vc["chain_descriptors"]
            dh, dv = h["index"]["descriptors"], v["index"]["descriptors"]
            expect(dh - dv == saved, f"{name}: descriptors {dh} - {dv} != {saved}")
            ch = h["link_classes"]["completion_write"]["messages"]
            cv = v["link_classes"]["completion_write"]["messages"]
            expect(ch - cv == saved, f"{name}: completions {ch} - {cv} != {saved}")
            expect(abs((hc["descriptor_s"] - vc["descriptor_s"]) - saved * DESCRIPTOR_NS * 1e-9)
                   < 1e-9, f"{name}: descriptor CPU time saved is not {saved} x {DESCRIPTOR_NS} ns")
            expect(abs((hc["completion_s"] - vc["completion_s"]) - saved * COMPLETION_NS * 1e-9)
                   < 1e-9, f"{name}: completion CPU time saved is not {saved} x {COMPLETION_NS} ns")
            # Without the host in the loop, a promotion is usable sooner.
            expect(v["promotion_latency_p50_s"] < h["promotion_latency_p50_s"],
                   f"{name}: promotion latency p50 {v['promotion_latency_p50_s']} (device) not "
                   f"below {h['promotion_latency_p50_s']} (host)")
            print(f"{name}: {v['promotions']} promotions both ways; device issued "
                  f"{vc['device_issued']} ({vc['device_issued_promotions']} promotions) from "
                  f"{vc['chain_descriptors']} CHAINs; {saved} descriptors and completions saved; "
                  f"p50 {h['promotion_latency_p50_s'] * 1e3:.3f} -> "
                  f"{v['promotion_latency_p50_s'] * 1e3:.3f} ms")
    print("decision_check: OK")


if __name__ == "__main__":
    main()
