"""``xuezhan simulate``, ``study`` and ``tune``: the commands that run simulations (library:
:mod:`simulator.run.runner`, :mod:`simulator.run.study`, :mod:`simulator.run.tune`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from simulator.choices import Backend
from simulator.cli import complete as cli_complete
from simulator.cli.common import INTERRUPTED, fail, set_bot_timeout

# ---- simulate, study (simulator.run.runner, simulator.run.study) ---------------------------------------------------

def _print_summaries(summaries, stale: bool = True) -> None:
    """One line per variant, then the rate. Counts are hands actually played: under ``stop_when_broke`` a
    session's hand ids after its stop are never played, so hand ids would overstate the work and the rate.
    ``stale``: also warn of seated tuned files tuned on another expert (a study reports them as findings)."""
    for s in summaries:
        for line in s.notes + ([st.text() for st in s.stale] if stale else []):
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


def simulate(
    config: str = typer.Argument(..., autocompletion=cli_complete.rule_sets,
                                 help="Rule set: a name in configs/ (chengdu, cap3, ...) or a YAML path."),
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
    from simulator.run.runner import RunSpec, Variant
    from simulator.run.runner import simulate as run

    set_bot_timeout(bot_timeout)
    variant = Variant.load(config, set_, name)
    spec = RunSpec(hands=hands, seed=seed, jobs=jobs, chunk_size=chunk_size, resume=resume, backend=backend,
                   scheduler=scheduler, duplicate=duplicate, progress=not quiet)
    try:
        summary = run(variant, out if out is not None else Path("runs") / Path(config).stem, spec)
    except KeyboardInterrupt:
        raise fail(INTERRUPTED, 130) from None
    _print_summaries([summary])


def study(
    study_file: str = typer.Argument(..., autocompletion=cli_complete.studies,
                                     help="Study YAML: a path or a name in configs/studies/."),
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
    populations: str | None = typer.Option(None, "--populations", help="Line-ups to play, comma-separated names "
                                           "from the study's populations or the default set (strong, casual, "
                                           "mixed, greedy), or 'default'."),
    population: list[str] | None = typer.Option(None, "--population", help="NAME=SEATS: add or replace one "
                                                "line-up, e.g. 'pros=[expert, expert, value, value]' (repeatable)."),
) -> None:
    """Simulate every variant of a study on common random numbers, check that each variant's changes acted,
    then write the comparison report (study files: docs/studies.md)."""
    from simulator.run.study import population_choice
    from xuezhan.studies import run_study

    set_bot_timeout(bot_timeout)
    try:
        result = run_study(study_file, out_dir=out, jobs=jobs, hands=hands, seed=seed, overrides=set_ or None,
                           resume=resume, backend=backend, scheduler=scheduler, report=not no_report,
                           progress=not quiet, populations=population_choice(study_file, populations, population))
    except KeyboardInterrupt:
        raise fail(INTERRUPTED, 130) from None
    _print_summaries(result.summaries, stale=False)  # in result.findings
    baseline = result.summaries[0].name
    for variant, (k, n) in result.differing.items():
        typer.echo(f"{variant}: play differs from {result.baselines.get(variant, baseline)} on {k:,} of {n:,} hands "
                   f"({k / max(n, 1):.1%})")
    for finding in result.findings:
        typer.echo(f"warning: {finding.text()}", err=True)
    sys.stderr.flush()
    if result.report is not None:
        typer.echo(f"report: {result.report}")



# ---- tune (simulator.run.tune) --------------------------------------------------------------------------------------

def tune(
    config: str = typer.Argument(..., autocompletion=cli_complete.rule_sets, help="Rule set: a name in configs/ or a "
                                "YAML path."),
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
    from simulator.run.tune import TuneSpec, require_optuna, rich_progress
    from simulator.run.tune import tune as run_tune

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
