"""Expected value: mean score per hand, in **base units** (``scoring.base`` score units each), per variant.

Grouping: by seat, by bot (strategy), by position relative to the dealer (``position`` 0 = the dealer, 1 = the
player after the dealer, …), or a combination. A bot seated at several seats contributes one observation per
seat per hand; the independent unit is the hand (the wall under duplicate seating, ``Run.cluster``), so the
mean is ``Σ score / Σ player-hands`` with the cluster-robust SE of :mod:`analysis.stats` (equal to ``sd/√n``
for a single seat and one hand per unit). ``n_units`` = independent units, ``n_hands`` = hands, ``n_obs`` =
player-hands. ``p_value`` tests mean = 0 (two-sided normal); ``p_holm`` is Holm-adjusted over the rows of one
variant (every group × component of the table is one family). The split by score component uses the same
estimator on every ``score_*`` column of the ``players`` table; the components' means add up to the
``score_total`` mean exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

import numpy as np
import polars as pl

from analysis.ids import with_id
from analysis.load import Run, as_run
from analysis.pieces import Pieces
from analysis.stats import LEVEL, cluster_means, normal_p, p_adjust
from simulator.logs.schema import SCORE_COMPONENTS

COMPONENTS = ("score_total", *SCORE_COMPONENTS)
Grouping = Literal["seat", "bot", "position"]
By = Grouping | Sequence[Grouping]
"""A table's grouping (the ``by`` argument): one of ``GROUPINGS`` or a sequence of them, e.g. ``("seat", "bot")``;
a type checker refuses any other string."""
GROUPINGS: tuple[Grouping, ...] = get_args(Grouping)
POSITION_NAMES = ("dealer", "dealer+1", "dealer+2", "dealer+3")
"""Display names of ``position`` 0-3: the seat's place after the dealer in play order."""


def group_columns(by: By | str | Sequence[str]) -> list[str]:
    """Validate a grouping: ``"seat"``, ``"bot"``, ``"position"`` or a sequence of them (e.g.
    ``("seat", "bot")``)."""
    cols = [by] if isinstance(by, str) else list(by)
    bad = [c for c in cols if c not in GROUPINGS]
    if bad or not cols:
        raise ValueError(f"group by {cols!r}: expected some of 'seat', 'bot', 'position'")
    return cols


def player_frame(run: Run, variants: str | list[str] | None = None, position: bool = False) -> pl.LazyFrame:
    """The ``players`` table, with ``position = (seat − dealer) mod 4`` (Int8) from the ``hands`` table when
    ``position`` is asked for."""
    players = run.players(variants)
    if not position:
        return players
    dealer = run.hands(variants).select("variant", "hand_id", "dealer")
    return (players.join(dealer, on=["variant", "hand_id"], how="left")
            .with_columns(((pl.col("seat").cast(pl.Int16) - pl.col("dealer").cast(pl.Int16)) % 4)
                          .cast(pl.Int8).alias("position"))
            .drop("dealer"))


def add_tests(df: pl.DataFrame, estimate: str = "mean", family: Sequence[str] = ("variant",)) -> pl.DataFrame:
    """Add ``p_value`` (two-sided normal test of ``estimate`` = 0 with the row's ``se``) and ``p_holm``
    (Holm-adjusted within each ``family`` group; rows without a p-value are not tests)."""
    p = normal_p(df[estimate].to_numpy().astype(float), df["se"].to_numpy().astype(float))
    out = df.with_columns(pl.Series("p_value", p, dtype=pl.Float64, nan_to_null=True), pl.int_range(pl.len())
                          .alias("_row"))
    adj = np.full(df.height, np.nan)
    for part in out.partition_by(list(family), maintain_order=True):
        rows = part["_row"].to_numpy()
        adj[rows] = p_adjust(part["p_value"].fill_null(np.nan).to_numpy())
    return out.with_columns(pl.Series("p_holm", adj, dtype=pl.Float64, nan_to_null=True)).drop("_row")


def expected_value(run: Run | str, by: By = "bot", components: bool = True,
                   level: float = LEVEL) -> pl.DataFrame:
    """Mean score per hand: ``variant, <by…>, component, n_units, n_hands, n_obs, mean, se, ci_lo, ci_hi,
    p_value, p_holm``.

    ``component`` is ``score_total`` and (if ``components``) each of ``simulator.logs.schema.SCORE_COMPONENTS``, in
    that order; base units; 95% normal intervals by default; clustered by ``run.cluster``."""
    run = as_run(run)
    cols = group_columns(by)
    values = list(COMPONENTS if components else COMPONENTS[:1])
    frame = Pieces(run, lambda r: player_frame(r, position="position" in cols))
    # one player-hand a seat (or dealer position) and hand: each row is its hand's sum (no group-by by hand)
    out = cluster_means(frame, ["variant", *cols], values, cluster=run.cluster, level=level, name="component",
                        one_row="seat" in cols or "position" in cols)
    order = pl.DataFrame({"variant": list(run.variants), "_v": range(len(run.variants))})
    comp = pl.DataFrame({"component": values, "_c": range(len(values))})
    out = out.join(order, on="variant").join(comp, on="component").sort("_v", *cols, "_c").drop("_v", "_c")
    return with_id(add_tests(out), "score", ["component"], slugged=False)
