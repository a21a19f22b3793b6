"""Cell formatting shared by the report, ``xuezhan compare`` and the summary: numbers, p-values, tables.

A leaf module (no ``analysis`` imports), so that :mod:`analysis.compare` and :mod:`analysis.report` both use it
without importing each other.
"""

from __future__ import annotations

import html
import math
import re
from typing import Any

import numpy as np
import polars as pl

MINUS = "\u2212"  # −, the typographic minus of every printed number (a hyphen reads as a dash)


def _minus(text: str) -> str:
    return MINUS + text[1:] if text.startswith("-") else text


def fmt(value: Any) -> str:
    """A cell: integers as is, floats to 4 significant digits in positional notation (never ``1e-05``; thousands
    separated), a negative number with U+2212 −, null/NaN as '—'. An estimate with an SE: :func:`fmt_se`."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | np.integer):
        return _minus(f"{value:,}" if abs(value) >= 10_000 else str(value))
    if isinstance(value, float | np.floating):
        if math.isnan(value) or math.isinf(value):
            return "—"
        if value == 0:
            return "0"
        if abs(value) >= 1000:
            return _minus(f"{value:,.0f}")
        return _minus(np.format_float_positional(float(value), precision=4, unique=False, fractional=False,
                                                 trim="-"))
    return str(value)


def se_decimals(se: Any) -> int | None:
    """Decimals that keep two significant digits of ``se`` (negative: tens, hundreds …); None without an SE."""
    if se is None or not isinstance(se, int | float | np.number) or not math.isfinite(se) or se <= 0:
        return None
    return 1 - math.floor(math.log10(se))


def fmt_se(value: Any, se: Any, signed: bool = False) -> str:
    """An estimate (or an interval's end) rounded to the second significant digit of its SE, trailing zeros kept
    (``16.00`` with SE 0.51, ``0.00183`` with SE 0.00062), positional, U+2212 minus, ``+`` when ``signed`` and
    positive; :func:`fmt` when there is no positive SE."""
    dec = se_decimals(se)
    if value is None or dec is None or not math.isfinite(value):
        text = fmt(value)
    else:
        rounded = round(float(value), dec) + 0.0  # + 0.0: no "-0.00"
        text = f"{rounded:,.{max(dec, 0)}f}" if abs(rounded) >= 10_000 else f"{rounded:.{max(dec, 0)}f}"
        if float(text.replace(",", "")) == 0:
            text = text.lstrip("-")
        text = _minus(text)
    return "+" + text if signed and text[:1].isdigit() and value is not None and value > 0 else text


def fmt_interval(est: Any, lo: Any, hi: Any, se: Any, signed: bool = True, scale: float = 1.0) -> str:
    """``+16.00 [14.98, 17.02]``: an estimate and its interval (× ``scale``) at the precision of ``se``."""
    def x(v: Any) -> Any:
        return None if v is None else v * scale
    s = None if se is None else se * scale
    return f"{fmt_se(x(est), s, signed)} [{fmt_se(x(lo), s)}, {fmt_se(x(hi), s)}]"


UNADJUSTED = "95% interval, unadjusted (the verdict and Holm p are adjusted over the family of tests)"
"""How a table's intervals are labelled where a Holm verdict sits beside them: an unadjusted interval that excludes
0 beside an "inconclusive" verdict is then read as what it is, not as a contradiction."""

P_FLOOR = 1e-4


def fmt_p(value: Any) -> str:
    """A p-value: below 1e-4 it is shown as a bound, never as a (misleading) 0 or a spurious 1e-300."""
    if isinstance(value, float) and not math.isnan(value) and value < P_FLOOR:
        return f"<{P_FLOOR:g}"
    return fmt(value)


def is_p_column(name: str) -> bool:
    """A column of p-values, raw or adjusted (``p_value…``, ``p_holm…``): printed by :func:`fmt_p`."""
    return name.startswith(("p_value", "p_holm", "p Holm"))


def _formatters(df: pl.DataFrame) -> list:
    return [fmt_p if is_p_column(c) else fmt for c in df.columns]


NUMBER = re.compile(r"^[+\-\u2212]?[\d,]+(?:\.\d+)?%?$|^—$")
"""A cell that holds one number as text (:func:`fmt_to_se`'s), right-aligned like a numeric column."""


def _numeric(df: pl.DataFrame) -> list[bool]:
    return [dt.is_numeric() or (dt == pl.String and df.height > 0 and bool(df[c].drop_nulls().len())
                                and all(NUMBER.match(v) for v in df[c].drop_nulls()))
            for c, dt in zip(df.columns, df.dtypes, strict=True)]


def html_table(df: pl.DataFrame, caption: str = "") -> str:
    """An HTML table of a frame (numbers right-aligned; a Chinese name in a ``lang="zh"`` span), with ``caption`` as
    its ``<caption>``, headers ``scope="col"``, inside a scrolling container (a wide table scrolls, not the page)."""
    head = "".join(f'<th scope="col">{html.escape(c)}</th>' for c in df.columns)
    numeric = _numeric(df)
    formatters = _formatters(df)
    rows = []
    for row in df.iter_rows():
        cells = "".join(f'<td class="{"n" if num else "s"}">{zh_spans(html.escape(f(v)))}</td>'
                        for v, num, f in zip(row, numeric, formatters, strict=True))
        rows.append(f"<tr>{cells}</tr>")
    cap = f"<caption>{zh_spans(html.escape(caption))}</caption>" if caption else ""
    return (f'<div class="scroll"><table>{cap}<thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody>'
            "</table></div>")


HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+(?:[\s·/]*[\u3400-\u9fff\uf900-\ufaff]+)*")


def zh_spans(escaped: str) -> str:
    """HTML text with each run of Chinese characters in ``<span lang="zh">`` (fonts, screen readers)."""
    return HAN.sub(lambda m: f'<span lang="zh">{m.group(0)}</span>', escaped)


def md_table(df: pl.DataFrame) -> str:
    """A GitHub-flavoured Markdown table of a frame."""
    formatters = _formatters(df)
    numeric = _numeric(df)
    lines = ["| " + " | ".join(df.columns) + " |",
             "|" + "|".join("---:" if n else ":---" for n in numeric) + "|"]
    lines += ["| " + " | ".join(f(v).replace("|", "\\|") for v, f in zip(row, formatters, strict=True)) + " |"
              for row in df.iter_rows()]
    return "\n".join(lines)


SE_PAIRS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("mean", "se", ("ci_lo", "ci_hi")),
    ("diff", "se_paired", ("ci_lo", "ci_hi", "mean_baseline")),  # the baseline mean: to the paired SE (finer)
    ("p", "se", ("p_lo", "p_hi")),
)
"""(estimate, its SE, columns rounded with it) of the tables that carry an SE: :func:`round_to_se`."""


def round_to_se(df: pl.DataFrame) -> pl.DataFrame:
    """Round each estimate (and its interval) to the second significant digit of its SE, row by row: a
    mean of 0.012345 with SE 0.0031 shows as 0.0123, the digits beyond the SE being noise. Rows without a
    positive SE, and other columns, are left as they are."""
    out = df
    for est, se, others in SE_PAIRS:
        if est not in df.columns or se not in df.columns or not df[se].dtype.is_numeric():
            continue
        s = df[se].cast(pl.Float64).fill_null(np.nan).to_numpy()
        with np.errstate(divide="ignore", invalid="ignore"):
            dec = np.where(s > 0, 1 - np.floor(np.log10(s)), np.nan)
        scale = np.where(np.isfinite(dec), 10.0 ** np.nan_to_num(dec), np.nan)
        for c in (est, *others):
            if c not in df.columns or not df[c].dtype.is_float():
                continue
            v = df[c].fill_null(np.nan).to_numpy()
            r = np.where(np.isfinite(scale), np.round(v * scale) / scale, v)
            out = out.with_columns(pl.Series(c, r, dtype=pl.Float64, nan_to_null=True))
    return out


def fmt_to_se(df: pl.DataFrame) -> pl.DataFrame:
    """Each estimate and its interval (:data:`SE_PAIRS`) as text at the precision of its row's SE, trailing zeros
    kept (:func:`fmt_se`): for display, before the SE columns are dropped. Rows without an SE use :func:`fmt`."""
    out = df
    for est, se, others in SE_PAIRS:
        if est not in df.columns or se not in df.columns or not df[se].dtype.is_numeric():
            continue
        ses = df[se].to_list()
        for c in (est, *others):
            if c in df.columns and df[c].dtype.is_float():
                out = out.with_columns(pl.Series(c, [fmt_se(v, e) for v, e in zip(df[c].to_list(), ses, strict=True)],
                                                 dtype=pl.String))
    return out
