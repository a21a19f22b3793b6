"""How the report looks: a :class:`Section` (title, paragraph, tables and figures in order), each table as the
reader sees it (:func:`present`: unit names, Chinese names, the columns a reader needs, numbers rounded to their
SE), and the whole as one self-contained HTML page (figures as inline SVG data) or as Markdown.

:mod:`analysis.report_build` fills the sections; :mod:`analysis.report` writes the files.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field
from typing import Any

import polars as pl
from matplotlib.figure import Figure

from analysis import ev, plots
from analysis.fmt import fmt_to_se, html_table, md_table, zh_spans
from analysis.load import Run


@dataclass
class Section:
    """A report section: a title, an optional paragraph, then tables and figures in order."""

    title: str
    text: str = ""
    items: list[tuple[str, str, Any]] = field(default_factory=list)  # ("table"|"figure"|"text", caption, object)
    images: dict[int, bytes] = field(default_factory=dict)  # item index -> the figure rendered (SVG), if done
    ids: dict[int, str] = field(default_factory=dict)  # item index -> a table's stable id (its CSV's name)
    data: dict[int, pl.DataFrame] = field(default_factory=dict)  # item index -> the numbers of a table of text

    def table(self, caption: str, df: pl.DataFrame, table_id: str, data: pl.DataFrame | None = None) -> None:
        """A table shown as :func:`present` makes it; ``table_id``: its stable id (``<table_id>.csv`` among the
        report's tables, the same in every report that has it); ``data``: the numbers behind ``df`` when ``df``
        holds text (an estimate with its interval in one cell …), written to the CSV instead of ``df``."""
        self.ids[len(self.items)] = table_id
        if data is not None:
            self.data[len(self.items)] = data
        self.items.append(("table", caption, df))

    def text_item(self, text: str) -> None:
        self.items.append(("text", "", text))

    def tables(self) -> list[tuple[str, str, pl.DataFrame]]:
        """``(table_id, caption, numbers)`` of each table: what the report's CSVs hold."""
        return [(self.ids[j], caption, self.data.get(j, obj)) for j, (kind, caption, obj) in enumerate(self.items)
                if kind == "table"]

    def figure(self, caption: str, fig: Figure) -> None:
        self.items.append(("figure", caption, fig))


# ---------------------------------------------------------------------------------------------------------
# Presentation: unit names, Chinese names, tables that say nothing


def zh_names() -> dict[str, str]:
    """Chinese names of hand types and pattern flags, by pinyin key."""
    from simulator.vocab import FLAG_ZH, HAND_TYPE_ZH

    return {**FLAG_ZH, **HAND_TYPE_ZH}


PAIRED_HIDDEN = ("variant", "n_obs", "mean", "se_paired", "interval", "p_value", "measured_in", "se_unpaired", "vrf",
                 "detect", "hands_unpaired")
"""Columns of a paired table the report does not print (every one is in the table's CSV, :func:`write_tables`);
what stays: the group, units, differing units, baseline, change, interval, Holm p, verdict, hands needed."""


def present(df: pl.DataFrame, run: Run) -> pl.DataFrame:
    """A table as the report shows it: the unit count headed ``hands`` or ``walls`` (``n_hands`` dropped when
    every hand is its own unit), pinyin hand types / flags followed by their Chinese names, positions as
    ``dealer``, ``dealer+1``…, the stable ``id`` and the constant ``unit``/``baseline`` columns dropped, and a
    paired table cut to the columns a reader needs (:data:`PAIRED_HIDDEN` are in its CSV), estimates and intervals
    printed at the precision of their standard error, trailing zeros kept (:func:`analysis.fmt.fmt_to_se`)."""
    shown = fmt_to_se(df)  # estimates and intervals as text at their SE's precision, before the SEs are dropped
    out = shown.drop([c for c in ("id", "unit", "baseline") if c in df.columns])  # ids: in the CSV
    if "hands_paired" in out.columns and "verdict" in out.columns:  # a paired table: the rest is in its CSV
        out = out.drop([c for c in PAIRED_HIDDEN if c in out.columns])
    if "n_units" in out.columns:
        if run.cluster == "hand_id" and "n_hands" in out.columns:
            out = out.drop("n_hands")
        out = out.rename({"n_units": f"{run.unit}s", **({"n_hands": "hands"} if "n_hands" in out.columns else {})})
    for col in ("hand_type", "flag"):
        if col in out.columns:
            names = {k: f"{k} {v}" for k, v in zh_names().items()}
            out = out.with_columns(pl.col(col).replace(names))
    if "position" in out.columns:
        out = out.with_columns(pl.col("position").map_elements(lambda p: ev.POSITION_NAMES[p],
                                                               return_dtype=pl.String))
    return out


def slug(title: str) -> str:
    """GitHub-style anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    keep = "".join(ch for ch in title.lower() if ch.isalnum() or ch in " -_")
    return keep.strip().replace(" ", "-")


def _contents_at(sections: list[Section]) -> int:
    """Index before which the table of contents goes: right after the summary (the answer comes first, and
    any flags before it), else after the first section."""
    titles = [sec.title for sec in sections]
    return titles.index("Summary") + 1 if "Summary" in titles else min(1, len(sections))


FONTS = ('system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK SC","Source Han Sans SC",'
         '"PingFang SC","Hiragino Sans GB","Microsoft YaHei","WenQuanYi Micro Hei",sans-serif')
"""The page's font stack: Latin first, then the common CJK fonts of Linux, macOS and Windows (no boxes for 花猪)."""


def _paragraphs(text: str) -> str:
    """A section's text as HTML: runs of ``- `` lines as a list, other lines as paragraphs; Chinese in spans."""
    out: list[str] = []
    items: list[str] = []
    for line in text.splitlines():
        if line.lstrip().startswith(("- ", "• ")):
            items.append(f"<li>{zh_spans(html.escape(line.lstrip()[2:]))}</li>")
            continue
        if items:
            out.append(f"<ul>{''.join(items)}</ul>")
            items = []
        if line.strip():
            out.append(f"<p class='m'>{zh_spans(html.escape(line))}</p>")
    if items:
        out.append(f"<ul>{''.join(items)}</ul>")
    return "".join(out)


def render_html(title: str, sections: list[Section], subtitle: str, run: Run | None = None) -> str:
    css = (f"body{{font-family:{FONTS};margin:2em;max-width:1400px}}table{{border-collapse:collapse;margin:.5em 0 "
           "1.5em;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px}th{background:#f0f0f0}td.n{text-align:"
           "right;font-variant-numeric:tabular-nums}p.m{font-size:13px;margin:.3em 0}li{font-size:13px}"
           "div.scroll{overflow-x:auto;max-width:100%}figure{margin:0 0 1em}"
           "figcaption,caption{font-weight:bold;font-size:13px;text-align:left;padding:.3em 0}img{max-width:100%}")
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
             "<meta name='viewport' content='width=device-width, initial-scale=1'>"
             f"<title>{html.escape(title)}</title>"
             f"<style>{css}</style></head><body><h1>{zh_spans(html.escape(title))}</h1>"
             f"<p>{zh_spans(html.escape(subtitle))}</p>"]
    at = _contents_at(sections)
    for i, sec in enumerate(sections):
        if i == at:
            parts.append("<h2>Contents</h2><ol>" + "".join(
                f"<li><a href='#{slug(x.title)}'>{zh_spans(html.escape(x.title))}</a></li>" for x in sections)
                + "</ol>")
        parts.append(f"<h2 id='{slug(sec.title)}'>{zh_spans(html.escape(sec.title))}</h2>")
        if sec.text:
            parts.append(_paragraphs(sec.text))
        for j, (kind, caption, obj) in enumerate(sec.items):
            if kind == "table":
                table = present(obj, run) if run is not None else obj
                parts.append(html_table(table, caption))
            elif kind == "text":
                parts.append(_paragraphs(obj))
            else:
                data = base64.b64encode(sec.images.get(j) or plots.to_svg(obj)).decode()
                parts.append(f"<figure><figcaption>{zh_spans(html.escape(caption))}</figcaption>"
                             f"<img alt='{html.escape(caption)}' src='data:image/svg+xml;base64,{data}'></figure>")
    parts.append("</body></html>")
    return "\n".join(parts)


def render_markdown(title: str, sections: list[Section], subtitle: str, html_name: str,
                    run: Run | None = None) -> str:
    out = [f"# {title}", "", subtitle, "", f"Figures: see `{html_name}`.", ""]
    at = _contents_at(sections)
    for i, sec in enumerate(sections):
        if i == at:
            out += ["## Contents", "", *[f"{j + 1}. [{x.title}](#{slug(x.title)})" for j, x in enumerate(sections)],
                    ""]
        out += [f"## {sec.title}", ""]
        if sec.text:
            out += [sec.text.replace("\n", "  \n"), ""]
        for kind, caption, obj in sec.items:
            if kind == "table":
                table = present(obj, run) if run is not None else obj
                out += [f"**{caption}**", "", md_table(table), ""]
            elif kind == "text":
                out += [obj.replace("\n", "  \n"), ""]
    return "\n".join(out)
