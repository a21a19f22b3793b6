"""The run report: one self-contained HTML file (figures as SVG, their text as text) plus a Markdown summary
beside it, and every table as CSV.

:func:`write_report` is what ``xuezhan report`` and ``xuezhan study`` call. The answer comes first: a summary
of each variant's largest practically significant differences (:func:`analysis.summary.summary_items`), then a
table of contents, then every table of ``analysis``, each estimate with its ``n`` (counted in independent units,
headed "hands" or "walls") and an SE or a 95% interval; the run section states the variants' rule sets (digest,
differences from the baseline), seed, hand counts, ``scoring.base`` and economy. Both files and the tables'
directory are written to temporaries and renamed into place only when everything has been computed, so a
failure never leaves a half-written report.

The parts: :mod:`analysis.report_build` computes the sections (:func:`build_sections`: which tables, in which
order, with which text), :mod:`analysis.report_render` renders them (:class:`Section`, :func:`present`,
:func:`render_html`, :func:`render_markdown`), this module writes the files. Their public names are re-exported
here.
"""

from __future__ import annotations

import os
import re
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from analysis.family import with_verdict_codes
from analysis.fmt import fmt, fmt_p, html_table, md_table, round_to_se
from analysis.load import Run, open_run
from analysis.report_build import (
    METHODS,
    SESSIONS_TEXT,
    TABLE_THREADS,
    build_sections,
    comparisons,
    decline_text,
    diagnostics_sections,
    glance_table,
    header_table,
    one_bot_sentence,
    risk_text,
    sessions_section,
)
from analysis.report_render import PAIRED_HIDDEN, Section, present, render_html, render_markdown, slug, zh_names
from analysis.summary import rule_differences

__all__ = [  # the report's parts, importable from here as before the split
    "METHODS", "PAIRED_HIDDEN", "SESSIONS_TEXT", "TABLE_THREADS", "Section", "build_sections", "comparisons",
    "decline_text", "diagnostics_sections", "fmt", "fmt_p", "glance_table", "header_table", "html_table",
    "md_table", "one_bot_sentence", "present", "render_html", "render_markdown", "risk_text", "round_to_se",
    "rule_differences", "sessions_section", "slug", "stage_tables", "table_file", "write_report", "write_tables",
    "zh_names",
]


def _atomic_write_text(path: Path, text: str) -> Path:
    """Write to a temporary file in the target directory; the caller renames it into place."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; a report is an ordinary file
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def write_tables(sections: list[Section], directory: Path) -> Path:
    """Every table of the report as CSV, full precision and every column (the report prints fewer), in
    ``directory``: ``<table id>.csv`` (:func:`table_file`), the numbers behind a table that shows text, plus
    ``index.csv`` (id, file, section, caption). Written to a temporary directory first (:func:`stage_tables`)
    and renamed into place, replacing an older one."""
    return _swap_in(stage_tables(sections, directory), directory)


def table_file(table_id: str) -> str:
    """The CSV file of a report table: its stable id (``summary.who_wins``, ``ev.seat``,
    ``paired.cap3.chengdu.metrics`` …) with any character outside ``[A-Za-z0-9_.+-]`` (what a variant name may
    hold) as ``_``, then ``.csv``."""
    return re.sub(r"[^A-Za-z0-9_.+-]+", "_", table_id) + ".csv"


def stage_tables(sections: list[Section], directory: Path) -> Path:
    """The CSV tables of :func:`write_tables` in a new temporary directory beside ``directory`` (removed again
    if writing fails); the caller renames it into place (:func:`_swap_in`) or removes it. A paired table's
    ``verdict`` is followed by its ``verdict_code`` (:data:`analysis.family.VERDICT_CODES`)."""
    import shutil

    tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
    try:
        index = []
        for sec in sections:
            for table_id, caption, df in sec.tables():
                name = table_file(table_id)
                if (tmp / name).exists():
                    raise ValueError(f"two report tables with the id {table_id!r}")
                with_verdict_codes(df).write_csv(tmp / name)
                index.append({"id": table_id, "file": name, "section": sec.title, "caption": caption})
        pl.DataFrame(index, schema={c: pl.String for c in ("id", "file", "section", "caption")}).write_csv(
            tmp / "index.csv")
        os.chmod(tmp, 0o777 & ~_umask())
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return tmp


def _swap_in(tmp: Path, directory: Path) -> Path:
    import shutil

    if directory.exists():
        shutil.rmtree(directory)
    os.replace(tmp, directory)
    return directory


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def write_report(run_dir: Path | Run, baseline: str | None = None, out: Path | None = None, *, n_boot: int = 200,
                 session_hands: int = 40, seed: int = 0, findings: list | None = None,
                 progress: bool = False) -> Path:
    """Write ``out`` (default ``run_dir/report.html``) and the Markdown summary beside it (``report.md`` for
    the default name, else ``out`` with the suffix ``.md``) and every table as CSV in ``<out stem>_tables/``
    (:func:`write_tables`); return the HTML path. Nothing is written if any part fails.

    ``baseline``: a variant name (default: ``study.json``'s baseline, else the first variant). ``findings``:
    :func:`analysis.diagnostics.diagnose` of this run and baseline when the caller has it already (``xuezhan
    study``). ``progress``: a bar of the tables computed, on a terminal. A bad run directory or unknown variant
    raises :class:`analysis.load.RunDirError` before anything is written."""
    run = run_dir if isinstance(run_dir, Run) else open_run(run_dir)
    base = run.check(baseline) if baseline is not None else run.baseline
    out = Path(out) if out is not None else run.path / "report.html"
    if out.suffix.lower() not in (".html", ".htm"):
        out = out.with_suffix(".html")
    if not out.parent.is_dir():
        from analysis.load import RunDirError

        raise RunDirError(f"--out {out}: directory {out.parent} does not exist")
    sections = build_sections(run, base, n_boot=n_boot, session_hands=session_hands, seed=seed, findings=findings,
                              render=True, progress=progress)
    name = (run.study or {}).get("name") or run.path.name
    title = f"xuezhan report: {name}"
    from simulator import __version__

    subtitle = (f"{len(run.variants)} variant(s): {', '.join(run.variants)}; baseline {base}. "
                f"Generated {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')} by xuezhan {__version__}.")
    md_path = out.with_suffix(".md")
    tables = out.with_name(out.stem + "_tables")
    tmp_tables = stage_tables(sections, tables)
    tmp_html = tmp_md = None
    try:
        tmp_html = _atomic_write_text(out, render_html(title, sections, subtitle, run))
        tmp_md = _atomic_write_text(md_path, render_markdown(title, sections, subtitle, out.name, run))
    except BaseException:
        import shutil

        shutil.rmtree(tmp_tables, ignore_errors=True)
        if tmp_html is not None:
            tmp_html.unlink(missing_ok=True)
        raise
    os.replace(tmp_md, md_path)
    os.replace(tmp_html, out)
    _swap_in(tmp_tables, tables)
    return out
