"""Expected value: mean score per hand, in **base units** (``scoring.base`` score units each), per variant.

Grouping: by seat, by bot (strategy), or both. A bot seated at several seats contributes one observation per
seat per hand; hands are the independent unit, so the mean is ``Σ score / Σ player-hands`` with the
cluster-robust SE of :mod:`analysis.stats` (equal to ``sd/√n`` for a single seat). ``n_hands`` = hands,
``n_obs`` = player-hands. The split by score component uses the same estimator on every ``score_*`` column of
the ``players`` table; the components' means add up to the ``score_total`` mean exactly.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from analysis.load import Run, as_run
from analysis.stats import LEVEL, cluster_means
from simulator.schema import SCORE_COMPONENTS

COMPONENTS = ("score_total", *SCORE_COMPONENTS)
GROUPINGS = ("seat", "bot")


def group_columns(by: str | Sequence[str]) -> list[str]:
    """Validate a grouping: ``"seat"``, ``"bot"`` or a sequence of them (e.g. ``("seat", "bot")``)."""
    cols = [by] if isinstance(by, str) else list(by)
    bad = [c for c in cols if c not in GROUPINGS]
    if bad or not cols:
        raise ValueError(f"group by {cols!r}: expected 'seat', 'bot' or both")
    return cols


def expected_value(run: Run | str, by: str | Sequence[str] = "bot", components: bool = True,
                   level: float = LEVEL) -> pl.DataFrame:
    """Mean score per hand: ``variant, <by…>, component, n_hands, n_obs, mean, se, ci_lo, ci_hi``.

    ``component`` is ``score_total`` and (if ``components``) each of ``simulator.schema.SCORE_COMPONENTS``, in
    that order; base units; 95% normal intervals by default."""
    run = as_run(run)
    cols = group_columns(by)
    values = list(COMPONENTS if components else COMPONENTS[:1])
    out = cluster_means(run.players(), ["variant", *cols], values, level=level, name="component")
    order = pl.DataFrame({"variant": list(run.variants), "_v": range(len(run.variants))})
    comp = pl.DataFrame({"component": values, "_c": range(len(values))})
    return out.join(order, on="variant").join(comp, on="component").sort("_v", *cols, "_c").drop("_v", "_c")
