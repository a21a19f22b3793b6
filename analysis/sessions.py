"""Sessions: what an evening of K chained hands does to a player (runs whose rule set has ``session:``).

The independent unit is the **session** (its walls are independent of every other session's); under duplicate
seating the four seatings of one session's walls share every tile, so they are one unit (``unit`` =
``session_id // 4``). Per player per session (:func:`session_players`):

- ``points``: the session's total score in base units (Σ ``score_total``), comparable across variants;
- ``net``: the change of the player's balance in the session's money (``bankroll`` column: base units under
  ``money: points``, coins under ``money: coins``, where each hand also pays the rake);
- ``low``: the lowest balance after any hand; ``ruined``: it reached 0 or less (only with a ``bankroll``);
- ``n_hands`` played (fewer than K when the session stopped because a player was broke), ``dealt``: hands
  this player dealt.

Money in the session's money unless named ``points``; every estimate with its number of sessions and an SE or a
95% interval (Wilson for P(ruin), at the effective sample size when a group has several players per session).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import polars as pl

from analysis.ids import with_id
from analysis.load import Run, as_run
from analysis.pieces import Pieces, summed
from analysis.stats import LEVEL, cluster_means, cluster_proportions, normal_p, p_adjust, z_value

PLAYERS_PER_HAND = 4
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
SESSION_GROUPS = ("seat", "bot")


def session_variants(run: Run | str) -> list[str]:
    """The variants of a run that played sessions, in run order."""
    run = as_run(run)
    return [v for v in run.variants if run.session(v) is not None]


def _groups(by: str | Sequence[str]) -> list[str]:
    cols = [by] if isinstance(by, str) else list(by)
    bad = [c for c in cols if c not in SESSION_GROUPS]
    if bad or not cols:
        raise ValueError(f"group by {cols!r}: expected some of {', '.join(map(repr, SESSION_GROUPS))}")
    return cols


def session_players(run: Run | str, variants: str | list[str] | None = None) -> pl.LazyFrame:
    """One row per variant × session × seat: ``variant, session_id, unit, seat, bot, n_hands, dealt, points,
    start, net, low, ruined, house`` (``house``: what the house took from this player: rake × hands, coins,
    0 under ``money: points``)."""
    run = as_run(run)
    names = session_variants(run) if variants is None else [variants] if isinstance(variants, str) else variants
    frames = []
    for v in names:
        sess = run.session(v)
        if sess is None:
            raise ValueError(f"variant {v!r} did not play sessions (its rule set has no session block)")
        start = float(sess.get("bankroll") or 0.0)
        rake = run.economy(v)["rake"] if sess.get("money") == "coins" else 0.0
        unit = pl.col("session_id") // 4 if run.duplicate else pl.col("session_id")
        dealer = run.hands(v).select("hand_id", "dealer")
        lf = (run.players(v).join(dealer, on="hand_id", how="left")
              .group_by("variant", "session_id", "seat")
              .agg(pl.col("bot").first(), pl.len().cast(pl.Int64).alias("n_hands"),
                   (pl.col("dealer") == pl.col("seat")).sum().cast(pl.Int64).alias("dealt"),
                   pl.col("score_total").cast(pl.Int64).sum().alias("points"),
                   pl.col("bankroll").sort_by("hand_in_session").last().alias("_last"),
                   pl.col("bankroll").min().alias("low"))
              .with_columns(unit.alias("unit"), pl.lit(start).alias("start"),
                            (pl.col("_last") - start).alias("net"),
                            pl.lit(sess.get("bankroll") is not None).alias("_has_bankroll"))
              .with_columns(pl.when(pl.col("_has_bankroll")).then(pl.col("low") <= 0).alias("ruined"),
                            (pl.col("n_hands") * rake).alias("house"))
              .select("variant", "session_id", "unit", "seat", "bot", "n_hands", "dealt", "points", "start",
                      "net", "low", "ruined", "house"))
        frames.append(lf)
    if not frames:
        raise ValueError(f"{run.path}: no variant played sessions (no session block in any rule set)")
    return pl.concat(frames)


def session_results(run: Run | str, by: str | Sequence[str] = "bot", level: float = LEVEL) -> pl.DataFrame:
    """Per-session results per variant and group: long table ``variant, <by…>, quantity, n_units, n_obs, mean,
    se, ci_lo, ci_hi`` for ``net`` (session money), ``points`` (base units), ``n_hands`` and ``dealt``, clustered
    by session (``n_units`` sessions, ``n_obs`` player-sessions)."""
    run = as_run(run)
    cols = _groups(by)
    lf = _pieces(run, None, lambda x: x.with_columns(pl.col("n_hands").cast(pl.Float64),
                                                     pl.col("dealt").cast(pl.Float64)))
    out = cluster_means(lf, ["variant", *cols], ["net", "points", "n_hands", "dealt"], cluster="unit",
                        level=level)
    return with_id(_in_run_order(out, run, cols).select("variant", *cols, "quantity", "n_units", "n_obs", "mean",
                                                        "se", "ci_lo", "ci_hi"), "session", ["quantity"])


def session_distribution(run: Run | str, by: str | Sequence[str] = "bot") -> pl.DataFrame:
    """The distribution of a player's session result (``net``, session money) per variant and group: ``variant,
    <by…>, n_obs, min, q05, q25, q50, q75, q95, max`` over player-sessions (order statistics; ``n_obs`` says
    how many)."""
    run = as_run(run)
    cols = _groups(by)
    qs = [pl.col("net").quantile(q, "linear").alias(f"q{round(100 * q):02d}") for q in QUANTILES]
    # exact quantiles: one number a player-session (and its group), gathered piece by piece
    nets = _pieces(run, None, lambda x: x.select("variant", *cols, "net")).collect(lambda x: [x])[0]
    out = (pl.concat(nets).group_by("variant", *cols)
           .agg(pl.len().cast(pl.Int64).alias("n_obs"), pl.col("net").min().alias("min"), *qs,
                pl.col("net").max().alias("max")))
    return with_id(_in_run_order(out, run, cols), "session_distribution")


def ruin_table(run: Run | str, by: str | Sequence[str] = "seat", bankroll: float | None = None,
               level: float = LEVEL) -> pl.DataFrame:
    """P(ruin): the share of player-sessions whose balance reached 0 or less, per variant and group, plus
    ``<by> = "any"`` rows: the share of sessions in which at least one player was ruined.
    ``variant, <by>, bankroll, k, n_obs, n_units, p, p_lo, p_hi`` (Wilson; at the effective sample size when a
    group holds several players of one session).

    ``bankroll`` None: each variant's own ``session.bankroll`` (variants without one are left out). A number:
    the ruin of a player who starts with that much (session money), from the running results — for variants
    without ``stop_when_broke`` only, whose sessions are never cut short. Under ``stop_when_broke`` a session
    ends at its first ruin, so the others' P(ruin) counts only what happened until then."""
    run = as_run(run)
    cols = _groups(by)
    if len(cols) != 1:
        raise ValueError("ruin_table groups by one column ('seat' or 'bot')")
    if bankroll is not None and not bankroll > 0:
        raise ValueError(f"bankroll must be positive, got {bankroll}")
    col = cols[0]
    if bankroll is None:
        names = [v for v in session_variants(run) if run.session(v).get("bankroll") is not None]
    else:
        names = [v for v in session_variants(run) if not run.session(v).get("stop_when_broke")]
    if not names:
        return pl.DataFrame()
    bank = pl.DataFrame({"variant": names, "bankroll": [
        float(run.session(v)["bankroll"] if bankroll is None else bankroll) for v in names]})
    # ruined: the lowest balance, measured from the start, went to −bankroll or below
    def ruined(x: pl.LazyFrame) -> pl.LazyFrame:
        return (x.join(bank.lazy(), on="variant")
                .with_columns(pl.col(col).cast(pl.String),
                              (pl.col("low") - pl.col("start") <= -pl.col("bankroll")).cast(pl.Int8).alias("ruined")))

    def anyone(x: pl.LazyFrame) -> pl.LazyFrame:
        return (ruined(x).group_by("variant", "unit", "session_id").agg(pl.col("ruined").max())
                .with_columns(pl.lit("any").alias(col)))

    out = pl.concat([_ruin_share(_pieces(run, names, ruined), col, level),
                     _ruin_share(_pieces(run, names, anyone), col, level)])
    return with_id(_in_run_order(out.join(bank, on="variant"), run, [col]).select(
        "variant", col, "bankroll", "k", "n_obs", "n_units", "p", "p_lo", "p_hi"), "ruin")


def _ruin_share(lf: Pieces, col: str, level: float) -> pl.DataFrame:
    """``variant, <col>, k, n_obs, n_units, p, p_lo, p_hi`` of the 0/1 column ``ruined``, clustered by unit."""
    per = cluster_proportions(lf, ["variant", col], "ruined", cluster="unit", level=level)
    groups = per.group_by("variant", col).agg(pl.col("n_obs").first(), pl.col("n_units").first())
    hit = per.filter(pl.col("ruined") == 1).select("variant", col, "k", "p", "p_lo", "p_hi")
    # a group where nobody was ruined has no ruined = 1 row: k = 0, p = 0, Wilson upper bound z²/(n + z²)
    z2 = z_value(level) ** 2
    return (groups.join(hit, on=["variant", col], how="left")
            .with_columns(pl.col("k").fill_null(0), pl.col("p").fill_null(0.0), pl.col("p_lo").fill_null(0.0),
                          pl.col("p_hi").fill_null(z2 / (pl.col("n_units").cast(pl.Float64) + z2)))
            .select("variant", col, "k", "n_obs", "n_units", "p", "p_lo", "p_hi"))


def house_take(run: Run | str, level: float = LEVEL) -> pl.DataFrame:
    """What the house keeps per session (coins: rake × 4 players × hands played; 0 under ``money: points``):
    ``variant, money, rake, hands_per_session, n_units, mean, se, ci_lo, ci_hi`` (``hands_per_session``: mean
    hands played per session)."""
    run = as_run(run)
    per = _pieces(run, None, lambda x: x.group_by("variant", "unit", "session_id").agg(
        pl.col("house").sum(), pl.col("n_hands").first().cast(pl.Float64).alias("hands")))
    out = cluster_means(per, ["variant"], ["house", "hands"], cluster="unit", level=level)
    house = out.filter(pl.col("quantity") == "house").drop("quantity")
    hands = out.filter(pl.col("quantity") == "hands").select("variant", pl.col("mean").alias("hands_per_session"))
    meta = pl.DataFrame({"variant": session_variants(run),
                         "money": [run.session(v).get("money", "points") for v in session_variants(run)],
                         "rake": [run.economy(v)["rake"] if run.session(v).get("money") == "coins" else 0.0
                                  for v in session_variants(run)]})
    return with_id(_in_run_order(house.join(hands, on="variant").join(meta, on="variant"), run, []).select(
        "variant", "money", "rake", "hands_per_session", "n_units", "mean", "se", "ci_lo", "ci_hi"), "house_take",
        ["money"])


def dealer_rule_effect(run: Run | str, variant: str, baseline: str, by: str | Sequence[str] = "seat",
                       level: float = LEVEL) -> pl.DataFrame:
    """The effect of a variant's session rules (e.g. its dealer rule) on a player's session result, paired on
    common random numbers: the same session id is the same walls in both variants. Per group: ``<by…>,
    quantity, n_units, mean_variant, mean_baseline, diff, se, ci_lo, ci_hi, p_value, p_holm`` for ``points``
    (base units per session) and ``dealt`` (hands dealt per session); the SE is that of the per-session paired
    differences, ``p_value`` tests diff = 0 (normal), ``p_holm`` is Holm-adjusted over the table's rows."""
    run = as_run(run)
    cols = _groups(by)
    for v in (variant, baseline):
        if run.session(v) is None:
            raise ValueError(f"variant {v!r} did not play sessions")
    if run.session(variant)["hands"] != run.session(baseline)["hands"]:
        raise ValueError(f"{variant} and {baseline} play sessions of different lengths: not paired")
    keep = ["session_id", "unit", "seat", *[c for c in cols if c != "seat"], "points", "dealt"]

    def both(r: Run) -> pl.LazyFrame:
        a = session_players(r, variant).select(keep)
        b = session_players(r, baseline).select(keep)
        return a.join(b, on=["session_id", "unit", "seat"], how="inner", suffix="_b")

    def sums(x: pl.LazyFrame) -> list[pl.LazyFrame]:
        # per group: the sums over units (sessions) that the paired ratio mean and its SE read, additive over
        # pieces of whole sessions
        out = []
        for q in ("points", "dealt"):
            per_unit = (x.with_columns((pl.col(q) - pl.col(f"{q}_b")).cast(pl.Float64).alias("_d"))
                        .group_by(*cols, "unit").agg(pl.col("_d").sum(), pl.len().cast(pl.Float64).alias("_m"),
                                                     pl.col(q).sum().alias("_a"), pl.col(f"{q}_b").sum().alias("_b")))
            out.append(per_unit.group_by(cols).agg(
                pl.len().cast(pl.Int64).alias("n_units"), pl.col("_d").sum().alias("_D"),
                pl.col("_m").sum().alias("_M"), pl.col("_a").sum().alias("_A"), pl.col("_b").sum().alias("_B"),
                (pl.col("_d") ** 2).sum().alias("_DD"), (pl.col("_d") * pl.col("_m")).sum().alias("_DM"),
                (pl.col("_m") ** 2).sum().alias("_MM")))
        return out

    z = z_value(level)
    frames = []
    for q, parts in zip(("points", "dealt"), Pieces(run, both).collect(sums), strict=True):
        r = pl.col("_D") / pl.col("_M")
        n = pl.col("n_units").cast(pl.Float64)
        # cluster-robust SE of a ratio mean: sqrt(n/(n−1) · Σ(d_u − r·m_u)²) / Σm_u, the square expanded
        dev = (pl.col("_DD") - 2 * r * pl.col("_DM") + r * r * pl.col("_MM")).clip(lower_bound=0.0)
        frames.append(summed(parts, cols).select(
            *cols, "n_units", r.alias("diff"), (pl.col("_A") / pl.col("_M")).alias("mean_variant"),
            (pl.col("_B") / pl.col("_M")).alias("mean_baseline"),
            ((n / (n - 1) * dev).sqrt() / pl.col("_M")).alias("se")).with_columns(
            pl.lit(q).alias("quantity"), (pl.col("diff") - z * pl.col("se")).alias("ci_lo"),
            (pl.col("diff") + z * pl.col("se")).alias("ci_hi")))
    out = pl.concat(frames).sort(*cols, "quantity")
    p = normal_p(out["diff"].to_numpy().astype(float), out["se"].to_numpy().astype(float))
    ok = ~np.isnan(p)
    holm = np.full(len(p), np.nan)
    holm[ok] = p_adjust(p[ok], "holm")
    return with_id(out.with_columns(
        pl.lit(variant).alias("variant"), pl.lit(baseline).alias("baseline"),
        pl.Series("p_value", p, nan_to_null=True), pl.Series("p_holm", holm, nan_to_null=True)).select(
        "variant", "baseline", *cols, "quantity", "n_units", "mean_variant", "mean_baseline", "diff", "se",
        "ci_lo", "ci_hi", "p_value", "p_holm"), "session_paired", ["quantity"])


def _pieces(run: Run, variants: list[str] | None,
            then: Callable[[pl.LazyFrame], pl.LazyFrame] | None = None) -> Pieces:
    """:func:`session_players` (then ``then`` of it) read piece by piece: a piece holds whole sessions."""
    return Pieces(run, lambda r: (then or (lambda x: x))(session_players(r, variants)))


def _in_run_order(df: pl.DataFrame, run: Run, cols: list[str]) -> pl.DataFrame:
    order = pl.DataFrame({"variant": list(run.variants), "_v": range(len(run.variants))})
    return df.join(order, on="variant").sort("_v", *cols, maintain_order=True).drop("_v")
