"""Stable row ids of the analysis tables: what a script keys on, whatever the labels people read.

Every table of the public API (``xuezhan.expected_value``, ``paired_comparison``, ``game_shape`` …) carries an
``id`` column first: the quantity and the group it is measured in, dot-separated parts in lower case
``[a-z0-9_]`` (a negative score keeps its ``-``; a bot's name is as logged). The same row has the same id in the
API frame, in ``xuezhan compare --format json|csv`` and in the report's CSV tables; within one variant (and
comparison) of a table the ids are unique. The grammar:

- ``score.<component>.<group>``: a score component (:data:`analysis.ev.COMPONENTS`) per hand, by group —
  ``seat<k>``, ``position<k>`` (0 = dealer) or ``bot.<bot>`` (in a paired row whose seat changed bot:
  ``bot.<bot>.was.<baseline bot>``); ``expected_value`` and ``paired_comparison`` alike;
- ``metric.<metric>``: a paired hand metric (:data:`HAND_METRIC_IDS`);
- ``<table>.<key>[.<group>]`` for the other tables, the key slugged from its label (:func:`slug`):
  ``hand_type.qingyise``, ``flag.gen``, ``distribution.fan.2``, ``fan_summary.capped_fan``,
  ``shape.hand.turns_per_hand`` (per hand, win or player-hand), ``risk.cvar95_loss.bot.greedy``,
  ``session_risk.q_0_05.seat0``, ``score_distribution.-12.bot.expert``, ``economy.coin_loss.bot.greedy``,
  ``decline.won.difference.bot.value`` (``declined``, ``not`` or their ``difference``), ``session.net.seat0``,
  ``session_distribution.seat0``, ``ruin.seat0`` / ``ruin.any``, ``house_take.points``,
  ``session_paired.dealt.seat0``, ``skill.expert.greedy`` (test and field bot).

A leaf module (polars only), so that every table module can add its ids.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import polars as pl

HAND_METRIC_IDS: dict[str, str] = {
    "exhaustive_draw (流局)": "exhaustive_draw", "winners": "winners", "wins": "wins", "turns": "turns",
    "kongs": "kongs", "huazhu (花猪) any": "huazhu_any", "chadajiao (查大叫) any": "chadajiao_any",
    "cap binds (any win)": "cap_binds", "wins ≥ 2 fan": "wins_2fan", "declined wins": "declined_wins",
    "points exchanged": "points_exchanged"}
"""Stable id of each hand metric of :data:`analysis.compare.HAND_METRICS` (whose keys are the display labels)."""

_WORDS = (("≥", " ge "), ("≤", " le "), (">", " gt "), ("<", " lt "), ("=", " "))
_NATIVE = re.compile(r"\s*\([^)]*[^\x00-\x7f][^)]*\)")  # a parenthesised Chinese name: "(流局)"


def slug(label: object) -> str:
    """A label as an id part: a known hand metric by :data:`HAND_METRIC_IDS`; a number with its sign, a decimal
    point as ``_`` (``-12``, ``-0.5`` → ``-0_5``); else lower case, a Chinese name in parentheses dropped,
    comparison signs as words, every other run of characters but ``[a-z0-9]`` one ``_`` (``"q(0.05)"`` →
    ``q_0_05``, ``"P(loss>16)"`` → ``p_loss_gt_16``, ``"winners=2"`` → ``winners_2``)."""
    text = str(label)
    if text in HAND_METRIC_IDS:
        return HAND_METRIC_IDS[text]
    if re.fullmatch(r"-?\d+(\.\d+)?", text):  # a score or a count: its sign kept, a decimal point as "_"
        return text.removesuffix(".0").replace(".", "_")
    text = _NATIVE.sub("", text).lower()
    for sign, word in _WORDS:
        text = text.replace(sign, word)
    return re.sub(r"[^a-z0-9]+", "_", text).strip("_")


def _group(df: pl.DataFrame) -> list[pl.Expr]:
    """The group parts of an id, in the frame's column order: ``seat<k>``, ``position<k>``, ``bot.<bot>``
    (``.was.<bot_baseline>`` when a paired row's seat changed bot)."""
    parts = []
    for c in df.columns:
        if c in ("seat", "position"):  # "any" (P(ruin) of anyone at the table) stays a word
            parts.append(pl.when(pl.col(c).cast(pl.String) == "any").then(pl.lit("any"))
                         .otherwise(pl.format(f"{c}{{}}", pl.col(c))))
        elif c == "bot":
            was = (pl.when(pl.col("bot_baseline") != pl.col("bot")).then(pl.format(".was.{}", "bot_baseline"))
                   .otherwise(pl.lit("")) if "bot_baseline" in df.columns else pl.lit(""))
            parts.append(pl.concat_str(pl.lit("bot."), pl.col("bot"), was))
    return parts


def with_id(df: pl.DataFrame, head: str, keys: Sequence[str] = (), slugged: bool = True,
            names: Mapping[str, str] | None = None) -> pl.DataFrame:
    """``df`` with its ``id`` column first: ``head``, the values of ``keys`` (each :func:`slug`-ged unless
    ``slugged`` is False, or looked up in ``names``), then the group parts (:func:`_group`), joined by dots.
    A frame that has an ``id`` already gets a new one."""
    parts: list[pl.Expr] = [pl.lit(head)]
    for k in keys:
        col = pl.col(k).cast(pl.String)
        if names is not None:
            col = col.replace_strict(dict(names), return_dtype=pl.String)
        elif slugged:
            col = col.map_elements(slug, return_dtype=pl.String)
        parts.append(col)
    body = df.drop("id") if "id" in df.columns else df
    if body.height == 0:
        return body.select(pl.lit(None, dtype=pl.String).alias("id"), pl.all())
    return body.select(pl.concat_str([*parts, *_group(body)], separator=".").alias("id"), pl.all())
