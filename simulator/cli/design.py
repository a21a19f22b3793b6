"""``xuezhan design``: rule values that meet a designer's targets (library: :mod:`simulator.run.design`)."""

from __future__ import annotations

from pathlib import Path

import typer

from simulator.cli.common import fail


def design(
    design_file: str = typer.Argument(..., help="Design YAML: a path or a name in configs/designs/."),
    out: Path = typer.Option(Path("designs"), "--out", "-o", help="Directory of NAME.yaml, the report NAME.md, "
                             "NAME.json and the search NAME.db."),
    budget: int | None = typer.Option(None, "--budget", help="Trials (default: the file's budget)."),
    seed: int | None = typer.Option(None, "--seed", help="Seed of the search walls and the sampler (fresh walls: "
                                    "seed + 1; default: the file's)."),
    walls: int | None = typer.Option(None, "--walls", help="Search walls per trial (default: the file's)."),
    fresh_walls: int | None = typer.Option(None, "--fresh-walls", help="Fresh walls re-measuring the chosen rule set "
                                           "(default: the file's)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Search the design's rule keys for values meeting its targets on common walls (optuna, the tune extra),
    re-measure the best candidates on fresh walls and write DIR/NAME.yaml (extends the baseline, only the changed
    keys) with a report. A target is met only when its 95% interval lies inside it. Rerun to resume; exit status 1
    when no candidate meets every target (docs/design.md)."""
    from simulator.run.design import design as run_design
    from simulator.run.design_file import load_design
    from simulator.run.tune import require_optuna, rich_progress

    load_design(design_file)  # a bad file is one line, before any progress bar or output directory
    require_optuna()
    bar, update = rich_progress(quiet)
    try:
        with bar:
            res = run_design(design_file, out, budget=budget, seed=seed, walls=walls, fresh_walls=fresh_walls,
                             progress=update)
    except KeyboardInterrupt:
        raise fail("interrupted: finished trials are kept; rerun the same command to continue", 130) from None
    doc = res.document
    s = doc["search"]
    typer.echo(f"{s['trials']} trials on {s['walls']:,} walls (seed {s['seed']}), {s['feasible']} meeting every "
               f"target on the search walls; {res.trials_run} run now, CPU {res.cpu_seconds:.1f} s")
    part = doc["chosen"] if res.met else doc["closest"]
    for t in part["targets"]:
        lo, hi = t["ci95"]
        typer.echo(f"  {t['target']} ({t['population']}): {t['estimate']:+.4f} [{lo:+.4f}, {hi:+.4f}] on "
                   f"{t['walls']:,} fresh walls, n = {t['n']:,}: {'met' if t['met'] else 'NOT met'}")
    if res.met:
        changed = ", ".join(f"{k} = {v}" for k, v in doc["chosen"]["changed"].items()) or "no change"
        typer.echo(f"wrote {res.rules} ({changed}); report: {res.report}")
        return
    failed = "; ".join(f"{t['target']} ({t['population']}) by {t['misses_by']:g}" for t in part["failed"])
    params = ", ".join(f"{k} = {v}" for k, v in part["params"].items())
    typer.echo(f"no candidate met every target; closest: {params}, failing {failed}; report: {res.report}", err=True)
    raise typer.Exit(1)
