"""What a bot's declined discard wins earned, by the opponents still in when it declined (issue 34 item 3).

    python benchmarks/declines.py                                  # expert in seat 0 of 3 greedy, 6,000 hands
    python benchmarks/declines.py --bot "{bot: expert, defence: 0.6}" --hands 24000 --seed 7

Replays the event logs of recorded hands (``table_states.recorded_hands``; seat 0 plays ``--bot``, the others
greedy). For each discard win seat 0 declined: the opponents still in at that moment (seats that had not won), and
what the decline earned: the seat's payments from the decline to the end of the hand (every ``EV_PAY`` it received
minus every one it paid, settlement included) minus the points it declined (the capped fan's points, paid by the
discarder alone). Prints, per number of opponents in, the declines per player-hand and the mean earned with its SE
(clustered by hand). "Declines with one opponent left ≤ 0" is that row's count or mean.
"""

from __future__ import annotations

import argparse

import numpy as np
import polars as pl
from table_states import recorded_hands

from analysis.stats import cluster_means
from simulator.kernel import state as S
from simulator.kernel.scoring import points_of
from simulator.rules import load_rules


def earned(events: list[tuple[int, ...]], params: np.ndarray, seat: int) -> list[tuple[int, float]]:
    """``[(opponents in, earned)]`` of each decline of ``seat`` in one hand's events."""
    won: set[int] = set()
    rows = []
    for i, (typ, who, _tile, amount, _a, _b) in enumerate(events):
        if typ == S.EV_WIN:
            won.add(who)
        elif typ == S.EV_DECLINE and who == seat:
            net = 0
            for typ2, payer, _t2, paid, payee, _c in events[i + 1:]:
                if typ2 == S.EV_PAY:
                    net += paid if payee == seat else -paid if payer == seat else 0
            rows.append((S.N_SEATS - 1 - len(won - {seat}), net - float(points_of(amount, params))))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bot", default="expert", help="seat 0's bot (the others greedy)")
    ap.add_argument("--config", default="chengdu")
    ap.add_argument("--hands", type=int, default=6000)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    rules = load_rules(args.config, [f"seats=[{args.bot}, greedy, greedy, greedy]"])
    params = rules.to_arrays()
    rows, n = [], 0
    for hid, _dealt, events, _players in recorded_hands(rules, args.hands, args.seed):
        n += 1
        rows += [(n_in, hid, x) for n_in, x in earned(events, params, 0)]
    print(f"{args.bot} in seat 0 of 3 greedy, {args.config}, seed {args.seed}, {n:,} hands")
    frame = pl.LazyFrame(rows, schema={"n_in": pl.Int64, "hand_id": pl.Int64, "earned": pl.Float64}, orient="row")
    got = {r["n_in"]: r for r in cluster_means(frame, ["n_in"], ["earned"]).iter_rows(named=True)}
    for n_in in (1, 2, 3):
        if n_in not in got:
            print(f"  {n_in} opponent(s) in: no declines")
            continue
        r = got[n_in]
        se = "n/a" if r["se"] is None else f"{r['se']:.3f}"
        print(f"  {n_in} opponent(s) in: {r['n_obs']:,} declines ({r['n_obs'] / n:.4f} per player-hand), earned "
              f"{r['mean']:+.3f} ± {se} base units each (SE clustered by hand)")


if __name__ == "__main__":
    main()
