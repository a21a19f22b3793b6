"""The ``xuezhan`` command line (typer): thin — it parses, calls library functions and prints.

Every expected failure (bad tiles, bad rule files, bad paths, ...) is raised as a ``simulator.errors.UserError``
subclass by the library and printed here as one line
``error: ...`` with exit status 2, never as a traceback.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import typer

from simulator.choices import Backend, Lang
from simulator.errors import UserError

app = typer.Typer(no_args_is_help=True, pretty_exceptions_enable=False, rich_markup_mode=None,
                  help="Monte Carlo rules statistics for Chengdu 血战到底 mahjong.")
# rich_markup_mode=None: click's plain help, which lists an option's choices (<loky|dask>) and shows a flag as
# a flag; shell completion: `xuezhan --install-completion` (typer's, for bash, zsh, fish, PowerShell)


def _version(value: bool) -> None:
    if value:
        from simulator import __version__

        typer.echo(f"xuezhan {__version__}")
        raise typer.Exit()


_DEBUG = {"on": False}


@app.callback()
def _options(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                          help="Print the version and exit."),
             debug: bool = typer.Option(False, "--debug", help="On a Python bot's error, print its own traceback "
                                        "after the one-line error.")) -> None:
    """Monte Carlo rules statistics for Chengdu 血战到底 mahjong."""
    _DEBUG["on"] = debug


def _bot_timeout(seconds: float | None) -> None:
    """--bot-timeout: the per-decision limit of Python bots, passed to the workers through their environment."""
    if seconds is None:
        return
    if not 0 <= seconds < float("inf"):
        raise fail(f"--bot-timeout must be a finite number of seconds >= 0 (0: no limit), got {seconds}")
    from simulator.agents import TIMEOUT_ENV

    os.environ[TIMEOUT_ENV] = repr(seconds)


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``error: message`` on stderr and return the Exit to raise."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


# ---- commands: each lives in its own section, calling into its module --------------------------------------


# ---- score (simulator.scoring) -------------------------------------------------------------------------------

@app.command()
def score(
    hand: str | None = typer.Argument(None, help="Concealed tiles incl. the winning tile, e.g. 123m456m789m11p22p."),
    win_tile: str | None = typer.Option(None, "--win-tile", help="The winning tile, e.g. 2p."),
    meld: list[str] | None = typer.Option(
        None, "--meld", help="Meld set down: pung:5p, kong:7s or ckong:3m (暗杠); repeatable or comma-separated "
        "as in the logs' melds column (pung:5p,kong:7s)."),
    self_draw: bool = typer.Option(False, "--self-draw", help="Won by self-draw (自摸)."),
    rob_kong: bool = typer.Option(False, "--rob-kong", help="Won by robbing an added kong (抢杠胡)."),
    after_kong: bool = typer.Option(False, "--after-kong", help="Self-draw on a kong replacement (杠上花)."),
    kong_discard: bool = typer.Option(False, "--kong-discard", help="Discard made right after its maker's kong."),
    last_tile: bool = typer.Option(False, "--last-tile", help="Last tile of the wall (海底)."),
    first_draw: bool = typer.Option(False, "--first-draw", help="First draw: 天胡 with --dealer, else 地胡."),
    dealer: bool = typer.Option(False, "--dealer", help="The winner is the dealer (with --first-draw)."),
    context: str = typer.Option(
        "", "--context", help="Context as in the logs' context column, e.g. after_kong,last_tile (same as the "
        "flags above)."),
    void: str | None = typer.Option(None, "--void", help="Declared void suit m, p or s (default: none declared)."),
    rules_ref: str = typer.Option("chengdu", "--rules", help="Rule set: a name in configs/ or a YAML path."),
    set_: list[str] | None = typer.Option(None, "--set", help="Rule override KEY=VALUE, repeatable."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of the breakdown."),
    vectors: Path | None = typer.Option(None, "--vectors", help="Run a vectors file (scoring.yaml format)."),
) -> None:
    """Score one winning hand (fan, capped fan, points per payer), or check a file of scoring vectors."""
    import json

    from simulator.rules import load_rules
    from simulator.score import breakdown, check_vectors, score_hand

    if vectors is not None:
        _text_file(vectors, "--vectors")
        results = check_vectors(vectors)
        for line in results:
            typer.echo(json.dumps(line, ensure_ascii=False))
        failed = sum(not r["ok"] for r in results)
        typer.echo(f"{len(results) - failed} passed, {failed} failed")
        raise typer.Exit(1 if failed else 0)
    if hand is None or win_tile is None:
        raise fail("score needs HAND and --win-tile (or --vectors FILE)")
    if self_draw and rob_kong:
        raise fail("--self-draw and --rob-kong exclude each other")
    win = "self_draw" if self_draw else "rob_kong" if rob_kong else "discard"
    flags = {"after_kong": after_kong, "after_own_kong_discard": kong_discard, "last_tile": last_tile,
             "first_draw": first_draw, "dealer": dealer}
    ctx = {k for k, v in flags.items() if v} | {c.strip() for c in context.split(",") if c.strip()}
    melds = [m.strip() for spec in meld or [] for m in spec.split(",") if m.strip()]
    rules = load_rules(rules_ref, set_ or None)
    result = score_hand(rules, hand, melds, win_tile, win, ctx, void=void)
    if as_json:
        typer.echo(json.dumps(result.to_dict(), ensure_ascii=False))
    else:
        typer.echo("\n".join(breakdown(rules, result, win)))


def _text_file(path: Path, option: str) -> None:
    """Refuse, in one line, a file that cannot be read as UTF-8 text (a binary file given by mistake)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise fail(f"{option} {path}: cannot read ({exc.strerror})") from None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail(f"{option} {path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None


# ---- replay (simulator.replay) --------------------------------------------------------------------------------

@app.command()
def replay(
    config: str | None = typer.Argument(None, help="Rule set: a name in configs/ (chengdu, cap3, ...) or a YAML "
                                        "path (not with --run)."),
    seed: int | None = typer.Option(None, "--seed", help="Master seed, as given to simulate (not with --run)."),
    hand: int = typer.Option(0, "--hand", help="Hand id to replay (default 0)."),
    set_: list[str] | None = typer.Option(None, "--set", help="Rule override KEY=VALUE, repeatable."),
    duplicate: bool = typer.Option(False, "--duplicate", help="The seating of duplicate play (hand_id = "
                                   "4·deal_id + rotation), as simulate --duplicate."),
    run: Path | None = typer.Option(None, "--run", help="Replay a hand of this run directory exactly as it was "
                                    "played (rules, seed, seating from its manifest), verified against its logs."),
    variant: str | None = typer.Option(None, "--variant", help="Variant of --run (default: the study's baseline, "
                                       "or the only variant)."),
    lang: Lang = typer.Option("zh", "--lang", help="zh (Chinese tile names) or en (tile notation, English)."),
) -> None:
    """Print one hand as a player would follow it: deal, 换三张, 定缺, every turn, wins with fans, settlement."""
    from simulator.replay import LANGS, record_logged_hand, show
    from simulator.replay import replay as play

    if lang not in LANGS:
        raise fail(f"--lang {lang!r}: expected one of {', '.join(LANGS)}")
    if run is not None:
        given = [name for name, v in (("CONFIG", config), ("--seed", seed), ("--set", set_),
                                      ("--duplicate", duplicate or None)) if v is not None]
        if given:
            raise fail(f"--run replays the run's own rules, seed and seating: drop {', '.join(given)}")
        show(record_logged_hand(run, variant, hand), lang)
        return
    if config is None or seed is None:
        raise fail("replay needs CONFIG and --seed (or --run DIR)")
    if variant is not None:
        raise fail("--variant needs --run")
    play(config, seed, hand, set_ or None, duplicate=duplicate, lang=lang)


# ---- simulate, study (simulator.runner, simulator.study) ---------------------------------------------------

_INTERRUPTED = "interrupted: finished chunks are kept; rerun with --resume to continue"


def _print_summaries(summaries) -> None:
    """One line per variant, then the rate. Counts are hands actually played: under ``stop_when_broke`` a
    session's hand ids after its stop are never played, so hand ids would overstate the work and the rate."""
    for s in summaries:
        for line in s.notes:
            typer.echo(f"warning: {s.name}: {line}", err=True)
        for line in s.redone:
            typer.echo(f"warning: {s.name}: damaged chunk re-simulated: {line}", err=True)
        played = s.rows["hands"]
        where = f"{played:,} hands" if s.sessions is None else f"{played:,} hands in {s.sessions:,} sessions"
        if played != s.hands:
            where += f" (of {s.hands:,} hand ids: sessions stopped early)"
        tables = f"{s.path.parent.parent}/{{hands,players,wins}}/{s.path.name}"  # the control dir's run (layout)
        typer.echo(f"{s.name}: {where} in {tables} ({s.played_run:,} played now; {s.rows['wins']:,} wins)")
    ran, seconds = sum(s.played_run for s in summaries), summaries[0].seconds
    if ran:
        typer.echo(f"simulated {ran:,} hands in {seconds:.1f} s ({ran / seconds:,.0f} hands/s)")


@app.command()
def simulate(
    config: str = typer.Argument(..., help="Rule set: a name in configs/ (chengdu, cap3, ...) or a YAML path."),
    hands: int = typer.Option(..., "--hands", "-n", help="Number of hands (hand ids 0..N-1)."),
    seed: int = typer.Option(0, "--seed", help="Master seed: hand k's wall and bot streams depend on (seed, k)."),
    jobs: int | None = typer.Option(None, "--jobs", "-j", help="Parallel workers (default: all CPUs)."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Output directory (default: runs/<config>)."),
    set_: list[str] | None = typer.Option(None, "--set", help="Rule override KEY=VALUE, repeatable."),
    resume: bool = typer.Option(False, "--resume", help="Continue a run of the same rule set and seed."),
    backend: Backend = typer.Option("loky", "--backend", help="loky (local processes) or dask (the dask extra)."),
    scheduler: str | None = typer.Option(None, "--scheduler", help="dask scheduler address (default: local)."),
    chunk_size: int | None = typer.Option(None, "--chunk-size", help="Hands per file (default: 5000)."),
    name: str | None = typer.Option(None, "--name", help="Variant name (default: the rule set's name)."),
    duplicate: bool = typer.Option(False, "--duplicate", help="Duplicate seating: every wall played 4 times with "
                                   "the seats rotated (hand_id = 4·deal_id + rotation; --hands a multiple of 4)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    bot_timeout: float | None = typer.Option(None, "--bot-timeout", help="Seconds a Python bot may take per "
                                             "decision (default 60; 0: no limit)."),
) -> None:
    """Simulate N hands (at most 10^10) of one rule set into DIR/<table>/variant=<name>/ (Parquet logs)."""
    from simulator.runner import RunSpec, Variant
    from simulator.runner import simulate as run

    _bot_timeout(bot_timeout)
    variant = Variant.load(config, set_, name)
    spec = RunSpec(hands=hands, seed=seed, jobs=jobs, chunk_size=chunk_size, resume=resume, backend=backend,
                   scheduler=scheduler, duplicate=duplicate, progress=not quiet)
    try:
        summary = run(variant, out if out is not None else Path("runs") / Path(config).stem, spec)
    except KeyboardInterrupt:
        raise fail(_INTERRUPTED, 130) from None
    _print_summaries([summary])


@app.command()
def study(
    study_file: str = typer.Argument(..., help="Study YAML: a path or a name in configs/studies/."),
    out: Path | None = typer.Option(None, "--out", "-o", help="Output directory (default: runs/<study name>)."),
    jobs: int | None = typer.Option(None, "--jobs", "-j", help="Parallel workers (default: all CPUs)."),
    hands: int | None = typer.Option(None, "--hands", "-n", help="Override the study's number of hands."),
    seed: int | None = typer.Option(None, "--seed", help="Override the study's master seed."),
    set_: list[str] | None = typer.Option(None, "--set", help="Rule override KEY=VALUE applied to every arm, "
                                          "repeatable (refused for a key the arms differ in)."),
    resume: bool = typer.Option(False, "--resume", help="Continue an interrupted study."),
    backend: Backend = typer.Option("loky", "--backend", help="loky (local processes) or dask (the dask extra)."),
    scheduler: str | None = typer.Option(None, "--scheduler", help="dask scheduler address (default: local)."),
    no_report: bool = typer.Option(False, "--no-report", help="Simulate only; skip the report."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    bot_timeout: float | None = typer.Option(None, "--bot-timeout", help="Seconds a Python bot may take per "
                                             "decision (default 60; 0: no limit)."),
) -> None:
    """Simulate every variant of a study on common random numbers, check that each variant's changes acted,
    then write the comparison report (study files: docs/studies.md)."""
    from simulator.study import run_study

    _bot_timeout(bot_timeout)
    try:
        result = run_study(study_file, out_dir=out, jobs=jobs, hands=hands, seed=seed, overrides=set_ or None,
                           resume=resume, backend=backend, scheduler=scheduler, report=not no_report,
                           progress=not quiet)
    except KeyboardInterrupt:
        raise fail(_INTERRUPTED, 130) from None
    _print_summaries(result.summaries)
    baseline = result.summaries[0].name
    for variant, (k, n) in result.differing.items():
        typer.echo(f"{variant}: play differs from {baseline} on {k:,} of {n:,} hands ({k / max(n, 1):.1%})")
    for finding in result.findings:
        typer.echo(f"warning: {finding.text()}", err=True)
    sys.stderr.flush()
    if result.report is not None:
        typer.echo(f"report: {result.report}")
    elif not no_report:
        typer.echo("report skipped: analysis.report is not available", err=True)


# ---- tune (simulator.tune) --------------------------------------------------------------------------------------

@app.command()
def tune(
    config: str = typer.Argument(..., help="Rule set: a name in configs/ or a YAML path."),
    set_: list[str] | None = typer.Option(None, "--set", help="Rule override KEY=VALUE, repeatable."),
    field: str | None = typer.Option(None, "--field", help="Seats 1-3: one seat spec or a YAML list of three, "
                                     "e.g. greedy or '[expert, greedy, greedy]' (default: three default experts)."),
    budget: int = typer.Option(30, "--budget", help="Trials (the first is the defaults)."),
    walls: int = typer.Option(800, "--walls", help="Walls per full trial, each played 4 times (duplicate)."),
    blocks: int = typer.Option(4, "--blocks", help="Wall blocks; trials trailing after a block are pruned."),
    fresh_walls: int = typer.Option(2000, "--fresh-walls", help="Fresh walls (x4) re-measuring the winner."),
    seed: int = typer.Option(0, "--seed", help="Seed of the search walls and of the sampler."),
    fresh_seed: int | None = typer.Option(None, "--fresh-seed", help="Seed of the fresh walls (default seed+1)."),
    out: Path = typer.Option(Path("tuned"), "--out", "-o", help="Directory of NAME.yaml and the search NAME.db."),
    name: str | None = typer.Option(None, "--name", help="File name stem (default: the rule set's name)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Tune the expert's defence, ambition and tempo for one rule set (optuna, the tune extra) against a fixed
    field on common walls; re-measure the winner against the default expert on fresh walls and write
    DIR/NAME.yaml, for seats as {bot: expert, params_from: DIR/NAME.yaml}. Rerun to resume (docs/studies.md)."""
    from simulator.rules import TUNABLE, load_rules
    from simulator.tune import TuneSpec, require_optuna, rich_progress
    from simulator.tune import tune as run_tune

    rules = load_rules(config, set_ or None)
    spec = TuneSpec(budget=budget, walls=walls, blocks=blocks, fresh_walls=fresh_walls, seed=seed,
                    fresh_seed=fresh_seed)
    require_optuna()  # the missing extra is one line, before any progress bar
    bar, update = rich_progress(quiet)
    try:
        with bar:
            res = run_tune(rules, set_, field, spec, out, name, update)
    except KeyboardInterrupt:
        raise fail("interrupted: finished trials are kept; rerun the same command to continue", 130) from None
    doc, fr = res.document, res.document["fresh"]
    searched = ", ".join(f"{k} {doc['searched'][k]:g}" for k in TUNABLE)
    typer.echo(f"searched best: {searched} (trial {doc['search']['best_trial']} of {doc['search']['trials']}, "
               f"{doc['search']['pruned']} pruned; its score on the search walls, {res.best_search_score:+.4f}, is "
               "optimistic and not the gain)")
    typer.echo(f"gain on fresh walls vs the default expert: {fr['gain']:+.4f} ± {fr['se']:.4f} (SE) base units per "
               f"player-hand, 95% CI [{fr['ci95'][0]:+.4f}, {fr['ci95'][1]:+.4f}], n = {fr['walls']:,} walls × 4 "
               f"(seed {fr['seed']})")
    typer.echo(doc["verdict"])
    typer.echo(f"wrote {res.path} ({', '.join(f'{k} {v:g}' for k, v in doc['params'].items())}); "
               f"{res.trials_run} trials run now, CPU {res.cpu_seconds:.1f} s")


# ---- report, compare (analysis.report, analysis.compare) -------------------------------------------------

@app.command()
def report(
    run_dir: Path = typer.Argument(..., help="Run directory (from simulate or study)."),
    baseline: str | None = typer.Option(None, "--baseline", "-b", help="Baseline variant (default: the study's "
                                        "baseline, else the first variant)."),
    out: Path | None = typer.Option(None, "--out", "-o", help="HTML file (default: RUN_DIR/report.html); "
                                    "the Markdown summary is written beside it."),
    boot: int = typer.Option(200, "--boot", help="Bootstrap replicates for the per-hand and session risk "
                             "intervals: 0 (no intervals) or at least 100."),
    session_hands: int = typer.Option(40, "--session-hands", help="Hands per session in the session-risk table."),
    seed: int = typer.Option(0, "--seed", help="Seed of the bootstrap and session draws."),
    check: str = typer.Option("full", "--check", help="Verify the logs first: full (size, SHA-256, rows of every "
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
    _check_mode(check)
    from analysis.load import open_run
    from analysis.report import write_report

    _outside_tables(run_dir, out)
    run = open_run(run_dir, check=check, partial=partial)
    try:
        path = write_report(run, baseline, out, n_boot=boot, session_hands=session_hands, seed=seed)
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
    from simulator.manifest import TABLES

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


def _check_mode(check: str) -> None:
    from simulator.manifest import CHECKS

    if check not in CHECKS:
        raise fail(f"--check {check!r}: expected one of {', '.join(CHECKS)}")


# ---- verify (simulator.manifest) ------------------------------------------------------------------------------

@app.command()
def verify(
    run_dir: Path = typer.Argument(..., help="Run directory (from simulate or study), or one "
                                  "_variants/variant=<name>/ in it."),
    check: str = typer.Option("full", "--check", help="full (size, SHA-256 and row count of every file) or sizes "
                              "(fast: sizes only)."),
    repair: bool = typer.Option(False, "--repair", help="Restore a damaged manifest from its backup copy and move "
                                "unlisted entries of the table directories to _quarantine/ (then --resume "
                                "re-simulates damaged chunks)."),
) -> None:
    """Check a run as every reader does (study.json, manifests and their backups, every file); exit 1 naming each
    problem (and 0 when all is intact)."""
    from simulator.verify import repair_run, verify_run

    _check_mode(check)
    if repair:
        for line in repair_run(run_dir):
            typer.echo(f"repaired  {line}")
    lines, bad = verify_run(run_dir, check)
    for line in lines:
        typer.echo(line)
    if bad:
        raise fail(f"{bad} problem(s) in {run_dir}; `xuezhan verify --repair` restores a damaged manifest from its "
                   "backup and moves stray entries aside, `xuezhan simulate/study ... --resume` re-simulates "
                   "damaged chunks", 1)


@app.command()
def compare(
    run_dir: Path = typer.Argument(..., help="Run directory holding both variants."),
    a: str = typer.Argument(..., help="Baseline variant A."),
    b: str = typer.Argument(..., help="Variant B, compared with A on the same hands (differences are B − A)."),
    by: str | None = typer.Option(None, "--by", help="Group players by 'bot' or 'seat' (default: bot when the "
                                  "seats hold different bots, else seat)."),
    component: list[str] | None = typer.Option(None, "--component", "-c", help="Score column(s) to compare "
                                               "(default score_total), e.g. -c score_huazhu; repeatable."),
    detect: float = typer.Option(0.1, "--detect", help="Difference to detect (base units) for the score "
                                "table's hands needed (hand metrics use their own defaults)."),
    format_: str = typer.Option("table", "--format", "-f", help="table (terminal), csv (one table, column "
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
    scores, metrics, n_tests = compare_rows(run, b, a, by, components, detect)
    if format_ == "table":
        _compare_tables(scores, metrics, a, b, by, components, n_tests)
    else:
        typer.echo(_compare_text(scores, metrics, a, b, by, format_, n_tests), nl=False)


COMPARE_FORMATS = ("table", "csv", "json")


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

    from analysis.family import compare_document, with_ids

    if format_ == "csv":
        both = pl.concat([with_ids(scores).select(pl.lit("score").alias("table"), pl.all()),
                          with_ids(metrics).select(pl.lit("hand_metric").alias("table"), pl.all())],
                         how="diagonal_relaxed")
        return both.write_csv()
    doc = compare_document(scores, metrics, a, b, by, n_tests)
    return json.dumps(doc, ensure_ascii=False, indent=1) + "\n"


def _terminate(signum: int, frame: object) -> None:
    """SIGTERM as Ctrl-C: the run stops its workers, records finished chunks and exits (a default SIGTERM
    would leave the worker processes behind)."""
    raise KeyboardInterrupt


def main() -> None:
    """Console-script entry point: user errors (and usage errors) become one line and exit status 2."""
    # typer may vendor click: take the exception classes from where typer's own come from.
    click = sys.modules[typer.BadParameter.__module__]
    signal.signal(signal.SIGTERM, _terminate)
    # loky's resource tracker (a process of its own, started with this interpreter's -W options) warns in several
    # lines about semaphores "leaked" by a killed run; it cleans them up anyway, so the warning only alarms.
    sys.warnoptions.append("ignore:resource_tracker:UserWarning")
    try:
        code = app(standalone_mode=False)
    except UserError as exc:
        typer.echo(f"error: {exc}", err=True)
        if _DEBUG["on"] and getattr(exc, "bot_traceback", ""):
            typer.echo(exc.bot_traceback.rstrip(), err=True)
        sys.exit(2)
    except click.UsageError as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # bare `xuezhan`: the help text is the answer
            exc.show()
            sys.exit(exc.exit_code)
        where = f" (see {exc.ctx.command_path} --help)" if exc.ctx is not None else ""
        typer.echo(f"error: {exc.format_message()}{where}", err=True)
        sys.exit(2)
    except click.ClickException as exc:
        typer.echo(f"error: {exc.format_message()}", err=True)
        sys.exit(exc.exit_code)
    except OverflowError as exc:  # a number that passed parsing but does not fit a machine integer
        typer.echo(f"error: a number is too large ({exc})", err=True)
        sys.exit(2)
    except RecursionError:  # YAML or --set values nested thousands deep
        typer.echo("error: the input is nested too deeply (thousands of nested lists or mappings in a rule file, "
                   "a study file or --set)", err=True)
        sys.exit(2)
    except OSError as exc:  # a path the file system refuses (name too long, ...) outside the checked ones
        typer.echo(f"error: {exc.filename or 'a file'}: {exc.strerror or exc}"[:400], err=True)
        sys.exit(2)
    except (KeyboardInterrupt, typer.Abort):
        typer.echo("interrupted: finished chunks are kept; rerun with --resume to continue", err=True)
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)


# ---- list, rules (simulator.catalog) ----------------------------------------------------------------------------

from simulator.catalog import list_command, rules_app  # noqa: E402  (the commands are defined there)

app.command("list")(list_command)
app.add_typer(rules_app, name="rules")


# ---- play (simulator.play) ------------------------------------------------------------------------------------

@app.command()
def play(
    config: str = typer.Argument("chengdu", help="Rule set: a name in configs/ or a YAML path."),
    seed: int = typer.Option(0, "--seed", help="Master seed (the same hands as simulate --seed)."),
    hand: int = typer.Option(0, "--hand", help="Hand id to play."),
    seat: int = typer.Option(0, "--seat", help="Your seat, 0–3 (the other seats keep the rule set's bots)."),
    set_: list[str] | None = typer.Option(None, "--set", help="Rule override KEY=VALUE, repeatable."),
) -> None:
    """Take a seat in the terminal against the bots: answer with a tile (5m), pass, pung, kong, win, a suit at
    定缺, or Enter for the first legal action; then replay the hand to see what everyone did."""
    from simulator.play import Human, final_lines
    from simulator.play import play as play_hand
    from simulator.rules import load_rules

    if not 0 <= seat <= 3:
        raise fail(f"--seat {seat}: expected 0, 1, 2 or 3")
    if hand < 0:
        raise fail(f"--hand {hand}: hand ids are 0 or more")
    raw = play_hand(load_rules(config, set_ or None), seed, hand, seat, Human())
    for line in final_lines(raw):
        typer.echo(line)


if __name__ == "__main__":  # python -m simulator.cli
    main()
