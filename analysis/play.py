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

from collections.abc import Callable, Mapping, Sequence

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


def _compare(a: pl.DataFrame, b: pl.DataFrame, kinds: Sequence[str], extra: Sequence[str]) -> pl.DataFrame:
    """One piece's counts of a comparison from its arms' digests (``a`` the baseline's): ``_n`` (hands both
    logged), ``_any`` (hands on which any of ``kinds`` differs), ``_all`` (on which any kind or extra kind
    differs) and per kind the hands on which it differs."""
    cols = [c for c in a.columns if c != "hand_id"]
    j = a.join(b, on="hand_id", how="inner", suffix="_v")
    differs = {kind: pl.any_horizontal(*[pl.col(c).eq_missing(pl.col(f"{c}_v")).not_()
                                         for c in cols if c.split("|")[0] == kind] or [pl.lit(False)])
               for kind in [*kinds, *extra]}
    return j.select(pl.len().alias("_n"),
                    pl.any_horizontal(*[differs[k] for k in kinds], pl.lit(False)).sum().alias("_any"),
                    pl.any_horizontal(*differs.values(), pl.lit(False)).sum().alias("_all"),
                    *[differs[k].sum().alias(k) for k in kinds])


Kinds = Mapping[str, Mapping[str, Sequence[str]]]


def _multi(run: Run, pairs: Sequence[tuple[str, str]], kinds: Kinds, extra: Callable[[str], Kinds] | None,
           until_found: bool = False) -> dict[tuple[str, str], tuple[int, int, dict[str, int], int]]:
    """``(baseline, variant) → (hands on which any kind differs, hands logged by both, {kind: hands}, hands on
    which any kind or extra kind differs)`` for every pair at once: each arm is reduced to per-hand digests
    (:func:`_digests`) once a piece however many pairs it is in (a baseline compared with three variants is read
    and hashed once), then the pairs' digests are compared. ``extra(baseline)``: more kinds for that pair.
    ``until_found``: the extra kinds are digested only until a hand that differs is found (pieces are read in
    order), so the last count is then only a lower bound — whether it is 0 is exact."""
    found = dict.fromkeys(pairs, False)
    extras = {pair: extra(pair[0]) if extra else {} for pair in pairs}
    plan: dict = {}

    def frozen(k: Kinds) -> tuple:
        return tuple((kind, tuple((t, tuple(c)) for t, c in tables.items())) for kind, tables in k.items())

    def build(piece: Run) -> list[pl.LazyFrame]:
        every = {pair: {**kinds, **({} if until_found and found[pair] else extras[pair])} for pair in pairs}
        arms = {(arm, frozen(k)): (arm, k) for pair, k in every.items() for arm in pair}
        plan.update(every=every, keys=list(arms))
        return [_digests(piece, arm, k) for arm, k in arms.values()]

    def compare(frames: list[pl.DataFrame]) -> list[pl.DataFrame]:
        got, every, out = dict(zip(plan["keys"], frames, strict=True)), plan["every"], []
        for b, v in pairs:
            key = frozen(every[(b, v)])
            row = _compare(got[(b, key)], got[(v, key)], list(kinds), [k for k in every[(b, v)] if k not in kinds])
            found[(b, v)] = found[(b, v)] or bool(row["_all"][0])
            out.append(row)
        return out

    per_pair = collect_pieces(run, build, compare)
    out = {}
    for pair, frames in zip(pairs, per_pair, strict=True):
        row = summed(frames, []).row(0, named=True)
        out[pair] = (int(row["_any"] or 0), int(row["_n"] or 0), {k: int(row[k] or 0) for k in kinds},
                     int(row["_all"] or 0))
    return out


def hand_differences(run: Run, variant: str, baseline: str, kinds: Kinds = PLAY) -> tuple[int, int, dict[str, int]]:
    """``(hands on which any kind differs, hands logged by both, {kind: hands on which it differs})`` for the
    kinds of :data:`PLAY` (or any ``{kind: {table: columns}}``), on the hands both variants logged.

    Each arm is reduced to per-hand digests of each kind's columns (:func:`_digests`), one piece of the run at a
    time (:mod:`analysis.pieces`), and the digests are compared: no join of whole rows."""
    return _multi(run, [(baseline, variant)], kinds, None)[(baseline, variant)][:3]


def pair_differences(run: Run, pairs: Sequence[tuple[str, str]], exact: bool = True
                     ) -> dict[tuple[str, str], tuple[int, int, dict[str, int], int]]:
    """For each comparison ``(baseline, variant)``: :func:`hand_differences` for :data:`PLAY` and, from the
    same pass over the logs, the hands on which any logged column differs (the study's check "played every hand
    exactly as the baseline"; ``analysis.diagnostics.differing_hands(..., "any")``): ``(play differs, hands,
    {kind: hands}, any differs)``. Every column outside :data:`PLAY` (scores, scoring, hands dealt… — those of
    the baseline's logs) gets one more digest per table, so a hand differs in some column exactly when one of
    its digests differs (rows are identified by their keys, which every digest includes) — each column hashed
    once for both counts, each arm once for all its pairs. ``exact=False``: the other columns are digested only
    until a hand that differs is found (a rule that changes play differs on the first piece): the last count is
    then a lower bound, exact only in whether it is 0 — all that the study's check asks."""
    def other(baseline: str) -> Kinds:
        names = {t: run.scan(t, baseline).collect_schema().names() for t in ROW_KEYS}
        cols = {t: tuple(c for c in names[t] if c not in (*keys, "variant", "bankroll")
                         and not any(c in k.get(t, ()) for k in PLAY.values())) for t, keys in ROW_KEYS.items()}
        return {"_other": {t: c for t, c in cols.items() if c}}

    return _multi(run, pairs, PLAY, other, until_found=not exact)


def play_table(run: Run, pairs: Sequence[tuple[str, str]],
               counts: Mapping[tuple[str, str], tuple] | None = None) -> pl.DataFrame:
    """One row per comparison ``(baseline, variant)``: ``variant, baseline, hands, play differs`` and the
    hands on which each kind of :data:`PLAY` differs — counts of paired hands (exact, not estimates).
    ``counts``: :func:`pair_differences` of some pairs, already computed; the others are counted together
    (each arm read once)."""
    counts = dict(counts or {})
    counts.update(_multi(run, [p for p in pairs if p not in counts], PLAY, None))
    rows = []
    for base, v in pairs:
        k, n, kinds = counts[(base, v)][:3]
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
