"""Risk: spread and tails of one player's score per hand and over a session of K hands, in **base units**.

For each variant and group (seat or bot) the sample is every player-hand of that group (``score_total``).

- ``sd`` — sample standard deviation; ``q(p)`` — inverse-empirical-CDF quantile of the score (an observed
  score); ``P(loss>x)`` — share of player-hands with ``score < −x``; ``CVaR95 loss`` — mean loss ``−score``
  over the worst 5% of player-hands (fractional boundary weight, see :mod:`analysis.stats`); ``mean`` too.
- Intervals: percentile bootstrap over independent units (``n_boot`` replicates, seeded): a replicate redraws
  the hands — the walls under duplicate seating (``Run.cluster``) — with replacement and keeps every
  observation of a drawn unit, so seats of one hand (and the four seatings of one wall) stay together.
  ``n_boot=0`` gives no interval (``ci_lo``/``ci_hi`` null).
- Sessions (:func:`session_risk_table`): the total of ``hands`` independent hands for one player of the group.
  Each hand of the session is a uniform draw of a logged hand (every logged hand is an equally likely deal),
  then a uniform draw of one of the group's player-hands in that hand (the seat the player holds). This is the
  right model for "an evening of K hands for one player of this group": the player sits at the table once per
  hand, so every deal counts once. A uniform draw over all the group's player-hands would instead weight a
  hand by how many seats the group held in it (over-representing deals where it held more); the two agree when
  the group holds the same number of seats in every hand (always for ``by="seat"``), and then the session
  ``mean`` is exactly ``hands`` times the per-hand ``mean`` of :func:`risk_table` (which pools player-hands).
  Estimates come from ``n_sessions`` simulated sessions; intervals from ``n_boot`` outer
  replicates (units resampled, ``boot_sessions`` sessions each). Hands of a simulated hand stream are
  independent by construction (every hand is a fresh deal).
- :func:`score_distribution` gives the full distribution of the per-hand score with cluster-robust intervals.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import polars as pl

from analysis.bootstrap import session_draws, session_point
from analysis.ev import By, group_columns, player_frame
from analysis.ids import with_id
from analysis.load import Run, as_run
from analysis.pieces import Pieces, advance, collect_pieces, pieces, summed
from analysis.stats import LEVEL, cluster_bootstrap_risk, cluster_proportions, risk_kernel, session_risk
from analysis.unit_sums import group_codes

PROBS = (0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99)
HAND_THRESHOLDS = (0, 8, 16, 32)
SESSION_THRESHOLDS = (0, 50, 100, 200, 400)
N_SESSIONS = 20_000
BOOT_SESSIONS = 2_000


def _label(key: str, alpha: float) -> str:
    if key.startswith("q"):
        return f"q({float(key[1:]):g})"
    if key.startswith("p_loss_gt_"):
        return f"P(loss>{key.removeprefix('p_loss_gt_')})"
    if key == "cvar":
        return f"CVaR{round(alpha * 100):d} loss"
    return key


def _groups(run: Run, cols: list[str]) -> Iterator[tuple[dict, np.ndarray, np.ndarray, np.ndarray]]:
    """Per variant and group, one at a time: (key, scores, hand of each score, independent unit of each score).
    A variant's player-hands are read on their own, only the columns needed (one number a player-hand, its hand
    and unit), so memory holds one variant's scores, not every row of every variant."""
    unit = run.cluster
    ids = list(dict.fromkeys(["hand_id", unit]))
    for variant in run.variants:
        df = (player_frame(run, variant, position="position" in cols)
              .select(*cols, *ids, pl.col("score_total").cast(pl.Int32)).collect())
        if df.height == 0:
            continue
        keys = df.select(cols).unique().sort(cols)
        for key in keys.iter_rows():
            part = df if keys.height == 1 else df.filter(
                pl.all_horizontal(*[pl.col(c) == k for c, k in zip(cols, key, strict=True)]))
            hands = part["hand_id"].to_numpy()
            yield ({"variant": variant, **dict(zip(cols, key, strict=True))},
                   part["score_total"].to_numpy().astype(float), hands,
                   hands if unit == "hand_id" else part[unit].to_numpy())
            del part
        del df


def _histograms(run: Run, cols: list[str]) -> Iterator[tuple[dict, np.ndarray, np.ndarray, tuple[int, int, int]]]:
    """Per variant and group: (key, distinct scores ascending, their counts, (units, hands, player-hands)),
    summed over the pieces of the run: all that the per-hand statistics without a bootstrap read."""
    unit = run.cluster
    by = ["variant", *cols]

    def queries(r: Run) -> list[pl.LazyFrame]:
        lf = player_frame(r, position="position" in cols).select(*by, *dict.fromkeys(["hand_id", unit]), "score_total")
        return [lf.group_by(*by, "score_total").agg(pl.len().cast(pl.Int64).alias("k")),
                lf.group_by(by).agg(pl.col(unit).n_unique().cast(pl.Int64).alias("n_units"),
                                    pl.col("hand_id").n_unique().cast(pl.Int64).alias("n_hands"),
                                    pl.len().cast(pl.Int64).alias("n_obs"))]

    hist, sizes = collect_pieces(run, queries)
    hist, sizes = summed(hist, [*by, "score_total"]), summed(sizes, by)
    order = {v: i for i, v in enumerate(run.variants)}
    sizes = (sizes.with_columns(pl.col("variant").replace_strict(order, return_dtype=pl.Int64).alias("_v"))
             .sort("_v", *cols))
    for row in sizes.iter_rows(named=True):
        key = {c: row[c] for c in by}
        part = hist.filter(pl.all_horizontal(*[pl.col(c).eq_missing(v) for c, v in key.items()])).sort("score_total")
        yield (key, part["score_total"].to_numpy().astype(float), part["k"].to_numpy().astype(float),
               (row["n_units"], row["n_hands"], row["n_obs"]))


def _table(rows: list[dict], cols: list[str]) -> pl.DataFrame:
    schema = {"variant": pl.String, **{c: (pl.String if c == "bot" else pl.Int8) for c in cols},
              "statistic": pl.String, "estimate": pl.Float64, "ci_lo": pl.Float64, "ci_hi": pl.Float64,
              "n_units": pl.Int64, "n_hands": pl.Int64, "n_obs": pl.Int64}
    if not rows:
        return pl.DataFrame(schema=schema)
    # no bootstrap (n_boot = 0) or no finite replicate: no interval, as null rather than NaN
    return pl.DataFrame(rows, schema=schema, orient="row").with_columns(pl.col("ci_lo", "ci_hi").fill_nan(None))


def risk_table(run: Run | str, by: By = "bot", *, alpha: float = LEVEL,
               probs: Sequence[float] = PROBS, thresholds: Sequence[float] = HAND_THRESHOLDS,
               n_boot: int = 200, seed: int = 0, level: float = LEVEL) -> pl.DataFrame:
    """Per-hand risk, long format: ``variant, <by…>, statistic, estimate, ci_lo, ci_hi, n_units, n_hands,
    n_obs``.

    Statistics in order: ``mean``, ``sd``, ``q(p)`` for ``probs``, ``P(loss>x)`` for ``thresholds`` (base
    units), ``CVaR<alpha> loss``. Bootstrap seeded by ``(seed, group index)``: the same call gives the same
    table."""
    run = as_run(run)
    cols = group_columns(by)
    rows = []
    if n_boot == 0:  # the statistics of the score's distribution: counts per distinct score, read in pieces
        for key, distinct, counts, sizes in _histograms(run, cols):
            stats = risk_kernel(distinct, counts[None, :], probs, thresholds, alpha)
            rows += [(*key.values(), _label(k, alpha), float(v[0]), np.nan, np.nan, *sizes)
                     for k, v in stats.items()]
        return with_id(_table(rows, cols), "risk", ["statistic"])
    for i, (key, values, hands, units) in enumerate(_groups(run, cols)):
        stats = cluster_bootstrap_risk(values, units, probs=probs, thresholds=thresholds, alpha=alpha,
                                       n_boot=n_boot, seed=np.random.SeedSequence([seed, i]), level=level)
        counts = (int(np.unique(units).size), int(np.unique(hands).size), values.size)
        rows += [(*key.values(), _label(k, alpha), *v, *counts) for k, v in stats.items()]
    return with_id(_table(rows, cols), "risk", ["statistic"])


def session_risk_table(run: Run | str, by: By = "bot", *, hands: int = 40,
                       alpha: float = LEVEL, probs: Sequence[float] = PROBS,
                       thresholds: Sequence[float] = SESSION_THRESHOLDS, n_sessions: int = N_SESSIONS,
                       n_boot: int = 100, boot_sessions: int = BOOT_SESSIONS, seed: int = 0,
                       level: float = LEVEL) -> pl.DataFrame:
    """Risk of a session of ``hands`` hands (e.g. an evening of 40) for one player of the group: same columns
    and statistics as :func:`risk_table` for the session total, plus ``session_hands``; ``n_hands``/``n_obs``
    describe the logged sample the sessions are drawn from. Each session hand is a uniform logged hand, then a
    uniform one of the group's player-hands in it (see the module docstring for why); ``n_boot`` outer
    bootstrap replicates give the intervals (0: none, null bounds)."""
    run = as_run(run)
    cols = group_columns(by)
    rows = []
    if n_boot == 0:  # the sessions need per hand only its size and sums, and the drawn values: read in pieces
        for key, (tot, mean, sd), counts in _sessions_in_pieces(run, cols, hands, n_sessions, seed):
            stats = session_point(tot, mean, sd, probs, thresholds, alpha)
            rows += [(*key.values(), _label(k, alpha), float(v[0]), np.nan, np.nan, *counts)
                     for k, v in stats.items()]
        return with_id(_table(rows, cols).with_columns(pl.lit(hands, dtype=pl.Int64).alias("session_hands")),
                       "session_risk", ["statistic"])
    for i, (key, values, hand_ids, units) in enumerate(_groups(run, cols)):
        stats = session_risk(values, hand_ids, hands=hands, probs=probs, thresholds=thresholds, alpha=alpha,
                             n_sessions=n_sessions, n_boot=n_boot, boot_sessions=boot_sessions,
                             seed=np.random.SeedSequence([seed, i]), level=level, units=units)
        counts = (int(np.unique(units).size), int(np.unique(hand_ids).size), values.size)
        rows += [(*key.values(), _label(k, alpha), *v, *counts) for k, v in stats.items()]
    return with_id(_table(rows, cols).with_columns(pl.lit(hands, dtype=pl.Int64).alias("session_hands")),
                   "session_risk", ["statistic"])


def _sessions_in_pieces(run: Run, cols: list[str], hands: int, n_sessions: int, seed: int
                        ) -> Iterator[tuple[dict, tuple[np.ndarray, float, float], tuple[int, int, int]]]:
    """Per variant and group, as :func:`_groups` orders and numbers them: ``(key, (session totals, exact mean,
    exact sd), (units, hands, player-hands))`` of :func:`analysis.stats.session_risk` without a bootstrap, the
    same numbers, read in two passes over the pieces of one variant at a time: first each hand's number of the
    group's player-hands and the sums of their scores and squares (17 bytes a hand), then only the drawn
    scores — never one number a player-hand."""
    unit, position = run.cluster, "position" in cols

    def frame(piece: Run, variant: str) -> pl.LazyFrame:
        return (player_frame(piece, variant, position=position)
                .select(*cols, *dict.fromkeys(["hand_id", unit]), pl.col("score_total").cast(pl.Int32)
                        .cast(pl.Float64).alias("_v")).sort("hand_id", maintain_order=True))

    i = 0
    for variant in run.variants:
        parts, per_hand, units = pieces(run), [], []
        for piece in parts:  # pass 1: per hand of each group, in hand order
            hand, count = _hand_sums(frame(piece, variant).collect(), cols, unit)
            per_hand.append(hand)
            units.append(count)
            advance()
        keys = pl.concat([f.select(cols) for f in per_hand]).unique().sort(cols)
        draws = []
        for key in keys.iter_rows():
            match = pl.all_horizontal(*[pl.col(c) == k for c, k in zip(cols, key, strict=True)])
            size = np.concatenate([f.filter(match)["_m"].to_numpy() for f in per_hand])
            s1, s2 = (np.concatenate([f.filter(match)[c].to_numpy() for f in per_hand]) for c in ("_s1", "_s2"))
            start = np.r_[0, np.cumsum(size, dtype=np.int64)[:-1]]
            rng = np.random.default_rng(np.random.SeedSequence([seed, i]))
            obs = session_draws(start, size, np.arange(size.size), hands, n_sessions, rng)
            hmean, hmean2 = s1 / size, s2 / size
            m1, m2 = hmean.mean(), hmean2.mean()
            n_units = size.size if unit == "hand_id" else sum(int(u.filter(match)["_u"].sum()) for u in units)
            draws.append((key, match, obs, hands * m1, float(np.sqrt(max(hands * (m2 - m1 * m1), 0.0))),
                          (n_units, int(size.size), int(size.sum()))))
            i += 1
            del size, s1, s2, start, hmean, hmean2
        del per_hand
        totals = [np.zeros(obs.shape) for _, _, obs, *_ in draws]
        offsets = [0] * len(draws)
        for piece in parts:  # pass 2: the drawn scores
            df = frame(piece, variant).collect()
            for j, (_, match, obs, *_) in enumerate(draws):
                vals = df.filter(match)["_v"].to_numpy()
                inside = (obs >= offsets[j]) & (obs < offsets[j] + vals.size)
                totals[j][inside] = vals[obs[inside] - offsets[j]]
                offsets[j] += vals.size
            advance()
        for (key, _, _, mean, sd, counts), vals in zip(draws, totals, strict=True):
            yield ({"variant": variant, **dict(zip(cols, key, strict=True))}, (vals.sum(axis=1), mean, sd), counts)


def _hand_sums(df: pl.DataFrame, cols: list[str], unit: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Pass 1 of :func:`_sessions_in_pieces` on one piece's rows (in hand order): per group of ``cols`` and
    hand, in hand order within each group, ``_m`` (the group's player-hands in the hand), ``_s1``, ``_s2`` (sums
    of the scores and their squares); and per group ``_u``, its distinct units. Numpy segment sums over each
    group's rows (``np.add.reduceat`` on the hand boundaries) instead of a group-by by (group, hand)."""
    code, groups = group_codes(df, cols)
    hand, units, v = df["hand_id"].to_numpy(), df[unit].to_numpy(), df["_v"].to_numpy()
    parts, counts = [], []
    for g, key in enumerate(groups):
        idx = np.flatnonzero(code == g)
        h, u = hand[idx], units[idx]
        starts = np.flatnonzero(np.r_[True, h[1:] != h[:-1]])
        x = v[idx]
        parts.append(pl.DataFrame({
            **{c: [k] * starts.size for c, k in zip(cols, key, strict=True)},
            "_m": np.diff(np.r_[starts, idx.size]).astype(np.int8),
            "_s1": np.add.reduceat(x, starts), "_s2": np.add.reduceat(x * x, starts)},
            schema_overrides={c: df.schema[c] for c in cols}))
        distinct = (1 + int(np.count_nonzero(u[1:] != u[:-1]))) if bool(np.all(u[1:] >= u[:-1])) else \
            int(np.unique(u).size)
        counts.append({**dict(zip(cols, key, strict=True)), "_u": distinct})
    schema = {**{c: df.schema[c] for c in cols}, "_m": pl.Int8, "_s1": pl.Float64, "_s2": pl.Float64}
    return (pl.concat(parts) if parts else pl.DataFrame(schema=schema),
            pl.DataFrame(counts, schema={**{c: df.schema[c] for c in cols}, "_u": pl.UInt32}))


def score_distribution(run: Run | str, by: By = "bot", level: float = LEVEL) -> pl.DataFrame:
    """Distribution of the per-hand score: ``variant, <by…>, score_total, k, n_obs, n_units, p, se, p_lo, p_hi``
    (``p`` = share of the group's player-hands with that score, base units; clustered by ``run.cluster``,
    Wilson 95% interval at the effective sample size)."""
    run = as_run(run)
    cols = group_columns(by)
    frame = Pieces(run, lambda r: player_frame(r, position="position" in cols).select(
        "variant", *cols, run.cluster, "score_total"))
    out = cluster_proportions(frame, ["variant", *cols], "score_total", cluster=run.cluster, level=level)
    order = pl.DataFrame({"variant": list(run.variants), "_v": range(len(run.variants))})
    return with_id(out.join(order, on="variant").sort("_v", *cols, "score_total").drop("_v"), "score_distribution",
                   ["score_total"])
