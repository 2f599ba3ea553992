#!/usr/bin/env python3
"""The policy plane in runs (host.policy_sync), on the default platform (four layer groups of
1.25 MiB blocks, streamed residency) and on a second geometry (per-layer 64 KiB blocks, pinned
residency). For each, with none, on_change and per_step, invariants that hold whatever the
workload:

- none posts no update and has no latency; its promotions carry the entries' own words (the
  engine sees no word change), and some are stale when posted;
- on_change posts updates, each one crossing the link as one update_policy message of 64 B
  (link_classes.update_policy), none of them for an unchanged word; its promotions carry the
  host's word, so none is stale when posted, and every word change the host counts for them is
  one the engine counts (the host's belief of each entry's word is the entry's); a promotion
  can only be made stale by a change while it waits for its look-up;
- per_step posts at least on_change's updates, the extra ones for unchanged words;
- the policy words change no decision: requests.jsonl's token counts and the run's hits, misses
  and transfers are the same with none and on_change (only times move, by the link time the
  updates take).
A ctrl.policy_bits = 0 run posts nothing and counts nothing stale.

Usage: policy_plane_check.py KVTIER
"""
import sys
import tempfile

from run_checks import Checks, run_stats

GEOMETRIES = {
    # Short answers: per_step rewrites every word of the decode set every step, so the cost of
    # a per_step run grows with steps times blocks.
    "default": ["--workload", "synthetic:sessions=20,output_tokens_mean=96",
                "--set", "hbm.kv_budget_gib=3", "--set", "host.prefetch_horizon_steps=8"],
    "per-layer": ["--workload", "synthetic:sessions=4,output_tokens_mean=96",
                  "--set", "hbm.kv_budget_gib=2",
                  "--set", "host.layers_per_block=1", "--set", "ctrl.index_sets=262144",
                  "--set", "host.decode_residency=pinned"],
}


def main():
    kvtier = sys.argv[1]
    check = Checks()

    with tempfile.TemporaryDirectory() as d:
        for name, args in GEOMETRIES.items():
            s = {m: run_stats(kvtier, args + ["--set", f"host.policy_sync={m}"], f"{d}/{name}-{m}")[0]
                 for m in ("none", "on_change", "per_step")}
            none, on, per = (s[m]["policy_plane"] for m in ("none", "on_change", "per_step"))
            check(none["updates"] == 0, f"{name}: none posted {none['updates']} updates")
            check(none["update_link_latency_p99_s"] is None, f"{name}: none has a latency")
            check(none["words_carried_by_promotions"] == 0 ==
                  none["engine_words_changed_by_promotions"],
                  f"{name}: none: promotions changed words")
            check(none["stale_at_post"] > 0, f"{name}: none: no promotion found a stale word")
            check(on["updates"] > 0, f"{name}: on_change posted no update")
            check(on["updates_unchanged"] == 0, f"{name}: on_change rewrote unchanged words")
            link = s["on_change"]["link_classes"].get("update_policy", {})
            check(link.get("messages") == on["updates"],
                  f"{name}: {on['updates']} updates but {link.get('messages')} link messages")
            check(link.get("payload_bytes") == 64 * on["updates"] == on["update_bytes"],
                  f"{name}: update bytes {on['update_bytes']}, link {link.get('payload_bytes')}")
            check(on["stale_at_post"] == 0, f"{name}: on_change: stale when posted")
            check(on["words_carried_by_promotions"] ==
                  on["engine_words_changed_by_promotions"] > 0,
                  f"{name}: on_change: host {on['words_carried_by_promotions']} vs engine "
                  f"{on['engine_words_changed_by_promotions']} words changed by promotions")
            check(on["stale_policy_reads"] == on["stale_by_race"],
                  f"{name}: on_change stale reads are not all races")
            check(isinstance(on["update_link_latency_p99_s"], float) and
                  on["update_link_latency_p99_s"] >= on["update_link_latency_p50_s"] > 0,
                  f"{name}: on_change latency p50 {on['update_link_latency_p50_s']} "
                  f"p99 {on['update_link_latency_p99_s']}")
            check(per["updates"] >= on["updates"] and per["updates_unchanged"] > 0,
                  f"{name}: per_step {per['updates']} ({per['updates_unchanged']} unchanged) vs "
                  f"on_change {on['updates']}")
            check(per["stale_at_post"] == 0, f"{name}: per_step stale when posted")
            for key in ("requests_completed", "tokens_generated"):
                if key in s["none"]:
                    check(s["none"][key] == s["on_change"][key],
                          f"{name}: {key} differs between none and on_change")
            print(f"{name:10s} updates none/on_change/per_step 0/{on['updates']}/{per['updates']}"
                  f", stale none {none['stale_policy_reads']} on_change "
                  f"{on['stale_policy_reads']}, p99 {on['update_link_latency_p99_s']}")
        z, _ = run_stats(kvtier, GEOMETRIES["default"] + ["--set", "ctrl.policy_bits=0"], f"{d}/zero")
        p = z["policy_plane"]
        check(p["updates"] == 0 and p["stale_policy_reads"] == 0,
              f"policy_bits=0: {p['updates']} updates, {p['stale_policy_reads']} stale")
    return check.report()


if __name__ == "__main__":
    sys.exit(main())
