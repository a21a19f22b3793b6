"""Who wins by kind of player, and does the verdict depend on who plays: the first screen of a study with populations.

A study with populations (:mod:`analysis.cells`) plays every arm with every line-up on the same walls. For each
arm against the baseline arm *in the same population* this module gathers, in one Holm family (:func:`screen`):

- ``kinds``: in each mixed population (not every seat the same bot), the change of each bot kind's mean score per
  hand, paired on the same walls and seats (the rows of :func:`analysis.family.paired_family`'s ``by_bot``);
  with identical seats the changes are zero by symmetry and there are no rows;
- ``headline``: the change of each headline hand metric (:data:`HEADLINE`, or the study's ``headline``) in every
  population;
- ``interaction``: per arm and headline metric, the test that the change is the same in every population
  (:func:`interaction_test`: Hotelling's T² on the per-unit differences between populations, walls as units, so
  the luck of the deal, common to all populations, is counted once); and per arm and bot kind seated in two or
  more mixed populations, the same test on that kind's change of the mean score per hand (``metric``
  ``score per hand: <kind>``, column ``kind``): does who wins depend on the line-up?
- ``dealer``: the dealer's (first mover's) mean score per hand in every cell and its paired change.

Holm runs over every test of the four tables together; :func:`robustness` turns one arm's headline rows and
interaction into one line ("holds in 4 of 4 populations", "reverses with greedy", "only significant with …").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from analysis import cells, compare
from analysis.ev import player_frame
from analysis.fmt import fmt_p
from analysis.load import Run
from analysis.paired_sums import P_ONLY, moments, piecewise, wide_moments, wide_unit_sums
from analysis.pieces import pieces
from analysis.rare import beta_inc
from analysis.stats import LEVEL
from simulator.errors import UserError

HEADLINE = ("points exchanged", "wins", "turns", "exhaustive_draw (流局)")
"""Hand metrics whose verdicts the first screen compares across populations when a study names none."""

ALPHA = 1 - LEVEL


def check_headline(names: Sequence[str] | None, where: Path | str) -> None:
    """Refuse a study's ``headline`` naming an unknown hand metric (one line naming the file and the known ones)."""
    bad = [m for m in names or () if m not in compare.HAND_METRICS]
    if bad:
        raise UserError(f"{where}: headline: no hand metric {bad[0]!r} (known: {', '.join(compare.HAND_METRICS)})")


def headline_metrics(run: Run) -> list[str]:
    return list((run.study or {}).get("headline") or HEADLINE)


def interaction_test(d: np.ndarray) -> tuple[float, int, float] | None:
    """Does a change differ between populations? ``d``: one row per independent unit (wall or hand), one column
    per population, each the unit's change (variant − baseline). H0: equal expected changes. Hotelling's T² on
    the contrasts with the first population, ``T² = n·c̄ᵀS⁻¹c̄`` over the rank ``k`` of their covariance ``S``,
    referred to ``F(k, n − k)`` after scaling by ``(n − k)/(k(n − 1))``. Returns ``(T², k, p)``, or None when
    fewer than two units differ between populations (nothing to test)."""
    d = np.asarray(d, dtype=float)
    n, pops = d.shape
    if pops < 2:
        return None
    c = d[:, 1:] - d[:, :1]
    if int((c != 0).any(axis=1).sum()) < 2:
        return None
    mean = c.mean(axis=0)
    cov = np.atleast_2d(np.cov(c, rowvar=False, ddof=1))
    w, vecs = np.linalg.eigh(cov)
    keep = w > max(w.max(), 0.0) * 1e-10
    k = int(keep.sum())
    if k == 0 or n - k < 1:
        return None
    proj = vecs[:, keep].T @ mean
    t2 = float(n * np.sum(proj ** 2 / w[keep]))
    f = (n - k) / (k * (n - 1)) * t2
    return t2, k, beta_inc((n - k) / 2, k / 2, (n - k) / ((n - k) + k * f))


@dataclass(frozen=True)
class Screen:
    """The first screen's tables (see the module docstring), adjusted in one Holm family of ``tests`` tests."""

    kinds: pl.DataFrame
    headline: pl.DataFrame
    interaction: pl.DataFrame
    dealer: pl.DataFrame
    symmetric: list[str]  # populations whose four seats play one bot
    populations: list[str]
    tests: int


def _pairs(run: Run, baseline: str) -> list[tuple[str, str, str, str]]:
    """``(arm, population, cell, baseline cell)`` of every arm against the baseline arm, population by
    population (population ``""`` in a run without populations)."""
    cmap = cells.cell_map(run)
    out = []
    for v in run.variants:
        base = cells.baseline_of(run, v, baseline)
        if base != v:
            arm, pop = cmap.get(v, (v, ""))
            out.append((arm, pop, v, base))
    return out


def _pop_names(run: Run) -> list[str]:
    return list(cells.populations(run)) or [""]


def symmetric_populations(run: Run) -> list[str]:
    """Populations (``""`` without populations) in which one bot holds every seat of every arm."""
    cmap = cells.cell_map(run)
    out = []
    for p in _pop_names(run):
        vs = [v for v in run.variants if cmap.get(v, ("", ""))[1] == p]
        if vs and all(len(set(run.bots(v))) == 1 for v in vs):
            out.append(p)
    return out


def _hand_units(run: Run, v: str, base: str, metrics: list[str]) -> pl.DataFrame:
    """Per unit: ``run.cluster`` and each metric's mean change ``d / m`` (one small vector a unit, gathered
    piece by piece: the interaction test needs the units' changes jointly across populations)."""
    frames = []
    for r in pieces(run):
        b = (compare._hand_frame(r, base).drop(*r.id_columns[1:])
             .rename({m: f"{m}__b" for m in compare.HAND_METRICS}))
        wide = wide_unit_sums(compare._hand_frame(r, v).select(*r.id_columns, *metrics),
                              b.select("hand_id", *[f"{m}__b" for m in metrics]), ["hand_id"], [], metrics,
                              r.cluster, P_ONLY)
        frames.append(wide.select(r.cluster, *[(pl.col(f"{m}__d") / pl.col("_m")).alias(m) for m in metrics]))
    return pl.concat(frames)


def _kind_units(run: Run, v: str, base: str) -> pl.DataFrame:
    """Per bot kind and unit: the kind's mean change of score_total over its player-hands of the unit (``_x``),
    gathered piece by piece."""
    frames = []
    for r in pieces(run):
        a = r.players(v).select(*r.id_columns, "seat", "bot", "score_total")
        b = r.players(base).select("hand_id", "seat", pl.col("score_total").alias("score_total__b"))
        wide = wide_unit_sums(a, b, ["hand_id", "seat"], ["bot"], ["score_total"], r.cluster, P_ONLY)
        frames.append(wide.select("bot", r.cluster, (pl.col("score_total__d") / pl.col("_m")).alias("_x")))
    return pl.concat(frames)


def _tested(run: Run, arm: str, name: str, kind: str | None, per: dict[str, pl.DataFrame]) -> dict:
    """One interaction row: ``per`` population → its per-unit changes (``_x``), joined on the unit."""
    wide = None
    for p, units in per.items():
        u = units.select(run.cluster, pl.col("_x").alias(p))
        wide = u if wide is None else wide.join(u, on=run.cluster, how="inner")
    res = interaction_test(wide.select(list(per)).to_numpy())
    return {"arm": arm, "metric": name, "kind": kind, "populations": len(per), "n_units": wide.height,
            "t2": None if res is None else res[0], "df": None if res is None else res[1],
            "p_value": None if res is None else res[2]}


def _interactions(run: Run, pairs: list[tuple[str, str, str, str]], metrics: list[str],
                  symmetric: list[str]) -> pl.DataFrame:
    rows = []
    if len(_pop_names(run)) >= 2:
        for arm in dict.fromkeys(a for a, *_ in pairs):
            mine = [(p, v, b) for a, p, v, b in pairs if a == arm]
            if len(mine) < 2:
                continue
            per = {p: _hand_units(run, v, b, metrics) for p, v, b in mine}
            for m in metrics:
                rows.append(_tested(run, arm, m, None, {p: u.select(run.cluster, pl.col(m).alias("_x"))
                                                        for p, u in per.items()}))
            kinds = {p: _kind_units(run, v, b) for p, v, b in mine if p not in symmetric}
            for kind in dict.fromkeys(k for u in kinds.values() for k in u["bot"].unique(maintain_order=True)):
                sub = {p: u.filter(pl.col("bot") == kind) for p, u in kinds.items()}
                sub = {p: u for p, u in sub.items() if u.height}
                if len(sub) >= 2:
                    rows.append(_tested(run, arm, f"score per hand: {kind}", kind, sub))
    schema = {"arm": pl.String, "metric": pl.String, "kind": pl.String, "populations": pl.Int64,
              "n_units": pl.Int64, "t2": pl.Float64, "df": pl.Int64, "p_value": pl.Float64}
    return pl.DataFrame(rows, schema=schema)


def dealer_edge(run: Run, baseline: str) -> pl.DataFrame:
    """Per cell: the dealer's mean score per hand (base units) with its 95% interval, and — for every arm but the
    baseline — its paired change against the baseline arm of the same population (same walls, same dealer).
    Read in pieces (:func:`analysis.paired_sums.piecewise`)."""
    cmap = cells.cell_map(run)
    rows = []
    for v in run.variants:
        base = cells.baseline_of(run, v, baseline)
        one, st = _dealer_stats(run, v, base)
        arm, pop = cmap.get(v, (v, ""))
        rows.append({"arm": arm, "population": pop, "variant": v, "baseline": base, "n_units": one["n_units"],
                     "mean": one["diff"], "se": one["se_paired"], "mean_lo": one["ci_lo"],
                     "mean_hi": one["ci_hi"],
                     **{k: st[k] if st is not None else None
                        for k in ("diff", "se_paired", "ci_lo", "ci_hi", "p_value", "n_differ", "mean_baseline")}})
    return pl.DataFrame(rows, infer_schema_length=None)


def _dealer_stats(run: Run, v: str, base: str) -> tuple[dict, dict | None]:
    """The dealer's score in cell ``v``: its mean (a paired row against 0) and, unless ``v`` is ``base``, its
    change against ``base`` (the statistics of :func:`analysis.compare.paired_stats`)."""

    def dealer(r: Run, w: str) -> pl.LazyFrame:
        return (player_frame(r, w, position=True).filter(pl.col("position") == 0)
                .select(*r.id_columns, pl.col("score_total").cast(pl.Float64).alias("x")))

    def gather(r: Run) -> tuple[pl.DataFrame, pl.DataFrame]:
        a = dealer(r, v)
        sides = {"one": a.select("hand_id", pl.lit(0.0).alias("x__b"))}
        if v != base:
            sides["paired"] = dealer(r, base).select("hand_id", pl.col("x").alias("x__b"))
        got = [[f.with_columns(pl.lit(k).alias("_q")) for f in
                wide_moments(wide_unit_sums(a, b, ["hand_id"], [], ["x"], r.cluster), [], ["x"], "_q")]
               for k, b in sides.items()]
        return pl.concat([g[0] for g in got]), pl.concat([g[1] for g in got])

    mom, differing = piecewise(run, gather, ["_q"])
    st = compare._intervals(moments(mom, LEVEL), differing, ["_q"], LEVEL)
    rows = {r["_q"]: r for r in st.iter_rows(named=True)}
    return rows["one"], rows.get("paired")


_ROW = ["part", "arm", "population", "who", "n_units", "n_differ", "mean_baseline", "diff", "se_paired", "ci_lo",
        "ci_hi", "p_value", "detect", "hands_paired", "measured_in"]


def screen(run: Run, baseline: str, families: dict[tuple[str, str], dict[str, pl.DataFrame]]) -> Screen:
    """The first screen's tables for the comparisons of :func:`analysis.cells.comparisons` (``families``: their
    :func:`analysis.family.paired_family` results), with ``p_holm`` and ``verdict`` over all their tests."""
    pairs = _pairs(run, baseline)
    metrics = headline_metrics(run)
    sym = symmetric_populations(run)
    parts = []
    for arm, pop, v, base in pairs:
        fam = families.get((base, v))
        if fam is None:
            continue
        lit = [pl.lit(arm).alias("arm"), pl.lit(pop).alias("population")]
        if pop not in sym:
            kinds = fam["by_bot"].filter(pl.col("component") == "score_total")
            parts.append(kinds.select(pl.lit("kind").alias("part"), *lit, pl.col("bot").alias("who"), *_ROW[4:]))
        met = fam["metrics"].filter(pl.col("metric").is_in(metrics))
        parts.append(met.select(pl.lit("headline").alias("part"), *lit, pl.col("metric").alias("who"), *_ROW[4:]))
    dealer = dealer_edge(run, baseline)
    moved = dealer.filter(pl.col("diff").is_not_null())
    parts.append(moved.select(pl.lit("dealer").alias("part"), "arm", "population", pl.lit("dealer").alias("who"),
                              "n_units", "n_differ", "mean_baseline", "diff", "se_paired", "ci_lo", "ci_hi",
                              "p_value",
                              pl.lit(compare.DETECT).alias("detect"), pl.lit(None, pl.Int64).alias("hands_paired"),
                              pl.lit("base units").alias("measured_in")))
    inter = _interactions(run, pairs, metrics, sym)
    parts.append(inter.select(pl.lit("interaction").alias("part"), "arm", pl.lit("").alias("population"),
                              pl.col("metric").alias("who"), "n_units", pl.col("n_units").alias("n_differ"),
                              *[pl.lit(None, pl.Float64).alias(c) for c in ("mean_baseline", "diff", "se_paired",
                                                                             "ci_lo", "ci_hi")],
                              "p_value", pl.lit(np.inf).alias("detect"), pl.lit(None, pl.Int64).alias("hands_paired"),
                              pl.lit("").alias("measured_in")))
    rows = pl.concat([p.with_columns(pl.col("hands_paired").cast(pl.Int64), pl.col("n_units").cast(pl.Int64),
                                     pl.col("n_differ").cast(pl.Int64)) for p in parts], how="vertical_relaxed")
    adj = compare.add_adjusted(rows.with_columns(pl.col("diff").fill_null(0.0), pl.lit(0).alias("_f")), ("_f",))
    adj = adj.with_columns(pl.when(pl.col("part") == "interaction").then(None).otherwise(pl.col("diff"))
                           .alias("diff")).drop("_f")
    get = {k: adj.filter(pl.col("part") == k).drop("part") for k in ("kind", "headline", "interaction")}
    d_adj = adj.filter(pl.col("part") == "dealer").select("arm", "population", "p_holm", "verdict")
    dealer = dealer.join(d_adj, on=["arm", "population"], how="left", maintain_order="left")
    inter = inter.join(get["interaction"].select("arm", pl.col("who").alias("metric"), "p_holm"),
                       on=["arm", "metric"], how="left", maintain_order="left")
    return Screen(get["kind"], get["headline"], inter, dealer, sym, _pop_names(run),
                  int(rows["p_value"].is_not_null().sum()))


def robustness(rows: pl.DataFrame, inter: dict | None, n_pops: int) -> str:
    """One arm's one headline metric across populations in words: ``rows`` its screen rows (one per population,
    with ``p_holm``), ``inter`` its interaction row (None: one population)."""
    def names(sub: pl.DataFrame) -> str:
        return ", ".join(sub["population"].to_list())

    sig = rows.filter(pl.col("p_holm") < ALPHA)
    up, down = sig.filter(pl.col("diff") > 0), sig.filter(pl.col("diff") < 0)
    still = rows.filter(pl.col("n_differ") == 0)
    ip = None if inter is None else inter.get("p_holm")
    itext = "no interaction test" if ip is None else f"interaction Holm p {fmt_p(ip)}"
    if rows.height and still.height == rows.height:
        return f"no change in any population (nothing differs; {itext})"
    if ip is None or ip >= ALPHA:
        if sig.height == rows.height and (up.height == 0 or down.height == 0):
            return (f"holds in {sig.height} of {n_pops} populations ({'up' if up.height else 'down'}; "
                    f"the populations do not differ significantly, {itext})")
        if sig.height:
            return (f"significant in {sig.height} of {n_pops} populations ({names(sig)}); the populations do not "
                    f"differ significantly ({itext})")
        return f"not significant in any population; no evidence that the populations differ ({itext})"
    if up.height and down.height:
        major, minor, word = (up, down, "up") if up.height >= down.height else (down, up, "down")
        return f"depends on who plays: {word} with {names(major)}, reverses with {names(minor)} ({itext})"
    if still.height:
        where = f"significant with {names(sig)}" if sig.height else "not significant in any population"
        return (f"depends on who plays: {where}; with {names(still)} nothing differs (not one paired unit "
                f"changes) ({itext})")
    if sig.height and sig.height < rows.height:
        return f"depends on who plays: only significant with {names(sig)} ({itext})"
    return (f"holds in {sig.height} of {n_pops} populations ({'up' if up.height else 'down'}), but its size depends "
            f"on who plays ({itext})")
