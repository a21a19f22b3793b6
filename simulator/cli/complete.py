"""Shell completion of the names the commands take (``xuezhan --install-completion``): the shipped rule sets and
studies, and the variants of the run directory given earlier on the line. Each function returns the names that
start with what was typed; it only lists files, so completing stays instant."""

from __future__ import annotations

from pathlib import Path

import typer


def _stems(folder: Path, incomplete: str) -> list[str]:
    return sorted(p.stem for p in folder.glob("*.yaml") if p.stem.startswith(incomplete))


def rule_sets(incomplete: str) -> list[str]:
    """The shipped rule sets (configs/*.yaml) starting with ``incomplete``."""
    from simulator.rules.load import CONFIG_DIR

    return _stems(CONFIG_DIR, incomplete)


def studies(incomplete: str) -> list[str]:
    """The shipped studies (configs/studies/*.yaml) starting with ``incomplete``."""
    from simulator.rules.load import CONFIG_DIR

    return _stems(CONFIG_DIR / "studies", incomplete)


def variants(ctx: typer.Context, incomplete: str) -> list[str]:
    """The variants of the run directory named earlier on the command line (``--run`` or RUN_DIR)."""
    from simulator.logs import layout

    run_dir = ctx.params.get("run_dir") or ctx.params.get("run")
    if not run_dir:
        return []
    try:
        names = [layout.name_of(p) for p in layout.control_dirs(run_dir)]
    except OSError:
        return []
    return sorted(n for n in names if n.startswith(incomplete))
