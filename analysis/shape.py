"""Game shape: how hands unfold under each variant (流局, winners, turns, 花猪, 查大叫, kongs, deal-ins, caps,
declined wins).

:func:`game_shape` returns one row per variant and metric with ``n`` (the denominator: hands, wins or
player-hands), ``n_units`` (independent units: hands, or walls under duplicate seating), an estimate, an SE and
a 95% interval. Every estimate is a ratio mean clustered by the independent unit (``Run.cluster``); shares get
the Wilson interval at the effective sample size (inside [0, 1], never zero-width), means ``mean ± z·se``.
Three kinds of metric, named by ``per``: ``hand`` (one observation per hand), ``win`` (several wins per hand)
and ``player-hand`` (the four players of every hand).

Definitions: 流局 ``exhaustive_draw`` as logged (wall empty with two or more players still in; every hand under
``mode: xueliu``); ``winners`` counts players who won, ``wins`` every win (they differ under 血流); 查大叫 = hands
where any player's ``score_chadajiao`` is nonzero; points exchanged = ``Σ|score_total|/2`` over the four players
(base units moved from losers to winners); deal-in = a player-hand in which the player was the single
payer of at least one ``discard`` or ``rob_kong`` win; the cap binds when ``capped_fan < fan``; wins ≥ 2 fan =
share of wins worth at least 2 fan before the cap (a big hand reached, whatever the cap pays).
:func:`decline_effect` compares players who declined at least one win with those who did not.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from analysis.ev import By, group_columns
from analysis.ids import with_id
from analysis.load import Run, as_run
from analysis.pieces import Pieces, collect_pieces, summed
from analysis.stats import (
    LEVEL,
    cluster_moments,
    diff_rows,
    diff_sides,
    influence_queries,
    means_from_moments,
    z_value,
)

COLUMNS = ("variant", "metric", "per", "n", "n_units", "estimate", "se", "ci_lo", "ci_hi")


Rows = Callable[[pl.DataFrame], pl.DataFrame]


def _rows(lf: pl.LazyFrame, groups: list[tuple[dict[str, pl.Expr], bool]], per: str, cluster: str,
          level: float) -> tuple[pl.LazyFrame, list[Rows]]:
    """Cluster-robust means of expressions over the rows of ``lf``, clustered by ``cluster``: one set of moments
    for every group of expressions (one group-by by unit), and for each group ``(values, share)`` the function
    that makes its rows once collected (:func:`game_shape` collects all frames at once); ``share``: the
    expressions are 0/1 indicators and get the effective-n Wilson interval. A frame ``per`` hand has one row per
    hand (:func:`analysis.stats.cluster_moments`' ``one_row``)."""
    every = {k: e for values, _ in groups for k, e in values.items()}
    mom = cluster_moments(lf.select("variant", cluster, *[e.cast(pl.Float64).alias(k) for k, e in every.items()]),
                          ["variant"], list(every), cluster, one_row=per == "hand")

    def maker(values: list[str], share: bool) -> Rows:
        def rows(collected: pl.DataFrame) -> pl.DataFrame:
            out = means_from_moments(collected, ["variant"], values, level=level, name="metric",
                                     shares=values if share else ())
            return out.select("variant", "metric", pl.lit(per).alias("per"), pl.col("n_obs").alias("n"), "n_units",
                              pl.col("mean").alias("estimate"), "se", "ci_lo", "ci_hi")
        return rows

    return mom, [maker(list(values), share) for values, share in groups]


def game_shape(run: Run | str, level: float = LEVEL) -> pl.DataFrame:
    """Per variant: ``variant, metric, per, n, n_units, estimate, se, ci_lo, ci_hi`` (see the module
    docstring; ``n`` = hands, wins or player-hands, ``n_units`` = independent units, ``Run.unit``)."""
    run = as_run(run)
    parts = _shape_parts(run, level)
    collected = [summed(frames, ["variant"]) for frames in
                 collect_pieces(run, lambda piece: [mom for mom, _ in _shape_parts(piece, level)])]
    order = {v: i for i, v in enumerate(run.variants)}
    out = pl.concat([rows(mom) for (_, makers), mom in zip(parts, collected, strict=True) for rows in makers])
    out = out.with_row_index("_i")
    return with_id(out.with_columns(pl.col("variant").replace_strict(order, return_dtype=pl.Int64).alias("_v"))
                   .sort("_v", "_i").drop("_v", "_i"), "shape", ["per", "metric"])


def _shape_parts(run: Run, level: float) -> list[tuple[pl.LazyFrame, list[Rows]]]:
    """The moments of every :func:`game_shape` metric on ``run`` (or a piece of it), with their row makers."""
    cl = run.cluster
    hands, players, wins = run.hands(), run.players(), run.wins()
    per_hand = (players.group_by("variant", "hand_id")
                .agg(pl.col("huazhu").any().alias("_huazhu"), (pl.col("score_chadajiao") != 0).any().alias("_cdj"),
                     (pl.col("score_total").abs().sum() / 2).alias("_moved"))
                .join(hands, on=["variant", "hand_id"], how="right"))
    cap_hands = (wins.group_by("variant", "hand_id").agg((pl.col("capped_fan") < pl.col("fan")).any().alias("_cap"))
                 .join(hands.select("variant", *run.id_columns), on=["variant", "hand_id"], how="right"))
    dealt_in = (wins.filter(pl.col("kind").is_in(["discard", "rob_kong"]) & (pl.col("payer") >= 0))
                .select("variant", "hand_id", pl.col("payer").alias("seat")).unique()
                .with_columns(pl.lit(True).alias("_dealt_in")))
    player_rows = players.join(dealt_in, on=["variant", "hand_id", "seat"], how="left")
    # 血流 (mode: xueliu): all four players can win, and a hand has more wins than winners
    most = 4 if any(run.rules(v).get("mode") == "xueliu" for v in run.variants) else 3
    parts = [
        _rows(hands, [({"exhaustive_draw (流局)": pl.col("exhaustive_draw"),
                        **{f"winners={k}": pl.col("n_winners") == k for k in range(most + 1)}}, True),
                      ({"winners per hand": pl.col("n_winners"), "wins per hand": pl.col("n_wins"),
                        "turns per hand": pl.col("turns"), "kongs per hand": pl.col("n_kongs")}, False)],
              "hand", cl, level),
        _rows(per_hand, [({"points exchanged per hand": pl.col("_moved")}, False),
                         ({"huazhu (花猪) any": pl.col("_huazhu").fill_null(False),
                           "chadajiao (查大叫) any": pl.col("_cdj").fill_null(False)}, True)], "hand", cl, level),
        _rows(cap_hands, [({"cap binds (any win)": pl.col("_cap").fill_null(False)}, True)], "hand", cl, level),
        _rows(wins, [({"self-draw share": pl.col("kind") == "self_draw",
                       "discard-win share": pl.col("kind") == "discard",
                       "rob-kong share": pl.col("kind") == "rob_kong",
                       "cap binds": pl.col("capped_fan") < pl.col("fan"),
                       "wins ≥ 2 fan": pl.col("fan") >= 2}, True)], "win", cl, level),
        _rows(players.filter(pl.col("won")), [({"win turn": pl.col("win_turn")}, False)], "win", cl, level),
        _rows(player_rows, [({"deal-in rate": pl.col("_dealt_in").fill_null(False),
                              "huazhu (花猪) rate": pl.col("huazhu"),
                              "declined a win": pl.col("declined_wins") > 0}, True),
                            ({"declined wins per player": pl.col("declined_wins")}, False)], "player-hand", cl, level),
    ]
    return parts


def decline_effect(run: Run | str, by: By = "bot", level: float = LEVEL) -> pl.DataFrame:
    """Players who declined at least one win (``declined``) vs those who declined none, per variant and group.

    Rows: ``variant, <by…>, declined, quantity, n_units, n_hands, n_obs, mean, se, ci_lo, ci_hi`` for ``won`` (share
    of player-hands won), ``capped_fan`` (mean capped fan of the eventual win, winners only; under ``mode: xueliu``
    of the first win) and
    ``score_total`` (mean score per hand, base units); and ``diff`` rows (declined − not, ``declined`` null,
    ``n_obs`` = both groups, ``n_units`` = units with an observation in either). The two groups share hands
    (a bot at several seats, both winners of one hand), so the diff's SE is not ``√(se₁² + se₀²)``: it is the
    hand-clustered SE of the group coefficient in the OLS ``quantity ~ declined``
    (:func:`analysis.stats.cluster_diff_se`), which keeps the covariance of the two means. This is
    observational: a player who declined held a winnable hand, so the comparison is not causal — a paired
    comparison against a variant whose bot never declines answers that."""
    run = as_run(run)
    cols = group_columns(by)
    keys = ["variant", *cols, "declined"]
    cl = run.cluster

    def frame(r: Run) -> pl.LazyFrame:
        return r.players().select("variant", *dict.fromkeys([*cols, cl, "hand_id"]), "won", "capped_fan",
                                  "score_total",
                                  (pl.col("declined_wins") > 0).alias("declined"),
                                  pl.col("won").cast(pl.Float64).alias("won_f"))

    # two passes over the pieces (each reads the players once): the moments of both groups' means, which hold
    # the sums of cluster_diff_se's first pass; then the units' influence terms of the three differences
    players, gkeys, every = Pieces(run, frame), ["variant", *cols], ["won_f", "score_total"]
    moms = [summed(f, keys) for f in players.collect(lambda x: [
        cluster_moments(x, keys, every, cl), cluster_moments(x.filter(pl.col("won")), keys, ["capped_fan"], cl)])]
    allp = means_from_moments(moms[0], keys, every, level=level, shares=["won_f"])
    fans = means_from_moments(moms[1], keys, ["capped_fan"], level=level)
    out = pl.concat([allp, fans]).with_columns(pl.col("quantity").replace({"won_f": "won"}))
    z = z_value(level)
    sides = [diff_sides(moms[0], keys, v) for v in every] + [diff_sides(moms[1], keys, "capped_fan")]
    infl = [summed(f, gkeys) for f in players.collect(lambda x: [
        *influence_queries(x, gkeys, "declined", every, sides[:2], cl),
        *influence_queries(x.filter(pl.col("won")), gkeys, "declined", ["capped_fan"], sides[2:], cl)])]
    diff = pl.concat([diff_rows(sides[i], infl[i], gkeys, "declined").with_columns(pl.lit(q).alias("quantity"))
                      for i, q in ((0, "won"), (2, "capped_fan"), (1, "score_total"))])
    diff = diff.select(*gkeys, pl.lit(None, dtype=pl.Boolean).alias("declined"), "quantity", "n_units",
                       pl.lit(None, dtype=pl.Int64).alias("n_hands"), "n_obs",
                       pl.col("diff").alias("mean"), "se",
                       pl.when(pl.col("se") > 0).then(pl.col("diff") - z * pl.col("se")).alias("ci_lo"),
                       pl.when(pl.col("se") > 0).then(pl.col("diff") + z * pl.col("se")).alias("ci_hi"))
    order = {v: i for i, v in enumerate(run.variants)}
    qorder = {"won": 0, "capped_fan": 1, "score_total": 2}
    out = (pl.concat([out.select(diff.columns), diff])
           .with_columns(pl.col("variant").replace_strict(order, return_dtype=pl.Int64).alias("_v"),
                         pl.col("quantity").replace_strict(qorder, return_dtype=pl.Int64).alias("_q"),
                         pl.col("declined").cast(pl.Int8).fill_null(2).alias("_d"))
           .sort("_v", *cols, "_q", "_d").drop("_v", "_q", "_d"))
    side = pl.when(pl.col("declined")).then(pl.lit("declined")).when(~pl.col("declined")).then(pl.lit("not"))
    return with_id(out.with_columns(side.otherwise(pl.lit("difference")).alias("_side")), "decline",
                   ["quantity", "_side"]).drop("_side")
