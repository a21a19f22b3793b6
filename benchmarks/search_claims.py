"""The search player with and without searching claims (issue 54): the same walls, the same budget, paired.

    python benchmarks/search_claims.py --walls 2000 --seed 20                   # both opponents, default budget
    python benchmarks/search_claims.py --walls 1000 --start 1000 --seed 20 --opponents greedy --save piece2
    python benchmarks/search_claims.py --combine piece1_greedy.npz piece2_greedy.npz     # pooled pieces

Duplicate seating (every wall four times, the searching seat in each seat). For each opponent bot it prints the
expert in the searching seats, the search without claims (`claims: false`) and with (`claims: true`), each paired
wall by wall against the expert, the per-wall paired difference claims − no claims with its SE (SE clustered by
wall), each version's hands/s (CPU time of this process, one searching seat), and the departures of the claims
version at decisions on another seat's tile — pung, exposed kong, pass, win, decline — with their count and the
rollouts' estimated gain per player-hand (their sum estimates what claim search adds).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from search import per_wall, show  # noqa: E402  (benchmarks/search.py)

from simulator.hands import run_batch  # noqa: E402
from simulator.hands.game import play_hands  # noqa: E402
from simulator.rules import load_rules  # noqa: E402
from simulator.search import CLAIMS, SearchBot  # noqa: E402


def by_kind(decisions, hands: int) -> None:
    """The claims version's departures: at decisions on another seat's tile by what it did, then the rest."""
    by = defaultdict(list)
    for kind, _left, gain, _se, how in decisions:
        by[(kind, how)].append(gain)
    print("    departures from the expert's choice (decision, what the search did): count, per player-hand, mean "
          "estimated gain, estimated gain a player-hand")
    for (kind, how), g in sorted(by.items(), key=lambda kv: (kv[0][0] not in CLAIMS, -sum(kv[1]))):
        print(f"      {kind:>9} {how:>8}: {len(g):5d}  {len(g) / hands:.4f}  {np.mean(g):+.3f}  {sum(g) / hands:+.4f}")
    claim = [d[2] for d in decisions if d[4] in ("pung", "kong", "pass", "win", "decline") and d[0] in CLAIMS]
    print(f"    on another seat's tile (claims, wins, declines): {len(claim)} departures, estimated "
          f"{sum(claim) / hands:+.4f} a player-hand")


def report(opp: str, ref, mine: dict, cpu: dict, n_dec: dict, decisions, hands: int) -> None:
    walls = ref.shape[0]
    print(f"  vs three {opp} ({walls:,} walls): {show('expert', ref)}")
    for claims in (False, True):
        print(f"    claims {str(claims).lower():>5}: {show('search', mine[claims])}; "
              f"{show('paired search − expert', mine[claims] - ref)}; {hands / cpu[claims]:.1f} hands/s "
              f"({cpu[claims]:.0f} s CPU); {n_dec[claims] / hands:.4f} departures a hand")
    print(f"    {show('paired claims − no claims', mine[True] - mine[False])} per player-hand "
          f"({int(np.count_nonzero(mine[True] != mine[False])):,} walls differ)")
    by_kind(decisions, hands)


def combine(paths: list[str]) -> None:
    """The pooled figures of pieces saved by ``--save`` (the same opponent, disjoint walls)."""
    z = [np.load(p) for p in paths]
    cat = {k: np.concatenate([x[k] for x in z]) for k in ("expert", "off", "on")}
    decisions = [(str(d[0]), int(d[2]), float(d[3]), float(d[4]), str(d[1])) for x in z for d in x["decisions"]]
    report(f"(pooled: {len(paths)} pieces)", cat["expert"], {False: cat["off"], True: cat["on"]},
           {c: float(sum(x[f"cpu_{k}"] for x in z)) for c, k in ((False, "off"), (True, "on"))},
           {c: sum(int(x[f"n_{k}"]) if f"n_{k}" in x.files else float("nan") for x in z)  # nan: not saved
            for c, k in ((False, "off"), (True, "on"))}, decisions,
           int(sum(x["hands"] for x in z)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="chengdu")
    ap.add_argument("--walls", type=int, default=250, help="walls, each played 4 times (the searching seat rotated)")
    ap.add_argument("--start", type=int, default=0, help="first wall (to split a run over processes)")
    ap.add_argument("--seed", type=int, default=20)
    ap.add_argument("--opponents", nargs="+", default=["greedy", "expert"])
    ap.add_argument("--save", help="write per opponent the per-wall means to PREFIX_OPP.npz")
    ap.add_argument("--combine", nargs="+", metavar="NPZ", help="print the pooled figures of saved pieces and exit")
    args = ap.parse_args()
    if args.combine:
        combine(args.combine)
        return
    ids = np.arange(4 * args.start, 4 * (args.start + args.walls), dtype=np.int64)
    print(f"search (default budget) without / with claims, {args.config}, {args.walls:,} walls × 4 (duplicate "
          f"seating, walls {args.start}–{args.start + args.walls - 1}), seed {args.seed}")
    for opp in args.opponents:
        rules = load_rules(args.config, [f"seats=[search, {opp}, {opp}, {opp}]"])
        ref = per_wall(run_batch(load_rules(args.config, [f"seats=[expert, {opp}, {opp}, {opp}]"]), ids, args.seed,
                                 duplicate=True), args.start, args.walls)
        mine, cpu, bots = {}, {}, {}
        for claims in (False, True):
            bot = bots[claims] = SearchBot(claims=claims)
            play_hands(rules, np.arange(4, dtype=np.int64), args.seed + 1, {0: bot}, duplicate=True)  # compile
            bot.decisions.clear()
            t = time.process_time()
            raw = play_hands(rules, ids, args.seed, {0: bot}, duplicate=True)
            cpu[claims] = time.process_time() - t
            mine[claims] = per_wall(raw, args.start, args.walls)
        n_dec = {c: len(bots[c].decisions) for c in (False, True)}
        report(opp, ref, mine, cpu, n_dec, bots[True].decisions, ids.shape[0])
        if args.save:
            np.savez(f"{args.save}_{opp}.npz", expert=ref, off=mine[False], on=mine[True], cpu_off=cpu[False],
                     cpu_on=cpu[True], hands=ids.shape[0], n_off=n_dec[False], n_on=n_dec[True],
                     decisions=np.array([(d[0], d[4], d[1], d[2], d[3]) for d in bots[True].decisions], dtype=object)
                     .astype(str).reshape(-1, 5))


if __name__ == "__main__":
    main()
