"""How well the expert's deal-in model (:mod:`simulator.bots.danger`) matches what opponents really held.

    python benchmarks/danger_calibration.py                                  # expert + 3 greedy, 3,000 hands, seed 5
    python benchmarks/danger_calibration.py --seats "[expert, expert, expert, expert]" --seed 6

Replays recorded hands (``table_states``) and, at every discard, asks the shipped model about every opponent
still in — its P(ready), its weight on the discarded kind, its expected loss — from the discarder's public view,
then reads the truth off the opponent's concealed tiles (ready or not, waiting on the kind or not) and the log
(won on it or not, points paid). Prints, one row per (discard, opponent) pair counted:

- by the opponent's number of melds: P(ready) model vs truly ready, P(win on this discard) model vs actual, the
  expected loss priced vs the points actually paid per deal-in, split by the one-suit (清一色) signal;
- by the weight of the kind against a ready opponent: the share of such opponents waiting on it and winning on it
  (the model assumes ``WAIT_PER_WEIGHT`` per weight unit).

The figures behind docs/bots.md ("The expert's defence", calibration of the danger model).
"""

from __future__ import annotations

import argparse

import numpy as np
import polars as pl
from table_states import deal_ins, discards, recorded_hands

from simulator.bots.danger import WAIT_PER_WEIGHT, opponent_threats, tile_risk
from simulator.bots.view import SeatView
from simulator.kernel import state as S
from simulator.kernel.shape import shanten, wait_mask
from simulator.kernel.tables import suit_table
from simulator.rules import load_rules


def pairs(seats: str, hands: int, seed: int) -> pl.DataFrame:
    """One row per (discard, opponent still in): the model's view and the truth."""
    rules = load_rules("chengdu", [f"seats={seats}"])
    params, table = rules.to_arrays(), suit_table()
    rows = []
    for _hid, dealt, events, _players in recorded_hands(rules, hands, seed):
        won = deal_ins(events)
        for i, ev, st in discards(params, dealt, events):
            d, k = ev[1], ev[2]
            view = SeatView(table, params, st.ps, st.mk, st.mt, st.nm, st.seen_by(d), np.int64(d), np.int64(st.left))
            p_ready, loss = np.zeros(S.N_SEATS), np.zeros(S.N_SEATS)
            dead, qsuit = np.full(S.N_SEATS, -1, np.int64), np.full(S.N_SEATS, -1, np.int64)
            opponent_threats(view, (p_ready, loss, dead, qsuit))
            for q in range(S.N_SEATS):
                if q == d or st.ps[q, S.PS_WON]:
                    continue
                only_q = np.zeros(S.N_SEATS)
                only_q[q] = 1.0
                weight = tile_risk(st.ps, only_q, loss, dead, qsuit, k) / (WAIT_PER_WEIGHT * loss[q])
                hand = (table, st.conc[q], st.mk[q], st.mt[q], np.int64(st.nm[q]), np.int64(st.evoid[q]))
                ready = shanten(*hand) == 0
                rows.append((int(st.nm[q]), bool(qsuit[q] >= 0), p_ready[q], weight, loss[q], ready,
                             bool(ready and (wait_mask(*hand) >> k) & 1), q in won.get(i, {}),
                             won.get(i, {}).get(q, 0)))
    return pl.DataFrame(rows, orient="row", schema={
        "melds": pl.Int64, "one_suit": pl.Boolean, "p_ready": pl.Float64, "weight": pl.Float64,
        "loss": pl.Float64, "ready": pl.Boolean, "waits": pl.Boolean, "won": pl.Boolean, "paid": pl.Float64})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seats", default="[expert, greedy, greedy, greedy]")
    ap.add_argument("--hands", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=5)
    a = ap.parse_args()
    df = pairs(a.seats, a.hands, a.seed).with_columns(
        p_win=pl.col("p_ready") * WAIT_PER_WEIGHT * pl.col("weight"))
    pl.Config.set_tbl_cols(-1)
    pl.Config.set_tbl_hide_dataframe_shape(True)
    pl.Config.set_tbl_hide_column_data_types(True)
    pl.Config.set_float_precision(4)
    print(f"{a.seats}, chengdu, {a.hands:,} hands, seed {a.seed}: {df.height:,} (discard, opponent) pairs; "
          f"P(win on the discard) model {df['p_win'].mean():.4f} vs actual {df['won'].mean():.4f}; expected loss "
          f"priced {(df['p_win'] * df['loss']).mean():.4f} vs paid {df['paid'].mean():.4f} base units per pair")
    print("by the opponent's melds and one-suit signal (loss: priced; paid: mean points of its deal-ins, n_won):")
    print(df.group_by("melds", "one_suit").agg(
        n=pl.len(), p_ready=pl.col("p_ready").mean(), ready=pl.col("ready").mean(), p_win=pl.col("p_win").mean(),
        won=pl.col("won").mean(), loss=pl.col("loss").mean(), n_won=pl.col("won").sum(),
        paid=pl.col("paid").filter(pl.col("won")).mean()).sort("melds", "one_suit"))
    print(f"against a ready opponent, by the kind's weight (the model: {WAIT_PER_WEIGHT} × weight):")
    print(df.filter(pl.col("ready")).group_by("weight").agg(
        n=pl.len(), waits=pl.col("waits").mean(), won=pl.col("won").mean()).sort("weight"))


if __name__ == "__main__":
    main()
