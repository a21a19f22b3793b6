"""Per-unit sums with numpy: the moments of :func:`analysis.clustered.cluster_moments` from collected rows.

A clustered mean needs, per group, sums over its units (clusters) of the unit's sum ``S``, ``S²``, ``S·m`` and
``m²`` (``m`` = the unit's observations). Polars gets them with a group-by by group and unit (and per-hand values
with group-bys and joins by hand), hash tables with one entry per unit: most of the analysis's time at the
simulator's scale (docs/internals.md, issue 47). The units and hands of a piece of a run are a narrow range of
integers (hand ids, wall ids, session numbers), so here ``numpy.bincount`` adds the rows up in a dense array
indexed by the unit's offset: no hashing, no sorting. With integer-valued columns every sum is an exact integer
(below 2⁵³), so the moments are the very numbers polars gives.

:func:`unit_moments` gives one group's moments (those of :func:`analysis.clustered.cluster_moments`) from arrays,
:func:`moments_frame` the frame of several groups, :func:`positions` each row's hand among a piece's hands,
:func:`unit_codes` and :func:`group_codes` number units and groups; :class:`HandUnits` with :func:`trial_stats`
and :func:`event_stats` give the share moments of wins and hands (:mod:`analysis.fans`);
:func:`seat_proportion_sums` the counts of a discrete column's values over the players' rows. Where numpy was
measured slower and polars stays: docs/internals.md ("fourth pass").
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

DENSE = 8
"""Largest range of unit numbers per row for the dense array (beyond it the units are numbered by sorting)."""


def unit_codes(values: np.ndarray) -> tuple[np.ndarray, int]:
    """``(code per row, C)``: the units as numbers ``0 … C−1`` (an offset when they are a narrow range, else
    their rank among the distinct values)."""
    if values.size == 0:
        return values.astype(np.int64), 0
    lo, hi = int(values.min()), int(values.max())
    if hi - lo < DENSE * values.size + 1024:
        return values.astype(np.int64) - lo, hi - lo + 1
    uniq, inverse = np.unique(values, return_inverse=True)
    return inverse.astype(np.int64), int(uniq.size)


def unit_moments(units: np.ndarray, values: dict[str, np.ndarray], hands: np.ndarray | None = None
                 ) -> dict[str, float | int]:
    """The moments of :func:`analysis.clustered.cluster_moments` for one group, from arrays: ``units`` = each
    row's unit, ``values`` = the value columns (no nulls), ``hands`` = each row's hand id when the units are
    walls or sessions (``n_hands`` counts the distinct ones; else it is ``n``)."""
    code, C = unit_codes(units)
    m = np.bincount(code, minlength=C).astype(np.float64)
    n = int(np.count_nonzero(m))
    n_hands = n if hands is None or hands.size == 0 else int(np.count_nonzero(np.bincount(unit_codes(hands)[0])))
    out: dict[str, float | int] = {"n": n, "n_obs": int(units.size), "n_hands": n_hands, "_MM": float((m * m).sum())}
    for v, x in values.items():  # products summed elementwise: BLAS's dot spins threads on a busy machine
        s = np.bincount(code, weights=x, minlength=C)
        out.update({f"{v}__T": float(s.sum()), f"{v}__SS": float((s * s).sum()), f"{v}__SM": float((s * m).sum())})
    return out


def moments_frame(rows: list[dict], values: Sequence[str], by: dict[str, pl.DataType]) -> pl.DataFrame:
    """Rows of :func:`unit_moments` (each with its ``by`` keys) as the frame ``cluster_moments`` collects."""
    schema = {**by, "n": pl.UInt32, "n_obs": pl.Int64, "n_hands": pl.Int64, "_MM": pl.Float64,
              **{f"{v}__{s}": pl.Float64 for v in values for s in ("T", "SS", "SM")}}
    return pl.DataFrame(rows, schema=schema) if rows else pl.DataFrame(schema=schema)


def positions(hand_ids: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Each of ``rows`` (hand ids) as its position in ``hand_ids`` (distinct hand ids; −1 when absent)."""
    if hand_ids.size == 0:
        return np.full(rows.size, -1, np.int64)
    lo, hi = int(hand_ids.min()), int(hand_ids.max())
    lookup = np.full(hi - lo + 1, -1, np.int64)
    lookup[hand_ids - lo] = np.arange(hand_ids.size)
    inside = (rows >= lo) & (rows <= hi)
    out = np.full(rows.size, -1, np.int64)
    out[inside] = lookup[rows[inside] - lo]
    return out


def trial_stats(m: np.ndarray) -> dict[str, float | int]:
    """``n_units, n_obs, _MM`` of :func:`analysis.clustered.share_moments`' totals from the trials per unit ``m``
    (units without a trial do not count)."""
    mf = m.astype(np.float64)
    return {"n_units": int(np.count_nonzero(m)), "n_obs": int(m.sum()), "_MM": float((mf * mf).sum())}


def event_stats(c: np.ndarray, m: np.ndarray) -> dict[str, float | int]:
    """``k, k_units, _SS, _SM`` of :func:`analysis.clustered.share_moments`' counts from the events ``c`` and
    trials ``m`` per unit."""
    cf, mf = c.astype(np.float64), m.astype(np.float64)
    return {"k": int(c.sum()), "k_units": int(np.count_nonzero(c)), "_SS": float((cf * cf).sum()),
            "_SM": float((cf * mf).sum())}


class HandUnits:
    """One variant's piece: each hand's unit (its number ``0 … C−1``) and each win's hand, from the collected
    ``hands`` (``hand_id`` and the unit column) and the win rows' ``hand_id``; ``wins_per_unit`` and
    ``hands_per_unit`` are the trials of a share of wins and of hands."""

    def __init__(self, hands: pl.DataFrame, cluster: str, win_hands: np.ndarray) -> None:
        hid = hands["hand_id"].to_numpy()
        self.hand_unit, self.C = unit_codes(hands[cluster].to_numpy())
        pos = positions(hid, win_hands)
        self.inside = pos >= 0  # wins of a hand the piece's hands table holds (all, in a sound run)
        self.win_hand = pos[self.inside]
        self.win_unit = self.hand_unit[self.win_hand]
        self.n_hands = hid.size
        self.wins_per_unit = np.bincount(self.win_unit, minlength=self.C)
        self.hands_per_unit = np.bincount(self.hand_unit, minlength=self.C)

    def events(self, which: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(wins, hands)`` per unit among the wins selected by ``which`` (a mask over the win rows): wins
        that have it, and hands with at least one such win."""
        sel = which[self.inside]
        wins = np.bincount(self.win_unit[sel], minlength=self.C)
        has = np.zeros(self.n_hands, bool)
        has[self.win_hand[sel]] = True
        return wins, np.bincount(self.hand_unit[has], minlength=self.C)


def group_codes(df: pl.DataFrame, cols: Sequence[str], cache: dict | None = None) -> tuple[np.ndarray, list[tuple]]:
    """``(code per row, groups)``: each row's group of ``cols`` numbered ``0 … G−1`` and the groups' values (a
    tuple each, in number order: by the first column's number, then the next …). Integer columns are offsets,
    others are numbered by their distinct values in order of appearance. ``cache``: a dict that keeps each
    column's numbers for the next call on the same frame."""
    code = np.zeros(df.height, np.int64)
    sizes: list[int] = []
    values: list[list] = []
    for c in cols:
        if cache is None or c not in cache:
            numbered = _column_codes(df[c])
            if cache is not None:
                cache[c] = numbered
        x, size, vals = cache[c] if cache is not None else numbered
        values.append(vals)
        code = code * size + x
        sizes.append(size)
    present = np.flatnonzero(np.bincount(code, minlength=int(np.prod(sizes)) if sizes else 1))
    groups = []
    for p in present:
        key, rest = [], int(p)
        for size, vals in zip(reversed(sizes), reversed(values), strict=True):
            key.append(vals[rest % size])
            rest //= size
        groups.append(tuple(reversed(key)))
    remap = np.full(max(int(np.prod(sizes)) if sizes else 1, 1), -1, np.int64)
    remap[present] = np.arange(present.size)
    return remap[code], groups


def _column_codes(s: pl.Series) -> tuple[np.ndarray, int, list]:
    """``(number per row, how many numbers, the value of each number)`` of one column."""
    if s.dtype.is_integer() and s.null_count() == 0 and s.len():
        x = s.to_numpy().astype(np.int64)
        lo = int(x.min())
        x -= lo
        size = int(x.max()) + 1
        return x, size, [lo + i for i in range(size)]
    runs = s.rle() if s.len() else None  # by runs of equal values when they are long (a variant's rows)
    if runs is not None and runs.len() * 16 <= s.len():
        run_values, lengths = runs.struct.field("value"), runs.struct.field("len").to_numpy()
    else:
        run_values, lengths = s, None
    uniq = run_values.unique(maintain_order=True)
    x = run_values.replace_strict(uniq, pl.Series(np.arange(uniq.len(), dtype=np.int64)),
                                  return_dtype=pl.Int64).to_numpy()
    return (np.repeat(x, lengths) if lengths is not None else x), uniq.len(), uniq.to_list()


def seat_proportion_sums(df: pl.DataFrame, by: Sequence[str], value: str, cluster: str, seats: int = 4
                         ) -> tuple[pl.DataFrame, pl.DataFrame] | None:
    """The ``(counts, totals)`` of :func:`analysis.clustered.cluster_proportions` when the unit is the hand and
    the rows are the players table's (``seats`` rows a hand, consecutive): per row, ``c`` = rows of its hand with
    its group and value and ``m`` = rows of its hand with its group, so that over a group's units ``Σc_v² =``
    the sum of ``c`` over its rows with value ``v``, ``Σc_v·m =`` the sum of ``m`` over them and ``Σm² =`` the
    sum of ``m`` over the group's rows — every sum a ``bincount`` over rows, no group-by by (group, value,
    hand). ``None`` when the rows are not laid out so (another unit, a hand with other than ``seats`` rows)."""
    by = list(by)
    if cluster != "hand_id" or df.height == 0 or df.height % seats:
        return None
    per = df[cluster].to_numpy().reshape(-1, seats)
    cache: dict = {}
    lead = (group_codes(df, by[:1], cache)[0] if by else np.zeros(df.height, np.int64)).reshape(-1, seats)
    hand, part = per[:, 0], lead[:, 0]  # each block one hand of one variant (the first group column), in order
    if not (bool(np.all(per == per[:, :1])) and bool(np.all(lead == lead[:, :1]))
            and bool(np.all((part[1:] > part[:-1]) | ((part[1:] == part[:-1]) & (hand[1:] > hand[:-1]))))):
        return None
    gcode, groups = group_codes(df, by, cache)
    pcode, pairs = group_codes(df, [*by, value], cache)
    g, p = gcode.reshape(-1, seats), pcode.reshape(-1, seats)
    m, c = np.zeros(g.shape), np.zeros(g.shape)
    first = np.ones(g.shape, bool)
    for j in range(seats):  # seat by seat (numpy's reductions over a short last axis are slow)
        same = g == g[:, j:j + 1]
        m += same
        c += same & (p == p[:, j:j + 1])
        first[:, j + 1:] &= ~same[:, j + 1:]  # a later seat of the same group is not its unit's first row
    m, c, first = m.ravel(), c.ravel(), first.ravel()
    G, P = len(groups), len(pairs)
    bschema = {k: df.schema[k] for k in by}
    counts = pl.DataFrame({**{k: [q[i] for q in pairs] for i, k in enumerate([*by, value])},
                           "_T": np.bincount(pcode, minlength=P).astype(np.float64),
                           "_SS": np.bincount(pcode, weights=c, minlength=P),
                           "_SM": np.bincount(pcode, weights=m, minlength=P)},
                          schema_overrides={**bschema, value: df.schema[value]})
    totals = pl.DataFrame({**{k: [q[i] for q in groups] for i, k in enumerate(by)},
                           "n_units": np.bincount(gcode[first], minlength=G).astype(np.uint32),
                           "_M": np.bincount(gcode, minlength=G).astype(np.float64),
                           "_MM": np.bincount(gcode, weights=m, minlength=G)}, schema_overrides=bschema)
    return counts, totals
