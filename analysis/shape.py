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

import numpy as np
import polars as pl

from analysis.ev import By, group_columns
from analysis.ids import with_id
from analysis.load import Run, as_run
from analysis.pieces import collect_pieces, summed
from analysis.stats import (
    LEVEL,
    diff_rows,
    diff_sides,
    means_from_moments,
    z_value,
)
from analysis.unit_sums import group_codes, moments_frame, positions, unit_codes, unit_moments

COLUMNS = ("variant", "metric", "per", "n", "n_units", "estimate", "se", "ci_lo", "ci_hi")


Rows = Callable[[pl.DataFrame], pl.DataFrame]

WIN_KINDS = ("self_draw", "discard", "rob_kong")


def _maker(values: list[str], share: bool, per: str, level: float) -> Rows:
    """The rows of one group of metrics (``share``: 0/1 indicators, with the effective-n Wilson interval) from
    their moments collected by variant."""
    def rows(collected: pl.DataFrame) -> pl.DataFrame:
        out = means_from_moments(collected, ["variant"], values, level=level, name="metric",
                                 shares=values if share else ())
        return out.select("variant", "metric", pl.lit(per).alias("per"), pl.col("n_obs").alias("n"), "n_units",
                          pl.col("mean").alias("estimate"), "se", "ci_lo", "ci_hi")
    return rows


def _metrics(most: int) -> list[tuple[str, list[tuple[list[str], bool]]]]:
    """The metrics of :func:`game_shape`, six sets of rows (each its own moments): ``(per, [(names, share)])``."""
    return [
        ("hand", [(["exhaustive_draw (流局)", *[f"winners={k}" for k in range(most + 1)]], True),
                  (["winners per hand", "wins per hand", "turns per hand", "kongs per hand"], False)]),
        ("hand", [(["points exchanged per hand"], False), (["huazhu (花猪) any", "chadajiao (查大叫) any"], True)]),
        ("hand", [(["cap binds (any win)"], True)]),
        ("win", [(["self-draw share", "discard-win share", "rob-kong share", "cap binds", "wins ≥ 2 fan"], True)]),
        ("win", [(["win turn"], False)]),
        ("player-hand", [(["deal-in rate", "huazhu (花猪) rate", "declined a win"], True),
                         (["declined wins per player"], False)]),
    ]


def game_shape(run: Run | str, level: float = LEVEL) -> pl.DataFrame:
    """Per variant: ``variant, metric, per, n, n_units, estimate, se, ci_lo, ci_hi`` (see the module
    docstring; ``n`` = hands, wins or player-hands, ``n_units`` = independent units, ``Run.unit``).

    Each piece of the run (:mod:`analysis.pieces`) is read once per variant (the columns of its three tables)
    and reduced with numpy to the metrics' per-unit moments (:func:`_piece_moments`), summed over the pieces."""
    run = as_run(run)
    most = 4 if any(run.rules(v).get("mode") == "xueliu" for v in run.variants) else 3
    metrics = _metrics(most)
    collected = [summed(frames, ["variant"]) for frames in
                 collect_pieces(run, _piece_queries,
                                lambda frames: _piece_moments(run, frames, metrics, most))]
    order = {v: i for i, v in enumerate(run.variants)}
    out = pl.concat([_maker(values, share, per, level)(mom) for (per, groups), mom in zip(metrics, collected,
                                                                                        strict=True)
                     for values, share in groups])
    out = out.with_row_index("_i")
    return with_id(out.with_columns(pl.col("variant").replace_strict(order, return_dtype=pl.Int64).alias("_v"))
                   .sort("_v", "_i").drop("_v", "_i"), "shape", ["per", "metric"])


def _piece_queries(run: Run) -> list[pl.LazyFrame]:
    """The columns :func:`_piece_moments` reads, per variant: its hands, players and wins (row values in their
    logged types, booleans or numbers, nulls as 0 or false: nulls add nothing to a sum)."""
    cl = run.cluster
    ids = list(dict.fromkeys(["hand_id", cl]))
    f = [pl.col("exhaustive_draw"), pl.col("n_winners"), pl.col("n_wins"), pl.col("turns"), pl.col("n_kongs")]
    out = []
    for v in run.variants:
        out += [run.hands(v).select(*ids, *[e.fill_null(strategy="zero") for e in f]),
                run.players(v).select(*ids, pl.col("seat").cast(pl.Int64),
                                      *[e.fill_null(strategy="zero") for e in (
                                          pl.col("huazhu"),
                                          (pl.col("score_chadajiao") != 0).alias("cdj"),
                                          pl.col("score_total").abs().alias("moved"), pl.col("won"),
                                          pl.col("win_turn"),
                                          (pl.col("declined_wins") > 0).alias("declined"),
                                          pl.col("declined_wins"))]),
                run.wins(v).select(*ids, pl.col("payer").cast(pl.Int64).fill_null(-1),
                                   *[e.fill_null(strategy="zero") for e in (
                                       *[(pl.col("kind") == k).alias(k) for k in WIN_KINDS],
                                       (pl.col("capped_fan") < pl.col("fan")).alias("cap"),
                                       (pl.col("fan") >= 2).alias("fan2"))])]
    return out


def _piece_moments(run: Run, frames: list[pl.DataFrame], metrics: list, most: int) -> list[pl.DataFrame]:
    """One piece's six moment frames (one row per variant) of :func:`game_shape`'s metrics, from the frames of
    :func:`_piece_queries`: per-hand values (any huazhu, chadajiao, a binding cap; points moved) and each
    player's deal-in are gathered by hand position with numpy, then summed by unit (:mod:`analysis.unit_sums`)."""
    cl = run.cluster
    rows: list[list[dict]] = [[] for _ in metrics]
    for i, v in enumerate(run.variants):
        h, p, w = frames[3 * i: 3 * i + 3]
        hid = h["hand_id"].to_numpy()
        nh = hid.size
        pidx, widx = positions(hid, p["hand_id"].to_numpy()), positions(hid, w["hand_id"].to_numpy())
        pin, win = pidx >= 0, widx >= 0  # rows of a hand the piece's hands table holds (all, in a sound run)

        def hand_sum(idx: np.ndarray, inside: np.ndarray, x: np.ndarray, nh: int = nh) -> np.ndarray:
            return np.bincount(idx[inside], weights=x[inside], minlength=nh)

        winners = col(h, "n_winners")
        hand_values = {"exhaustive_draw (流局)": col(h, "exhaustive_draw"),
                       **{f"winners={k}": (winners == k).astype(np.float64) for k in range(most + 1)},
                       "winners per hand": winners, "wins per hand": col(h, "n_wins"),
                       "turns per hand": col(h, "turns"), "kongs per hand": col(h, "n_kongs")}
        per_hand = {"points exchanged per hand": hand_sum(pidx, pin, col(p, "moved")) / 2,
                    "huazhu (花猪) any": (hand_sum(pidx, pin, col(p, "huazhu")) > 0).astype(np.float64),
                    "chadajiao (查大叫) any": (hand_sum(pidx, pin, col(p, "cdj")) > 0).astype(np.float64)}
        cap_any = {"cap binds (any win)": (hand_sum(widx, win, col(w, "cap")) > 0).astype(np.float64)}
        win_values = {"self-draw share": col(w, "self_draw"), "discard-win share": col(w, "discard"),
                      "rob-kong share": col(w, "rob_kong"), "cap binds": col(w, "cap"),
                      "wins ≥ 2 fan": col(w, "fan2")}
        payer = col(w, "payer")
        dealing = win & ((col(w, "discard") > 0) | (col(w, "rob_kong") > 0)) & (payer >= 0)
        dealt = np.zeros(nh * 4 + 4, bool)
        dealt[widx[dealing] * 4 + payer[dealing]] = True
        seat = col(p, "seat")
        seated = pin & (seat >= 0) & (seat < 4)
        dealt_in = np.where(seated, dealt[np.where(seated, pidx * 4 + seat, 0)], False)
        won = col(p, "won") > 0
        player_values = {"deal-in rate": dealt_in.astype(np.float64), "huazhu (花猪) rate": col(p, "huazhu"),
                         "declined a win": col(p, "declined"), "declined wins per player": col(p, "declined_wins")}
        every = np.ones(p.height, bool)
        sets = [(h, None, hand_values), (h, None, per_hand), (h, None, cap_any), (w, None, win_values),
                (p, won, {"win turn": col(p, "win_turn")[won]}), (p, every, player_values)]
        for j, (df, keep, values) in enumerate(sets):
            units, hands = col(df, cl), col(df, "hand_id") if cl != "hand_id" else None
            if keep is not None:
                units, hands = units[keep], None if hands is None else hands[keep]
            rows[j].append({"variant": v, **unit_moments(units, values, hands)})
    return [moments_frame(r, [k for names, _ in groups for k in names], {"variant": pl.String})
            for r, (_, groups) in zip(rows, metrics, strict=True)]


def _decline_rows(run: Run, frames: list[pl.DataFrame], cols: list[str]):  # noqa: ANN202 - a generator
    """Per variant and group of ``cols`` of one piece's players (:func:`decline_effect`'s queries): the group's
    keys, its rows' units, hand ids (walls or sessions as units), values, declined and won flags."""
    for v, df in zip(run.variants, frames, strict=True):
        code, groups = group_codes(df, cols)
        units, hands = col(df, run.cluster), col(df, "hand_id") if run.cluster != "hand_id" else None
        values = {"won_f": col(df, "won").astype(np.float64), "score_total": col(df, "score_total"),
                  "capped_fan": col(df, "capped_fan")}
        declined, won = col(df, "declined"), col(df, "won")
        for g, key in enumerate(groups):
            sel = code == g
            yield ({"variant": v, **dict(zip(cols, key, strict=True))}, units[sel],
                   None if hands is None else hands[sel], {k: x[sel] for k, x in values.items()}, declined[sel],
                   won[sel])


def _decline_moments(run: Run, frames: list[pl.DataFrame], cols: list[str]) -> list[pl.DataFrame]:
    """One piece's moments of :func:`decline_effect`'s group means (per variant, group and side: won and score
    of every player-hand, capped fan of the winners), with numpy (:mod:`analysis.unit_sums`)."""
    rows: tuple[list, list] = ([], [])
    for named, units, hands, values, declined, won in _decline_rows(run, frames, cols):
        for side in (False, True):
            for i, (keep, names) in enumerate(((declined == side, ("won_f", "score_total")),
                                               ((declined == side) & won, ("capped_fan",)))):
                if keep.any():
                    rows[i].append({**named, "declined": side, **unit_moments(
                        units[keep], {k: values[k][keep] for k in names}, None if hands is None else hands[keep])})
    schema = {"variant": pl.String, **{c: frames[0].schema[c] for c in cols}, "declined": pl.Boolean}
    return [moments_frame(rows[0], ["won_f", "score_total"], schema), moments_frame(rows[1], ["capped_fan"], schema)]


def _decline_influence(run: Run, frames: list[pl.DataFrame], cols: list[str],
                       sides: list[pl.DataFrame]) -> list[pl.DataFrame]:
    """One piece's influence terms of the three differences (won, score, capped fan: ``sides`` in that order,
    the summed sides of :func:`analysis.stats.diff_sides`): per variant and group, the units with a row and
    ``_U = Σ_h u_h²`` with ``u_h = (S₁ − T₁/N₁·m₁)/N₁ − (S₀ − T₀/N₀·m₀)/N₀``
    (:func:`analysis.stats.cluster_diff_se`; the same terms, summed in a fixed order)."""
    gcols = ["variant", *cols]
    means = [{(*row[:-3], row[-3]): (row[-1], row[-2]) for row in side.select(*gcols, "declined", "_N", "_T")
              .iter_rows()} for side in sides]
    rows: tuple[list, list, list] = ([], [], [])
    for named, units, _, values, declined, won in _decline_rows(run, frames, cols):
        key = tuple(named.values())
        for i, (name, keep) in enumerate((("won_f", None), ("score_total", None), ("capped_fan", won))):
            u_units, x, dec = (units, values[name], declined) if keep is None else (
                units[keep], values[name][keep], declined[keep])
            if u_units.size == 0:
                continue
            code, C = unit_codes(u_units)
            u = np.zeros(C)
            for side, sign in ((True, 1.0), (False, -1.0)):
                T, N = means[i].get((*key, side), (0.0, 0.0))
                if N:
                    m = np.bincount(code[dec == side], minlength=C)
                    s = np.bincount(code[dec == side], weights=x[dec == side], minlength=C)
                    u = u + (s - T / N * m) / N * sign
            rows[i].append({**named, "n_units": int(np.count_nonzero(np.bincount(code, minlength=C))),
                            "_U": float((u * u).sum())})
    schema = {"variant": pl.String, **{c: frames[0].schema[c] for c in cols}, "n_units": pl.Int64, "_U": pl.Float64}
    return [pl.DataFrame(r, schema=schema) for r in rows]


def col(df: pl.DataFrame, name: str) -> np.ndarray:
    """A collected column as a numpy array."""
    return df[name].to_numpy()


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
    keys, gkeys, every = ["variant", *cols, "declined"], ["variant", *cols], ["won_f", "score_total"]
    cl = run.cluster

    def queries(r: Run) -> list[pl.LazyFrame]:
        return [r.players(v).select(*dict.fromkeys([*cols, cl, "hand_id"]), pl.col("won").fill_null(False),
                                    pl.col("capped_fan").fill_null(0), pl.col("score_total").fill_null(0),
                                    (pl.col("declined_wins") > 0).fill_null(False).alias("declined"))
                for v in r.variants]

    # two passes over the pieces (each reads the players once): the moments of both groups' means, which hold
    # the sums of cluster_diff_se's first pass; then the units' influence terms of the three differences
    moms = [summed(f, keys) for f in collect_pieces(run, queries, lambda frames: _decline_moments(
        run, frames, cols))]
    allp = means_from_moments(moms[0], keys, every, level=level, shares=["won_f"])
    fans = means_from_moments(moms[1], keys, ["capped_fan"], level=level)
    out = pl.concat([allp, fans]).with_columns(pl.col("quantity").replace({"won_f": "won"}))
    z = z_value(level)
    sides = [diff_sides(moms[0], keys, v) for v in every] + [diff_sides(moms[1], keys, "capped_fan")]
    infl = [summed(f, gkeys) for f in collect_pieces(run, queries, lambda frames: _decline_influence(
        run, frames, cols, sides))]
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
