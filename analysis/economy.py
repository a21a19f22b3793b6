"""Economy: platform coins from logged scores, applied at analysis time only.

The platform rule: the loser pays ``X·N + A``, the winner receives ``ΣX·N − A`` and the house keeps ``A`` from
each player each hand (``X`` = points, ``N`` = room factor, ``A`` = rake). What is implemented here, per player
per hand, from the logged ``score_total`` (base units) and the variant's ``scoring.base``:

    coins = N · base · score_total − A

i.e. the net score in score units times the room factor, minus the rake, charged to **every** player in
**every** hand (winners, losers and players whose net is zero alike; 流局 included). In a two-sided hand this is
exactly the seed rule (a loser of ``X`` pays ``X·N + A``, a winner of ``ΣX`` gets ``ΣX·N − A``); with several
winners and kong/花猪/查大叫 payments, each player's net score plays the role of ``±X``. Since scores are
zero-sum, the four players' coins sum to ``−4A``: the house takes ``4A`` per hand. ``N`` and ``A`` come from
the manifest's ``economy`` (``{room_factor, rake}``) unless given as arguments.
"""

from __future__ import annotations

import polars as pl

from analysis.ev import By, group_columns, player_frame
from analysis.ids import with_id
from analysis.load import Run, as_run
from analysis.pieces import Pieces
from analysis.stats import LEVEL, cluster_means

PLAYERS_PER_HAND = 4


def coin_parameters(run: Run | str, room_factor: float | None = None, rake: float | None = None) -> pl.DataFrame:
    """``variant, base, room_factor, rake, house_per_hand`` (= 4·rake) per variant; arguments override."""
    run = as_run(run)
    rows = []
    for v in run.variants:
        eco = run.economy(v)
        n = eco["room_factor"] if room_factor is None else float(room_factor)
        a = eco["rake"] if rake is None else float(rake)
        rows.append((v, run.base(v), n, a, PLAYERS_PER_HAND * a))
    return pl.DataFrame(rows, schema={"variant": pl.String, "base": pl.Int64, "room_factor": pl.Float64,
                                      "rake": pl.Float64, "house_per_hand": pl.Float64}, orient="row")


def coins_expr() -> pl.Expr:
    """``room_factor · base · score_total − rake`` (needs those columns): coins of one player in one hand."""
    return pl.col("room_factor") * pl.col("base") * pl.col("score_total") - pl.col("rake")


def economy_table(run: Run | str, by: By = "bot", room_factor: float | None = None,
                  rake: float | None = None, level: float = LEVEL) -> pl.DataFrame:
    """Coins per player per hand: ``variant, <by…>, base, room_factor, rake, house_per_hand, quantity, n_hands,
    n_obs, mean, se, ci_lo, ci_hi`` with quantities ``coins`` (mean coin delta per hand) and ``coin_loss``
    (share of player-hands with a negative delta; Wilson at the effective sample size), clustered by
    ``run.cluster`` (``n_units``: hands, or walls under duplicate seating)."""
    run = as_run(run)
    cols = group_columns(by)
    params = coin_parameters(run, room_factor, rake)
    def coins(r: Run) -> pl.LazyFrame:
        return (player_frame(r, position="position" in cols).join(params.lazy(), on="variant", how="left")
                .with_columns(coins_expr().alias("coins"))
                .with_columns((pl.col("coins") < 0).alias("coin_loss")))

    out = cluster_means(Pieces(run, coins), ["variant", *cols], ["coins", "coin_loss"], cluster=run.cluster,
                        level=level, shares=["coin_loss"])
    order = pl.DataFrame({"variant": list(run.variants), "_v": range(len(run.variants))})
    out = (out.join(params, on="variant").join(order, on="variant")
           .with_columns(pl.col("quantity").replace_strict({"coins": 0, "coin_loss": 1},
                                                           return_dtype=pl.Int64).alias("_q"))
           .sort("_v", *cols, "_q")
           .select("variant", *cols, "base", "room_factor", "rake", "house_per_hand", "quantity", "n_units",
                   "n_hands", "n_obs", "mean", "se", "ci_lo", "ci_hi"))
    return with_id(out, "economy", ["quantity"])
