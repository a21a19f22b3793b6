"""The search player with and without searching claims (issue 54): the same walls, the same budget, paired.

    python benchmarks/search_claims.py --walls 2000 --seed 20                   # both opponents, default budget
    python benchmarks/search_claims.py --walls 2000 --seed 20 --opponents greedy --save piece

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="chengdu")
    ap.add_argument("--walls", type=int, default=250, help="walls, each played 4 times (the searching seat rotated)")
    ap.add_argument("--start", type=int, default=0, help="first wall (to split a run over processes)")
    ap.add_argument("--seed", type=int, default=20)
    ap.add_argument("--opponents", nargs="+", default=["greedy", "expert"])
    ap.add_argument("--save", help="write per opponent the per-wall means to PREFIX_OPP.npz")
    args = ap.parse_args()
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
        print(f"  vs three {opp} ({args.walls:,} walls): {show('expert', ref)}")
        for claims in (False, True):
            print(f"    claims {str(claims).lower():>5}: {show('search', mine[claims])}; "
                  f"{show('paired search − expert', mine[claims] - ref)}; {ids.shape[0] / cpu[claims]:.1f} hands/s "
                  f"({cpu[claims]:.0f} s CPU); {len(bots[claims].decisions) / ids.shape[0]:.4f} departures a hand")
        print(f"    {show('paired claims − no claims', mine[True] - mine[False])} per player-hand "
              f"({int(np.count_nonzero(mine[True] != mine[False])):,} walls differ)")
        by_kind(bots[True].decisions, ids.shape[0])
        if args.save:
            np.savez(f"{args.save}_{opp}.npz", expert=ref, off=mine[False], on=mine[True], cpu_off=cpu[False],
                     cpu_on=cpu[True], hands=ids.shape[0],
                     decisions=np.array([(d[0], d[4], d[1], d[2], d[3]) for d in bots[True].decisions], dtype=object)
                     .astype(str).reshape(-1, 5))


if __name__ == "__main__":
    main()
