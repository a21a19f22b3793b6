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

def _differences(run: Run, variant: str, baseline: str, kinds: Mapping[str, Mapping[str, Sequence[str]]],
                 common: pl.LazyFrame) -> pl.LazyFrame:
    """One row per (hand, kind) that differs on a common hand."""
    parts = []
    for table, keys in ROW_KEYS.items():
        wanted = {k: cols[table] for k, cols in kinds.items() if table in cols}
        if not wanted:
            continue
        a = run.scan(table, baseline).drop("variant").join(common, on="hand_id", how="semi")
        b = run.scan(table, variant).drop("variant").join(common, on="hand_id", how="semi")
        names = set(a.collect_schema().names())
        j = a.with_columns(pl.lit(True).alias("_a")).join(
            b.with_columns(pl.lit(True).alias("_b")), on=keys, how="full", suffix="_v", coalesce=True)
        one_side = pl.col("_a").is_null() | pl.col("_b").is_null()
        for kind, cols in wanted.items():
            present = [c for c in cols if c in names]
            differs = pl.any_horizontal(*[pl.col(c).eq_missing(pl.col(f"{c}_v")).not_() for c in present],
                                        one_side)  # a row (a win) logged in one arm only
            parts.append(j.filter(differs).select("hand_id", pl.lit(kind).alias("kind")))
    return pl.concat(parts).unique() if parts else pl.LazyFrame(schema={"hand_id": pl.Int64, "kind": pl.String})


def hand_differences(run: Run, variant: str, baseline: str,
                     kinds: Mapping[str, Mapping[str, Sequence[str]]] = PLAY) -> tuple[int, int, dict[str, int]]:
    """``(hands on which any kind differs, hands logged by both, {kind: hands on which it differs})`` for the
    kinds of :data:`PLAY` (or any ``{kind: {table: columns}}``), on the hands both variants logged."""
    common = (run.hands(baseline).select("hand_id")
              .join(run.hands(variant).select("hand_id"), on="hand_id", how="semi"))
    n = common.select(pl.len()).collect().item()
    diffs = _differences(run, variant, baseline, kinds, common).collect()
    by_kind = dict(diffs.group_by("kind").len().iter_rows())
    return (int(diffs["hand_id"].n_unique()), int(n), {k: int(by_kind.get(k, 0)) for k in kinds})


def play_table(run: Run, pairs: Sequence[tuple[str, str]]) -> pl.DataFrame:
    """One row per comparison ``(baseline, variant)``: ``variant, baseline, hands, play differs`` and the
    hands on which each kind of :data:`PLAY` differs — counts of paired hands (exact, not estimates)."""
    rows = []
    for base, v in pairs:
        k, n, kinds = hand_differences(run, v, base)
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
