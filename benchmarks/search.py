"""The search player (issue 54) against three experts and three greedy, and where the expert disagrees with it.

    python benchmarks/search.py --walls 1000                       # default budget, chengdu, seed 7
    python benchmarks/search.py --walls 200 --rollouts 24 --wall 16 --opponents expert
    python benchmarks/search.py --walls 1000 --start 1000 --save piece2 ... ; --combine piece1_expert.npz ...
    python benchmarks/search.py --combine new1_greedy.npz new2_greedy.npz --versus old1_greedy.npz old2_greedy.npz

Duplicate seating: every wall is played four times, the searching seat in each seat. For each opponent bot it
prints the search player's mean score per player-hand (base units, SE clustered by wall), the same walls played
with the expert in its seats (same opponents) and the paired per-wall difference search − expert with its SE, the
search's hands/s (CPU time of this process, one searching seat) and, from the search's own log, the decisions
where it left the expert's choice: count per player-hand and the estimated EV the expert's choice loses there
(rollout mean gain, by decision kind and tiles left), then the costliest ones. ``--combine … --versus …`` also
compares two configurations saved on the same walls (same config, seed and walls, checked): the paired per-wall
difference of the two search players' means, with its SE clustered by wall.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

import numpy as np

from simulator.hands import run_batch
from simulator.hands.game import play_hands
from simulator.kernel import state as S
from simulator.rules import load_rules
from simulator.search import SearchBot


def per_wall(raw, start: int, walls: int) -> np.ndarray:
    """The first spec's mean score per player-hand on each wall (its four seatings), walls ``start`` on."""
    p = raw.p
    spec = (p[:, S.PL_SEAT] + np.repeat(raw.rotations, 4)) % 4
    first = spec == 0
    score = p[first, S.PL_SCORE:S.PL_N].sum(axis=1).astype(np.float64)
    deal = raw.deal_ids[np.flatnonzero(first) // 4] - start
    return np.bincount(deal, weights=score, minlength=walls) / 4.0


def show(label: str, x: np.ndarray) -> str:
    return f"{label} {x.mean():+.4f} ± {x.std(ddof=1) / np.sqrt(x.shape[0]):.4f}"


def disagreements(decisions, hands: int, top: int) -> None:
    """The search's departures from the expert: per decision kind and tiles left, and the costliest."""
    if not decisions:
        print("    no decision where the search left the expert's choice")
        return
    by = defaultdict(list)
    for kind, left, gain, _se, how in decisions:
        by[(kind, how, "≤4" if left <= 4 else ("5–8" if left <= 8 else "9+"))].append(gain)
    print(f"    departures from the expert's choice: {len(decisions) / hands:.4f} per player-hand; estimated EV the"
          " expert's choice loses there (rollout mean gain), by decision, how the search departs (a discard: fold ="
          " further from ready, push = nearer, tile = as near) and tiles left:")
    for (kind, how, left), g in sorted(by.items(), key=lambda kv: -sum(kv[1])):
        print(f"      {kind:>9} {how:>7} {left:>4} left: {len(g):5d} ({len(g) / hands:.4f} a hand), mean "
              f"{np.mean(g):+.3f}, {sum(g) / hands:+.4f} a hand")
    print(f"    the {top} costliest (decision, how, tiles left, EV lost ± SE):")
    for kind, left, gain, se, how in sorted(decisions, key=lambda d: -d[2])[:top]:
        print(f"      {kind:>9} {how:>7} {left:3d} left  {gain:+.2f} ± {se:.2f}")


def report(opp: str, mine, ref, hands: int, cpu: float, decisions, top: int) -> None:
    print(f"  vs three {opp}: {show('search', mine)}; {show('expert in its seats', ref)}; "
          f"{show('paired search − expert', mine - ref)} per player-hand ({mine.shape[0]:,} walls); "
          f"{hands / cpu:.1f} hands/s ({cpu:.0f} s CPU)")
    disagreements(decisions, hands, top)


def load_pieces(paths: list[str]) -> list:
    return [np.load(p) for p in paths]


def walls_of(parts) -> list[tuple]:
    """The walls a set of pieces played: (config, opponent, seed, start, walls) per piece, in order."""
    return [(str(z["config"]), str(z["opponent"]), int(z["seed"]), int(z["start"]), int(z["search"].shape[0]))
            for z in parts]


def setting(z) -> str:
    return str(z["params"])


def combine(paths: list[str], top: int, versus: list[str] | None = None) -> None:
    """The pooled figures of pieces saved by ``--save`` (per-wall means concatenated, CPU and departures summed);
    with ``versus``, pieces of another configuration on the same walls, the paired per-wall difference."""
    parts = load_pieces(paths)
    decisions = [(str(k), int(d[0]), float(d[1]), float(d[2]), str(h))
                 for z in parts for k, h, d in zip(z["kinds"], z["how"], z["decisions"], strict=True)]
    mine = np.concatenate([z["search"] for z in parts])
    report(f"(pooled: {len(paths)} pieces)", mine, np.concatenate([z["expert"] for z in parts]),
           int(sum(z["hands"] for z in parts)), float(sum(z["cpu"] for z in parts)), decisions, top)
    if not versus:
        return
    other = load_pieces(versus)
    if walls_of(parts) != walls_of(other):
        raise SystemExit(f"--versus: not the same walls (config, opponent, seed, start, walls): {walls_of(parts)} "
                         f"against {walls_of(other)}")
    theirs = np.concatenate([z["search"] for z in other])
    hands = int(sum(z["hands"] for z in other))
    print(f"  {setting(parts[0])} − {setting(other[0])}: {show('paired', mine - theirs)} per player-hand "
          f"({mine.shape[0]:,} walls; the other {theirs.mean():+.4f}, "
          f"{hands / float(sum(z['cpu'] for z in other)):.1f} hands/s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="chengdu")
    ap.add_argument("--walls", type=int, default=250, help="walls, each played 4 times (the searching seat rotated)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--opponents", nargs="+", default=["expert", "greedy"])
    ap.add_argument("--rollouts", type=int, default=None, help="rollouts per action (default: the bot's)")
    ap.add_argument("--wall", type=int, default=None, help="search with at most this many tiles left")
    ap.add_argument("--z", type=float, default=None, help="SEs the best action must beat the expert's by")
    ap.add_argument("--confirm", type=int, default=None, help="fresh samples confirming a departure (0: none)")
    ap.add_argument("--confirm-max", type=int, default=None, help="fresh samples, at most, while a confirmation "
                    "is undecided (0: --confirm only)")
    ap.add_argument("--screen", type=float, default=None, help="SEs a best action must pass to be confirmed")
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--start", type=int, default=0, help="first wall (to split a run over processes)")
    ap.add_argument("--save", help="write per opponent the per-wall means and the departures to PREFIX_OPP.npz")
    ap.add_argument("--combine", nargs="+", metavar="NPZ", help="print the pooled figures of saved pieces (the "
                    "same opponent, disjoint walls: --start) and exit")
    ap.add_argument("--versus", nargs="+", metavar="NPZ", help="with --combine: pieces of another configuration on "
                    "the same walls, in the same order; print the paired difference of the two")
    args = ap.parse_args()
    if args.combine:
        combine(args.combine, args.top, args.versus)
        return
    if args.versus:
        raise SystemExit("--versus compares saved pieces: use it with --combine")
    params = {k: v for k, v in (("rollouts", args.rollouts), ("wall", args.wall), ("z", args.z),
                                ("confirm", args.confirm), ("screen", args.screen),
                                ("confirm_max", args.confirm_max)) if v is not None}
    ids = np.arange(4 * args.start, 4 * (args.start + args.walls), dtype=np.int64)
    bot = SearchBot(**params)
    label = (f"rollouts {bot.rollouts}, wall {bot.wall}, z {bot.z}, confirm {bot.confirm} (at most {bot.confirm_max}), "
             f"screen {bot.screen}")
    print(f"search ({label}, policy {bot.policy}), {args.config}, "
          f"{args.walls:,} walls × 4 (duplicate seating), seed {args.seed}")
    for opp in args.opponents:
        rules = load_rules(args.config, [f"seats=[search, {opp}, {opp}, {opp}]"])
        ref = per_wall(run_batch(load_rules(args.config, [f"seats=[expert, {opp}, {opp}, {opp}]"]), ids, args.seed,
                                 duplicate=True), args.start, args.walls)  # first: cheap, and checks the rules
        bot = SearchBot(**params)
        play_hands(rules, np.arange(4, dtype=np.int64), args.seed + 1, {0: bot}, duplicate=True)  # compile first
        bot.decisions.clear()
        t = time.process_time()
        raw = play_hands(rules, ids, args.seed, {0: bot}, duplicate=True)
        cpu = time.process_time() - t
        mine = per_wall(raw, args.start, args.walls)
        report(opp, mine, ref, ids.shape[0], cpu, bot.decisions, args.top)
        if args.save:
            np.savez(f"{args.save}_{opp}.npz", search=mine, expert=ref, cpu=cpu, hands=ids.shape[0],
                     config=args.config, opponent=opp, seed=args.seed, start=args.start, params=label,
                     kinds=np.array([d[0] for d in bot.decisions], dtype=object).astype(str),
                     how=np.array([d[4] for d in bot.decisions], dtype=object).astype(str),
                     decisions=np.array([d[1:4] for d in bot.decisions], np.float64).reshape(-1, 3))


if __name__ == "__main__":
    main()
