"""The runner's progress display: one rich bar per variant on stderr (hands done / total, hands/s, ETA), or
nothing under ``--quiet``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from simulator.run.open import OpenRun
from simulator.run.plan import RunSpec


class _Quiet:
    def advance(self, name: str, hands: int) -> None:
        pass


class _RichProgress:
    """One bar per variant: hands done / total, hands/s and ETA."""

    def __init__(self, runs: Sequence[OpenRun]) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            ProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.text import Text

        class HandsPerSecond(ProgressColumn):
            def render(self, task: Any) -> Text:
                speed = task.finished_speed or task.speed
                return Text("– hands/s" if speed is None else f"{speed:,.0f} hands/s")

        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 HandsPerSecond(), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                                 console=Console(stderr=True), transient=False)
        self.tasks = {r.plan.variant.name: self.progress.add_task(r.plan.variant.name, total=r.manifest["hands"],
                                                                  completed=r.manifest["hands_done"])
                      for r in runs}

    def advance(self, name: str, hands: int) -> None:
        self.progress.advance(self.tasks[name], hands)


@contextmanager
def progress_bars(runs: Sequence[OpenRun], spec: RunSpec) -> Iterator[Any]:
    if not spec.progress:
        yield _Quiet()
        return
    bars = _RichProgress(runs)
    with bars.progress:
        yield bars
