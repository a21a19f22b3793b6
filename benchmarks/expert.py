"""The expert bot's figures: strength (duplicate seating), game shape and speed.

    python benchmarks/expert.py                         # 2,000 walls × 4 seatings, quick
    python benchmarks/expert.py --walls 12500           # the figure quoted in docs/bots.md
    python benchmarks/expert.py --part speed --hands 20000
    python benchmarks/expert.py --part breakdown --walls 2000

- **strength**: one expert among three greedy (``seats: [expert, greedy, greedy, greedy]``), duplicate play:
  every wall is played four times with the expert in each seat, so the luck of the deal cancels. Prints the
  expert's mean score per player-hand (base units; zero-sum, so the greedy seats lose this much in total)
  with its standard error clustered by wall (the four seatings of a wall are one sample), for each
  ``--config`` given; also expert vs value and vs defensive with ``--opponents``.
- **shape**: expert×4 and greedy×4 on the same walls: winners per hand, share of hands with no winner, share
  of wins worth ≥ 2 fan, 花猪 rate and declined wins per player-hand.
- **breakdown** (only on request): where the expert gains or loses against greedy — wins, deal-ins,
  self-draw share, mean points and each score column, per seat type.
- **speed**: hands/s (CPU time of this process, warm) of expert×4 and greedy×4 in the same run.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from simulator.hands import run_batch
from simulator.logs import records
from simulator.rules import load_rules


def columns(config: str, seats: list[str], ids: np.ndarray, seed: int, *, duplicate: bool,
            overrides: list[str] | None = None) -> dict:
    rules = load_rules(config, [f"seats=[{', '.join(seats)}]", *(overrides or [])])
    return records.to_columns(run_batch(rules, ids, seed, duplicate=duplicate))


def strength(config: str, opponent: str, walls: int, seed: int, me: str = "expert", save: str | None = None,
             paired: str | None = None) -> None:
    """Print the expert's mean score per player-hand (SE clustered by wall) and its deal-ins per player-hand
    against the opponents' at the same tables and against the opponent's bot in the same seats on the same walls
    (a table of four of them; paired by wall). ``save``: write the per-wall figures (``.npz``: ``score``, the
    expert's mean per player-hand, and ``deal_in``, its deal-ins per player-hand, float64[walls]) to compare code
    versions;
    ``paired``: such a file from another version on the same walls and seed, whose per-wall difference (this run
    minus it) is printed with its SE."""
    ids = np.arange(4 * walls, dtype=np.int64)
    cols = columns(config, [me, opponent, opponent, opponent], ids, seed, duplicate=True)
    p = cols["players"]
    score = np.asarray(p["score_total"], dtype=np.float64)
    deal = np.asarray(p["deal_id"])
    mine = np.asarray(p["seat"]) == first_seat(np.asarray(p["hand_id"]))  # also apart from opponents of its bot
    per_wall = np.bincount(deal[mine], weights=score[mine], minlength=walls) / 4.0
    mean = per_wall.mean()
    se = per_wall.std(ddof=1) / np.sqrt(walls)
    d_wall, others = seat_deal_ins(cols["wins"], walls)
    # the same seats on the same walls with the opponent's bot in them (a table of four opponents): the duplicate
    # reference for deal-ins, untouched by how the first spec changes the others' game
    ref, _ = seat_deal_ins(columns(config, [opponent] * 4, ids, seed, duplicate=True)["wins"], walls)
    dd = d_wall - ref
    print(f"  {config:16s} expert vs 3 {opponent:9s}: {mean:+.3f} ± {se:.3f} base units per player-hand "
          f"(SE clustered by wall; {walls:,} walls × 4 seatings); deal-ins per player-hand: expert "
          f"{d_wall.mean():.3f} ± {d_wall.std(ddof=1) / np.sqrt(walls):.3f}, {opponent} {others:.3f} at the same "
          f"tables, {ref.mean():.3f} in the expert's seats with {opponent} in them (paired {dd.mean():+.4f} ± "
          f"{dd.std(ddof=1) / np.sqrt(walls):.4f})")
    if save:
        np.savez(save, score=per_wall, deal_in=d_wall)
    if paired:
        before = np.load(paired)
        for name, now in (("score", per_wall), ("deal_in", d_wall)):
            d = now - before[name]
            print(f"    paired against {paired}: {name} {d.mean():+.4f} ± {d.std(ddof=1) / np.sqrt(walls):.4f} "
                  f"({np.count_nonzero(d):,} of {walls:,} walls differ)")


def first_seat(hand_id: np.ndarray) -> np.ndarray:
    """The seat the first spec plays in duplicate hands ``hand_id`` (= 4·deal_id + rotation; spec = (seat +
    rotation) % 4)."""
    return (4 - hand_id % 4) % 4


def seat_deal_ins(w: dict, walls: int) -> tuple[np.ndarray, float]:
    """Deal-ins (discard wins paid) per player-hand of the first spec's seat (:func:`first_seat`), per wall
    (float64[walls]), and the other seats' per player-hand, from the wins table of a duplicate run of ``4 · walls``
    hands."""
    wh = np.asarray(w["hand_id"])
    payer = np.asarray(w["payer"])
    discard = np.asarray(w["kind"]).astype(str) == "discard"
    first = discard & (payer == first_seat(wh))
    others = discard & ~first & (payer >= 0)
    return np.bincount(wh[first] // 4, minlength=walls) / 4.0, others.sum() / (3 * 4 * walls)


def breakdown(config: str, walls: int, seed: int, me: str = "expert") -> None:
    """Where the expert gains or loses against greedy (same duplicate games as :func:`strength`): per seat
    type, wins and deal-ins per player-hand, self-draw share, mean points of those wins and deal-ins, and the
    mean of each score column (base units per player-hand)."""
    ids = np.arange(4 * walls, dtype=np.int64)
    cols = columns(config, [me, "greedy", "greedy", "greedy"], ids, seed, duplicate=True)
    p, w = cols["players"], cols["wins"]
    mine = np.asarray(p["bot"]).astype(str) == "expert"
    seat_of = dict(zip(np.asarray(p["hand_id"])[mine].tolist(), np.asarray(p["seat"])[mine].tolist(), strict=True))
    es = np.array([seat_of[h] for h in np.asarray(w["hand_id"]).tolist()], dtype=np.int64)
    winner, payer = np.asarray(w["winner"]), np.asarray(w["payer"])
    discard = np.asarray(w["kind"]).astype(str) == "discard"
    pts = np.asarray(w["points"], dtype=np.float64)
    for name, m, wm, dm in (("expert", mine, winner == es, discard & (payer == es)),
                            ("greedy", ~mine, winner != es, discard & (payer != es) & (payer >= 0))):
        n = int(m.sum())
        comps = " ".join(f"{c[6:]} {np.asarray(p[c])[m].mean():+.3f}" for c in (
            "score_win", "score_kong", "score_transfer", "score_huazhu", "score_chadajiao", "score_refund",
            "score_total"))
        print(f"  {name}: wins {wm.sum() / n:.3f}/player-hand (self-draw {np.mean(~discard[wm]):.3f}, "
              f"{pts[wm].mean():.2f} points), deal-ins {dm.sum() / n:.3f} ({pts[dm].mean():.2f} points), "
              f"ready at the end {np.asarray(p['ready'])[m].mean():.3f}  |  {comps}  (n = {n:,} player-hands)")


def shape_row(name: str, cols: dict) -> None:
    h, p, w = cols["hands"], cols["players"], cols["wins"]
    n = len(h["hand_id"])
    winners = np.asarray(h["n_winners"])
    fan = np.asarray(w["fan"])
    big = (fan >= 2).mean()
    hz = np.asarray(p["huazhu"]).astype(bool).mean()
    dec = np.asarray(p["declined_wins"]).mean()
    se_w = winners.std(ddof=1) / np.sqrt(n)
    se_big = np.sqrt(big * (1 - big) / len(fan))
    print(f"  {name:8s} winners/hand {winners.mean():.3f} ± {se_w:.3f}  no-winner {100 * (winners == 0).mean():.2f}%"
          f"  wins ≥2 fan {100 * big:.1f}% ± {100 * se_big:.1f}  花猪 {100 * hz:.2f}% of player-hands"
          f"  declined {dec:.3f}/player-hand  (n = {n:,} hands, {len(fan):,} wins)")


def shape(config: str, hands: int, seed: int, me: str = "expert") -> None:
    ids = np.arange(hands, dtype=np.int64)
    for name, bot in (("greedy", "greedy"), ("expert", me)):
        shape_row(name, columns(config, [bot] * 4, ids, seed, duplicate=False))


def speed(config: str, hands: int) -> None:
    ids = np.arange(hands, dtype=np.int64)
    rates = {}
    for bot in ("greedy", "expert"):
        rules = load_rules(config, [f"seats=[{bot}, {bot}, {bot}, {bot}]"])
        run_batch(rules, ids[:64], 0)  # warm: compile or load the cache
        t0 = time.process_time()
        run_batch(rules, ids, 0)
        rates[bot] = hands / (time.process_time() - t0)
    print(f"  greedy×4 {rates['greedy']:,.0f} hands/s, expert×4 {rates['expert']:,.0f} hands/s "
          f"(ratio {rates['expert'] / rates['greedy']:.2f}; CPU time, one core, warm, {hands:,} hands each)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", choices=["all", "strength", "breakdown", "shape", "speed"], default="all")
    ap.add_argument("--walls", type=int, default=2000, help="walls for strength (each played 4 times)")
    ap.add_argument("--hands", type=int, default=10000, help="hands for shape and speed")
    ap.add_argument("--config", nargs="+", default=["chengdu"])
    ap.add_argument("--opponents", nargs="+", default=["greedy"])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--expert", default="expert",
                    help="the expert's seat, e.g. '{bot: expert, defence: 0.5}' (parameters: docs/bots.md)")
    ap.add_argument("--save", help="strength: write per-wall figures to this .npz (one --config, one opponent)")
    ap.add_argument("--paired", help="strength: a --save file of another code version, same walls and seed")
    args = ap.parse_args()
    if args.part in ("all", "speed"):
        print("speed")
        speed(args.config[0], args.hands)
    if args.part in ("all", "shape"):
        print("game shape")
        shape(args.config[0], args.hands, args.seed, args.expert)
    if args.part == "breakdown":
        print("breakdown (one expert among three greedy, duplicate seating)")
        for cfg in args.config:
            breakdown(cfg, args.walls, args.seed, args.expert)
    if args.part in ("all", "strength"):
        print("strength")
        for cfg in args.config:
            for opp in args.opponents:
                strength(cfg, opp, args.walls, args.seed, args.expert, args.save, args.paired)


if __name__ == "__main__":
    main()
