"""How play differs between two variants on the same hands: counts of paired hands whose decisions differ.

A rule that changes only payments (a cap, a penalty's size) changes every score column without changing what
anybody did; "play differs" must count decisions and their outcomes, not money. :data:`PLAY` names the logged
columns of each kind of play, per table; :func:`hand_differences` counts, on the hands both variants logged,
those on which any column of a kind differs (a win logged in one arm only differs in every kind that has
columns in the ``wins`` table: in :data:`PLAY`, wins).
Payments (``score_*``, ``points``, ``received``), scoring (``hand_type``, flags, ``gen``, ``fan``,
``capped_fan``, ``context``) and session balances are not play.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

from analysis.load import Run
from analysis.pieces import collect_pieces, summed

ROW_KEYS = {"hands": ["hand_id"], "players": ["hand_id", "seat"], "wins": ["hand_id", "win_order", "winner"]}
"""The columns that identify a row of each log table across variants."""

PLAY: dict[str, dict[str, tuple[str, ...]]] = {
    "exchange / 定缺": {"hands": ("exchange",), "players": ("void_suit",)},
    "discards": {"hands": ("turns", "tiles_left")},
    "kongs": {"hands": ("n_kongs",), "players": ("n_kongs",)},
    "declines / declarations": {"players": ("declined_wins", "declared")},
    "wins / hand end": {"hands": ("n_winners", "n_wins", "exhaustive_draw"),
                        "players": ("won", "win_order", "win_kind", "win_turn", "ready", "huazhu"),
                        "wins": ("payer", "n_payers", "kind", "tile", "hand", "melds", "turn")},
}
"""Kinds of play and the logged columns that record them (``turns`` = discards made; ``tiles_left`` at the end;
``melds`` and ``hand`` of a win = the claims and tiles it was made of)."""

def _digests(run: Run, variant: str, kinds: Mapping[str, Mapping[str, Sequence[str]]]) -> pl.LazyFrame:
    """One row per hand of ``variant``: ``hand_id`` and, per kind and table, a 64-bit digest of the rows' kind
    columns with their row keys (the sum, wrapping, of a hash of every row: the same rows in any order give the
    same digest, a row changed, missing or added changes it but for a chance of 2⁻⁶⁴)."""
    out = run.scan("hands", variant).select("hand_id")
    names = {t: set(run.scan(t, variant).collect_schema().names()) for t in ROW_KEYS}
    for table, keys in ROW_KEYS.items():
        digests = [pl.struct(*keys, *[c for c in cols[table] if c in names[table]]).hash(seed=0)
                   .sum().alias(f"{kind}|{table}")
                   for kind, cols in kinds.items() if table in cols]
        if not digests:
            continue
        per_hand = run.scan(table, variant).group_by("hand_id").agg(digests)
        out = out.join(per_hand, on="hand_id", how="left")  # no row (a hand without wins): digest null
    return out


def _piece_differences(run: Run, variant: str, baseline: str, kinds: Mapping[str, Mapping[str, Sequence[str]]],
                       extra: Mapping[str, Mapping[str, Sequence[str]]] | None = None) -> pl.LazyFrame:
    """On one piece: ``_n`` (hands both logged), ``_any`` (hands on which any kind differs), per kind the
    hands on which it differs and, with ``extra`` kinds, ``_all``: hands on which any kind or extra kind
    differs."""
    every = {**kinds, **(extra or {})}
    a, b = _digests(run, baseline, every), _digests(run, variant, every)
    cols = [c for c in a.collect_schema().names() if c != "hand_id"]
    j = a.join(b, on="hand_id", how="inner", suffix="_v")
    differs = {kind: pl.any_horizontal(*[pl.col(c).eq_missing(pl.col(f"{c}_v")).not_()
                                         for c in cols if c.split("|")[0] == kind] or [pl.lit(False)])
               for kind in every}
    return j.select(pl.len().alias("_n"),
                    pl.any_horizontal(*[differs[k] for k in kinds], pl.lit(False)).sum().alias("_any"),
                    *([pl.any_horizontal(*differs.values(), pl.lit(False)).sum().alias("_all")] if extra else []),
                    *[differs[k].sum().alias(k) for k in kinds])


def hand_differences(run: Run, variant: str, baseline: str,
                     kinds: Mapping[str, Mapping[str, Sequence[str]]] = PLAY) -> tuple[int, int, dict[str, int]]:
    """``(hands on which any kind differs, hands logged by both, {kind: hands on which it differs})`` for the
    kinds of :data:`PLAY` (or any ``{kind: {table: columns}}``), on the hands both variants logged.

    Each arm is reduced to per-hand digests of each kind's columns (:func:`_digests`), one piece of the run at a
    time (:mod:`analysis.pieces`), and the digests are compared: no join of whole rows."""
    k, n, per_kind, _ = _differences(run, variant, baseline, kinds, None)
    return k, n, per_kind


def pair_differences(run: Run, variant: str, baseline: str) -> tuple[int, int, dict[str, int], int]:
    """:func:`hand_differences` for :data:`PLAY` and, from the same pass over the logs, the hands on which any
    logged column differs (the study's check "played every hand exactly as the baseline";
    ``analysis.diagnostics.differing_hands(..., "any")``): ``(play differs, hands, {kind: hands}, any differs)``.
    Every column outside :data:`PLAY` (scores, scoring, hands dealt…) gets one more digest per table, so a hand
    differs in some column exactly when one of its digests differs (rows are identified by their keys, which
    every digest includes) — each column hashed once for both counts."""
    names = {t: run.scan(t, baseline).collect_schema().names() for t in ROW_KEYS}
    other = {t: tuple(c for c in names[t] if c not in (*keys, "variant", "bankroll")
                      and not any(c in cols.get(t, ()) for cols in PLAY.values())) for t, keys in ROW_KEYS.items()}
    return _differences(run, variant, baseline, PLAY, {"_other": {t: c for t, c in other.items() if c}})


def _differences(run: Run, variant: str, baseline: str, kinds: Mapping[str, Mapping[str, Sequence[str]]],
                 extra: Mapping[str, Mapping[str, Sequence[str]]] | None) -> tuple[int, int, dict[str, int], int]:
    counts = summed(collect_pieces(run, lambda piece: [_piece_differences(piece, variant, baseline, kinds, extra)])[0],
                    [])
    row = counts.row(0, named=True)
    return (int(row["_any"] or 0), int(row["_n"] or 0), {k: int(row[k] or 0) for k in kinds},
            int(row.get("_all") or 0))


def play_table(run: Run, pairs: Sequence[tuple[str, str]],
               counts: Mapping[tuple[str, str], tuple] | None = None) -> pl.DataFrame:
    """One row per comparison ``(baseline, variant)``: ``variant, baseline, hands, play differs`` and the
    hands on which each kind of :data:`PLAY` differs — counts of paired hands (exact, not estimates).
    ``counts``: :func:`hand_differences` or :func:`pair_differences` of some pairs, already computed."""
    rows = []
    for base, v in pairs:
        got = (counts or {}).get((base, v))
        k, n, kinds = (got if got is not None else hand_differences(run, v, base))[:3]
        rows.append({"variant": v, "baseline": base, "hands": n, "play differs": k, **kinds})
    schema = {"variant": pl.String, "baseline": pl.String, "hands": pl.Int64, "play differs": pl.Int64,
              **{k: pl.Int64 for k in PLAY}}
    return pl.DataFrame(rows, schema=schema)


def play_sentence(row: Mapping, unit: str = "hand") -> str:
    """``play differs on k of n hands (x%): discards on …, kongs on …`` for a row of :func:`play_table`."""
    n, k = row["hands"], row["play differs"]
    if n == 0:
        return f"no {unit} logged by both"
    kinds = ", ".join(f"{kind} {row[kind]:,}" for kind in PLAY if row[kind])
    return (f"play differs on {k:,} of {n:,} hands ({100 * k / n:.1f}%)" + (f" — {kinds}" if kinds else ""))
