#!/usr/bin/env python3
"""`kvtier index-study --json` against hand-computed rows.

usage: index_study_check.py KVTIER

64 GiB tier, 5 MiB blocks (16 tokens x 80 layers of Llama-3-70B GQA bf16), 8 ways, 80 GiB
HBM: 13107 blocks -> 1639 sets needed -> 2048 sets; tag 64 - 11 = 53 bits; the 5 MiB block's
address granule is 1 MiB, so the tier address takes log2(64 GiB / 1 MiB) = 16 bits and the HBM
slot ceil(log2(80 Ki)) = 17; the length needs 23 bits (5 Mi + 1 > 2^22). Entry:
1 + 53 + 16 + 3 + 17 + 16 + 23 + 2 + 8 + 16 + 16 = 171 bits, x 16384 entries = 2,801,664 bits.
2 TiB, 64 KiB blocks: 2^25 blocks, 2^22 sets, tag 42, tier 25, HBM 21, length 17 bits:
167-bit entries, 5,603,590,144 bits, 168.05 mm^2 at 31.8 Mib/mm^2.
The co-simulation engine (40-bit tags, whole 64-bit addresses and policy) stores 310 bits.
"""
import json
import subprocess
import sys

kvtier = sys.argv[1]
out = json.loads(subprocess.run([kvtier, "index-study", "--json"], check=True, capture_output=True, text=True).stdout)
rows = {(r["tier_gib"], r["block_bytes"]): r for r in out["rows"]}
failed = []


def expect(key, field, want):
    got = rows[key][field]
    ok = abs(got - want) <= 0.005 * abs(want) if isinstance(want, float) else got == want
    if not ok:
        failed.append("%s %s: %s, expected %s" % (key, field, got, want))


if len(out["rows"]) != 12:
    failed.append("%d rows, expected 12 (2 block sizes x 6 tier sizes)" % len(out["rows"]))
a = (64, 5 * 1024 * 1024)
for field, want in [("blocks", 13107), ("sets", 2048), ("ways", 8), ("tag_bits", 53), ("tier_addr_bits", 16),
                    ("hbm_slot_bits", 17), ("length_bits", 23), ("entry_bits", 171), ("entries", 16384),
                    ("sram_bits", 2801664), ("sram_kib", 342.0), ("area_mm2", 2801664 / (31.8 * 1048576))]:
    expect(a, field, want)
b = (2048, 64 * 1024)
for field, want in [("blocks", 1 << 25), ("sets", 1 << 22), ("tag_bits", 42), ("tier_addr_bits", 25),
                    ("hbm_slot_bits", 21), ("length_bits", 17), ("entry_bits", 167), ("sram_bits", 5603590144),
                    ("area_mm2", 168.05)]:
    expect(b, field, want)
if "kvdp_cosim 310" not in out.get("rtl_entry_bits_checked", ""):
    failed.append("RTL check missing: %r" % out.get("rtl_entry_bits_checked"))
for f in failed:
    print(f)
sys.exit(1 if failed else 0)
