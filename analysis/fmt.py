"""Cell formatting shared by the report, ``xuezhan compare`` and the summary: numbers, p-values, tables.

A leaf module (no ``analysis`` imports), so that :mod:`analysis.compare` and :mod:`analysis.report` both use it
without importing each other.
"""

from __future__ import annotations

import html
import math
from typing import Any

import numpy as np
import polars as pl


def fmt(value: Any) -> str:
    """A cell: integers as is, floats to 4 significant digits (thousands separated), null/NaN as '—'."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return "—"
        if value == 0:
            return "0"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:.4g}"
    return str(value)


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


def html_table(df: pl.DataFrame, caption: str = "") -> str:
    """An HTML table of a frame (numbers right-aligned), with ``caption`` as its ``<caption>``."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in df.columns)
    numeric = [dt.is_numeric() for dt in df.dtypes]
    formatters = _formatters(df)
    rows = []
    for row in df.iter_rows():
        cells = "".join(f'<td class="{"n" if num else "s"}">{html.escape(f(v))}</td>'
                        for v, num, f in zip(row, numeric, formatters, strict=True))
        rows.append(f"<tr>{cells}</tr>")
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def md_table(df: pl.DataFrame) -> str:
    """A GitHub-flavoured Markdown table of a frame."""
    formatters = _formatters(df)
    numeric = [dt.is_numeric() for dt in df.dtypes]
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
