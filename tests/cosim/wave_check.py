#!/usr/bin/env python3
"""FST waves of the RTL engine, whole and windowed (docs/cosim.md, "Waves").

usage: wave_check.py KVTIER OUT_DIR run|cosim

run:   kvtier run --set ctrl.impl=rtl --set ctrl.wave_file=F on a small workload with tier traffic
cosim: kvtier cosim --random N --trace F
Each is run for the whole run and then with ctrl.wave_start_cycle / ctrl.wave_end_cycle set to
the first quarter of the cycles the whole wave covers. Checked from the FST header block that
fstapi (Verilator's FST writer) writes at offset 0: block type FST_BL_HDR = 0, section length
329, then the first and last dumped time as big-endian 64-bit numbers (2 time units per engine
cycle, cosim/engine_model.h).
"""
import os
import struct
import subprocess
import sys

FST_BL_HDR = 0
FST_HDR_SECTION_LENGTH = 329  # fstapi.c: the header block after its type byte is 329 bytes


def header(path):
    with open(path, "rb") as f:
        head = f.read(25)
    if len(head) < 25:
        sys.exit(f"{path}: {len(head)} bytes, shorter than an FST header block")
    block, seclen, first, last = struct.unpack(">BQQQ", head)
    if block != FST_BL_HDR:
        sys.exit(f"{path}: first byte {block}, not the FST header block type {FST_BL_HDR}")
    if seclen != FST_HDR_SECTION_LENGTH:
        sys.exit(f"{path}: header section length {seclen}, expected {FST_HDR_SECTION_LENGTH}")
    if first > last:
        sys.exit(f"{path}: first dumped time {first} after the last {last}")
    return first, last


def run(kvtier, mode, wave, extra):
    if mode == "run":
        # Four sessions of three turns in 1 GiB of KV, pinned residency: about 500 promotions and
        # 1,700 demotions, an 11 MB wave in two seconds. (Streamed, the default, the squeeze
        # streams ~95,000 promotions through staging: a 390 MB wave, minutes under the sanitizers.)
        cmd = [kvtier, "run", "--workload", "synthetic:sessions=4,turns_mean=3", "--set", "hbm.kv_budget_gib=1",
               "--set", "host.decode_residency=pinned", "--set", "ctrl.impl=rtl", "--set", f"ctrl.wave_file={wave}"]
    else:
        cmd = [kvtier, "cosim", "--random", "300", "--seed", "5", "--trace", wave]
    for kv in extra:
        cmd += ["--set", kv]
    if os.path.exists(wave):
        os.remove(wave)
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit status {done.returncode}\n{done.stdout}")
    if not os.path.isfile(wave):
        sys.exit(f"{' '.join(cmd)}: wrote no {wave}")
    return os.path.getsize(wave), header(wave)


def main():
    kvtier, out, mode = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    whole = os.path.join(out, f"{mode}_whole.fst")
    size_whole, (first, last) = run(kvtier, mode, whole, [])
    if last <= first:
        sys.exit(f"{whole}: dumps only time {first}; the run should cover many cycles")
    # First quarter of the dumped cycles: starts at the first dumped cycle, so it is not empty.
    start = first // 2
    end = start + max(1, (last // 2 - start) // 4)
    window = os.path.join(out, f"{mode}_window.fst")
    size_window, (wfirst, wlast) = run(
        kvtier, mode, window, [f"ctrl.wave_start_cycle={start}", f"ctrl.wave_end_cycle={end}"])
    print(f"{mode}: whole wave {size_whole} bytes, times {first}..{last}; "
          f"window [{start}, {end}) cycles: {size_window} bytes, times {wfirst}..{wlast}")
    if not size_window < size_whole:
        sys.exit(f"windowed wave {size_window} bytes is not smaller than the whole run's {size_whole}")
    if wfirst != first:
        sys.exit(f"windowed wave starts at time {wfirst}, expected the whole wave's first time {first}")
    if not wlast <= 2 * end - 1:
        sys.exit(f"windowed wave ends at time {wlast}, after the window's last cycle {end - 1} (time {2 * end - 1})")
    if not wlast < last:
        sys.exit(f"windowed wave ends at time {wlast}, as late as the whole wave ({last})")


if __name__ == "__main__":
    main()
