"""``xuezhan report``, ``verify`` and ``compare``: the commands that read a run's logs (library: :mod:`analysis`,
:mod:`simulator.run.verify`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import get_args

import typer

from simulator.choices import Check, CompareBy, CompareFormat, SchemaKind
from simulator.cli import complete as cli_complete
from simulator.cli.common import check_mode, fail

# ---- report, compare (analysis.report, analysis.compare) -------------------------------------------------

def report(
    run_dir: Path = typer.Argument(..., help="Run directory (from simulate or study)."),
    baseline: str | None = typer.Option(None, "--baseline", "-b", autocompletion=cli_complete.variants,
                                        help="Baseline variant (default: the study's "
                                        "baseline, else the first variant)."),
    out: Path | None = typer.Option(None, "--out", "-o", help="HTML file (default: RUN_DIR/report.html); "
                                    "the Markdown summary is written beside it."),
    boot: int = typer.Option(200, "--boot", help="Bootstrap replicates for the per-hand and session risk "
                             "intervals: 0 (no intervals) or at least 100."),
    session_hands: int = typer.Option(40, "--session-hands", help="Hands per session in the session-risk table."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap and session draws."),
    check: Check = typer.Option("full", "--check", help="Verify the logs first: full (size, SHA-256, rows of every "
                              "file) or sizes (fast: sizes only)."),
    partial: bool = typer.Option(False, "--partial", help="Read the chunks finished so far while a run is still "
                                 "writing (otherwise refused)."),
) -> None:
    """Write the HTML report (figures embedded) and report.md: every table, with n and 95% intervals."""
    from analysis.stats import MIN_BOOT

    if boot != 0 and boot < MIN_BOOT:
        raise fail(f"--boot must be 0 (no intervals) or at least {MIN_BOOT}, got {boot}")
    if session_hands < 1:
        raise fail(f"--session-hands must be at least 1, got {session_hands}")
    check_mode(check)
    from analysis.load import open_run
    from analysis.report import write_report

    _outside_tables(run_dir, out)
    run = open_run(run_dir, check=check, partial=partial)
    try:
        path = write_report(run, baseline, out, n_boot=boot, session_hands=session_hands, seed=seed, progress=True)
    except OSError as exc:  # read-only or full directory: the report writes temporaries, nothing half-written
        if exc.errno is None:  # pyarrow reports an undecodable file as an OSError without errno
            raise _unreadable(run_dir, exc) from None
        target = out if out is not None else run_dir / "report.html"  # not the temporary it was writing
        raise fail(f"cannot write the report to {target}: {exc.strerror}") from None
    except Exception as exc:
        # --check sizes trusts unchanged sizes: bits flipped in place surface as a decoding error while reading.
        if check == "sizes" and type(exc).__module__.split(".")[0] in ("polars", "pyarrow"):
            raise _unreadable(run_dir, exc) from None
        raise
    typer.echo(f"report: {path}\nsummary: {path.with_suffix('.md')}")


def _outside_tables(run_dir: Path, out: Path | None) -> None:
    """Refuse a report written into a table directory of the run: every reader of that directory would then
    trip on it (readers read every file of a table directory)."""
    if out is None:
        return
    from simulator.logs.manifest import TABLES

    where = Path(os.path.abspath(out)).parent
    for t in TABLES:
        tdir = Path(os.path.abspath(Path(run_dir) / t))
        if where == tdir or tdir in where.parents:
            raise fail(f"--out {out}: inside the table directory {Path(run_dir) / t}, which holds only Parquet "
                       "parts (readers read every file there); write the report elsewhere")


def _unreadable(run_dir: Path, exc: Exception) -> typer.Exit:
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:120]
    return fail(f"cannot read the logs of {run_dir} ({first}); `xuezhan verify {run_dir}` (full check) names "
                "the damaged files")


# ---- verify (simulator.logs.manifest) ------------------------------------------------------------------------------

def verify(
    run_dir: Path = typer.Argument(..., help="Run directory (from simulate or study), or one "
                                  "_variants/variant=<name>/ in it."),
    check: Check = typer.Option("full", "--check", help="full (size, SHA-256 and row count of every file) or sizes "
                              "(fast: sizes only)."),
    repair: bool = typer.Option(False, "--repair", help="Restore a damaged manifest from its backup copy and move "
                                "unlisted entries of the table directories to _quarantine/ (then --resume "
                                "re-simulates damaged chunks)."),
) -> None:
    """Check a run as every reader does (study.json, manifests and their backups, every file); exit 1 naming each
    problem (and 0 when all is intact)."""
    from simulator.logs.layout import shown
    from simulator.run.verify import repair_run, verify_report

    check_mode(check)
    if repair:
        for line in repair_run(run_dir):  # "repaired  ..." or "cannot repair ..."
            typer.echo(line)
    lines, bad, fix = verify_report(run_dir, check)
    for line in lines:
        typer.echo(line)
    if bad:
        raise fail(f"{bad} problem(s) in {shown(run_dir)}; {fix}", 1)


def compare(
    run_dir: Path = typer.Argument(..., help="Run directory holding both variants."),
    a: str = typer.Argument(..., autocompletion=cli_complete.variants, help="Baseline variant A."),
    b: str = typer.Argument(..., autocompletion=cli_complete.variants,
                            help="Variant B, compared with A on the same hands (differences are B − A)."),
    by: CompareBy | None = typer.Option(None, "--by", help="Group players by 'bot' or 'seat' (default: bot when the "
                                  "seats hold different bots, else seat)."),
    component: list[str] | None = typer.Option(None, "--component", "-c", help="Score column(s) to compare "
                                               "(default score_total), e.g. -c score_huazhu; repeatable."),
    detect: float = typer.Option(0.1, "--detect", help="Difference to detect (base units) for the score "
                                "table's hands needed (hand metrics use their own defaults)."),
    format_: CompareFormat = typer.Option("table", "--format", "-f", help="table (terminal), csv (one table, column "
                                "'table' = score or hand_metric) or json ({scores, metrics}); csv and json carry "
                                "full precision."),
    partial: bool = typer.Option(False, "--partial", help="Read the chunks finished so far while a run is still "
                                 "writing (otherwise refused)."),
) -> None:
    """Paired comparison of B against A on common random numbers: per-group score and hand-level metrics."""
    from analysis.ev import COMPONENTS
    from analysis.family import compare_rows
    from analysis.load import open_run

    if format_ not in COMPARE_FORMATS:
        raise fail(f"--format {format_!r}: expected one of {', '.join(COMPARE_FORMATS)}")
    if by not in (None, "bot", "seat"):
        raise fail(f"--by {by!r}: expected 'bot' or 'seat'")
    components = component or ["score_total"]
    bad = [c for c in components if c not in COMPONENTS]
    if bad:
        raise fail(f"--component {bad[0]!r}: expected one of {', '.join(COMPONENTS)}")
    if not 0 < detect < float("inf"):  # NaN fails too
        raise fail(f"--detect must be a positive finite number, got {detect}")
    run = open_run(run_dir, partial=partial)
    run.check(a), run.check(b)
    if a == b:
        raise fail(f"compare {a} with itself: name two different variants")
    incomplete = [v for v in (a, b) if run.manifests[v].get("complete") is False]
    if incomplete:
        typer.echo(f"warning: {', '.join(incomplete)} did not finish (continue with --resume): compared on the "
                   "hands both have", err=True)
    if by is None:
        by = "bot" if len(set(run.bots(a)) | set(run.bots(b))) > 1 else "seat"
    # the report's Holm family (every paired row of B against A), so p Holm and the verdict match the report
    from analysis.pieces import pieces, progress

    passes = 3 + (by == "seat" and any(c != "score_total" for c in components))  # the family's paired tables
    with progress(f"compare {b} − {a}", passes * len(pieces(run))):
        scores, metrics, n_tests = compare_rows(run, b, a, by, components, detect)
    if format_ == "table":
        _compare_tables(scores, metrics, a, b, by, components, n_tests)
    else:
        typer.echo(_compare_text(scores, metrics, a, b, by, format_, n_tests), nl=False)


COMPARE_FORMATS: tuple[str, ...] = get_args(CompareFormat)


def _compare_tables(scores, metrics, a: str, b: str, by: str, components: list[str], n_tests: int) -> None:
    """The two comparison tables for a human. Piped, the console is as wide as the tables (never truncated);
    in a narrow terminal a long number folds onto the next line instead of losing digits."""
    from rich.console import Console

    from analysis.compare import footnote, rich_table

    console = Console()
    if not console.is_terminal:
        console = Console(width=1_000)
    label = ["bot", "bot_baseline"] if by == "bot" else ["seat"]
    if len(components) > 1:
        label.append("component")
    what = components[0] if len(components) == 1 else "score"
    for table in (rich_table(scores, f"{b} − {a}: {what} per hand (base units), paired on hand_id + seat", label),
                  rich_table(metrics, f"{b} − {a}: hand-level metrics, paired on hand_id", ["metric"])):
        for column in table.columns:
            column.overflow = "fold"
        console.print(table)
    console.print(footnote(n_tests=n_tests), soft_wrap=console.is_terminal)


def _compare_text(scores, metrics, a: str, b: str, by: str, format_: str, n_tests: int) -> str:
    """The comparison as CSV (both tables in one, told apart by a ``table`` column, each row led by its stable
    ``id`` and display ``label``) or JSON (:func:`analysis.family.compare_document`); full precision."""
    import json

    import polars as pl

    from analysis.family import compare_document, with_ids, with_verdict_codes

    if format_ == "csv":
        both = pl.concat([with_verdict_codes(with_ids(df)).select(pl.lit(name).alias("table"), pl.all())
                          for name, df in (("score", scores), ("hand_metric", metrics))],
                         how="diagonal_relaxed")
        return both.write_csv()
    doc = compare_document(scores, metrics, a, b, by, n_tests)
    return json.dumps(doc, ensure_ascii=False, indent=1) + "\n"


def schema_command(
    kind: SchemaKind = typer.Argument("rules", help="Which files: rules (configs/*.yaml), study "
                                      "(configs/studies/*.yaml), design (configs/designs/*.yaml), or compare (the "
                                      "output of `xuezhan compare --format json`)."),
) -> None:
    """Print the JSON Schema of rule, study or design files, for an editor's YAML validation and completion
    (e.g. `xuezhan rules schema > rules.schema.json`, then `# yaml-language-server: $schema=rules.schema.json`),
    or of `xuezhan compare --format json`'s document, to validate what a script reads."""
    import json

    if kind == "compare":
        from analysis.compare_schema import compare_schema

        schema = compare_schema()
    else:
        from simulator.cli.catalog import json_schema

        schema = json_schema(kind)
    typer.echo(json.dumps(schema, indent=1, ensure_ascii=False))
