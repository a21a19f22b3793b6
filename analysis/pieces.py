"""A large run read in pieces: hand-id ranges of whole units, whose additive statistics are summed.

Every table of the analysis is a function of per-unit sums (a unit is a hand, a wall under duplicate seating,
a session: ``Run.cluster``): counts, sums, sums of squares and cross products over units, counts of distinct
units, of differing units. Over disjoint sets of whole units such statistics add up, so a run can be read one
hand-id range at a time (:func:`pieces`, on chunk boundaries shared by every variant: a chunk holds whole
sessions and whole walls) and the pieces' results summed (:func:`summed`): memory then follows the piece, not
the run. :data:`PIECE_HANDS` is the target size of a piece; ``XUEZHAN_PIECE_HANDS`` overrides it (tests use
tiny pieces to check that the sums equal the whole). docs/internals.md says how the size was chosen.

:func:`progress` shows a bar (rich) over the pieces of a long analysis; :func:`collect_pieces` advances it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import polars as pl

from analysis.load import Run

PIECE_HANDS = 250_000
"""Target hands a piece (every variant of the run at once): about 0.1–0.3 GB of working memory for the widest
query (a paired join of two variants' players), whatever the run's size."""


def piece_hands() -> int:
    """:data:`PIECE_HANDS`, or the ``XUEZHAN_PIECE_HANDS`` environment variable when set (a positive integer)."""
    value = os.environ.get("XUEZHAN_PIECE_HANDS", "")
    return int(value) if value.isdigit() and int(value) > 0 else PIECE_HANDS


def boundaries(run: Run, size: int | None = None) -> list[int]:
    """First hand ids of the pieces: chunk starts common to every variant, at least ``size`` hands apart."""
    size = piece_hands() if size is None else size
    starts = None
    for v in run.variants:
        firsts = {int(c["first"]) for c in run.manifests[v]["chunks"]}
        starts = firsts if starts is None else starts & firsts
    out: list[int] = []
    for first in sorted(starts or {0}):
        if not out or first - out[-1] >= size:
            out.append(first)
    return out or [0]


def pieces(run: Run, size: int | None = None) -> list[Run]:
    """The run as views of consecutive hand-id ranges (:meth:`Run.restrict`) of about ``size`` hands (default
    :func:`piece_hands`), the last one open-ended; one piece (the run itself) when it is small."""
    if run.hand_range is not None:
        return [run]  # already a piece
    starts = boundaries(run, size)
    if len(starts) == 1:
        return [run]
    stops = [*starts[1:], 2 ** 62]
    return [run.restrict(0 if i == 0 else a, b) for i, (a, b) in enumerate(zip(starts, stops, strict=True))]


Reduce = Callable[[list[pl.DataFrame]], list[pl.DataFrame]]
"""What :func:`collect_pieces` may apply to a piece's collected frames."""

_LOCK = threading.Lock()
_SHARED: dict[str, object] = {}


@contextmanager
def progress(description: str, total: int, unit: str = "pieces", enabled: bool = True) -> Iterator[None]:
    """A progress bar (rich, on stderr) of ``total`` steps while the block runs; :func:`advance` with the same
    ``unit`` ("pieces": pieces read, "tables": tables computed) moves it, from any thread. Nothing is shown when
    ``enabled`` is false, stderr is not a terminal, or a bar is already shown (the outer one counts)."""
    import sys

    if not enabled or not sys.stderr.isatty() or _SHARED:
        yield
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn(unit),
                   TimeElapsedColumn(), console=Console(stderr=True), transient=True)
    task = bar.add_task(description, total=total)
    with _LOCK:
        _SHARED.update(bar=bar, task=task, unit=unit)
    try:
        with bar:
            yield
    finally:
        with _LOCK:
            _SHARED.clear()


def advance(unit: str = "pieces", steps: int = 1) -> None:
    """Move the current :func:`progress` bar by ``steps`` if it counts ``unit`` (no bar: nothing)."""
    with _LOCK:
        bar, task, counted = _SHARED.get("bar"), _SHARED.get("task"), _SHARED.get("unit")
    if bar is not None and counted == unit:
        bar.advance(task, steps)  # type: ignore[attr-defined]


def collect_pieces(run: Run, build: Callable[[Run], Sequence[pl.LazyFrame]],
                   reduce: Reduce | None = None) -> list[list[pl.DataFrame]]:
    """``build(piece)`` collected (together: shared scans once) on every piece of the run; one list of frames
    per query, in piece order. ``reduce``: applied to each piece's frames as soon as they are collected (e.g.
    rows to their per-unit sums), so that only its results are kept."""
    out: list[list[pl.DataFrame]] = []
    for piece in pieces(run):
        frames = pl.collect_all(list(build(piece)))
        out.append(reduce(frames) if reduce is not None else frames)
        advance()
    return [list(col) for col in zip(*out, strict=True)] if out else []


def summed(frames: Sequence[pl.DataFrame], by: Sequence[str]) -> pl.DataFrame:
    """The pieces' frames of additive statistics added up per group of ``by`` (every other column summed; a
    group missing from a piece counts zero there), groups in order of first appearance."""
    if len(frames) == 1:
        return frames[0]
    frames = [f for f in frames if f.height] or list(frames[:1])
    whole = pl.concat(frames, how="vertical_relaxed")
    rest = [c for c in whole.columns if c not in by]
    if not by:
        return whole.select(pl.col(c).sum() for c in rest)
    return whole.group_by(list(by), maintain_order=True).agg(pl.col(c).sum() for c in rest)


@dataclass(frozen=True)
class Pieces:
    """A frame to read piece by piece: ``build(piece)`` is the lazy frame of one piece of ``run``. The
    estimators of :mod:`analysis.clustered` accept it wherever they accept a lazy frame."""

    run: Run
    build: Callable[[Run], pl.LazyFrame]

    def collect(self, queries: Callable[[pl.LazyFrame], Sequence[pl.LazyFrame]],
                reduce: Reduce | None = None) -> list[list[pl.DataFrame]]:
        """``queries(frame of a piece)`` collected on every piece (``reduce``: see :func:`collect_pieces`): one
        list of frames per query."""
        return collect_pieces(self.run, lambda piece: queries(self.build(piece)), reduce)


def collect_each(frame: pl.LazyFrame | Pieces, queries: Callable[[pl.LazyFrame], Sequence[pl.LazyFrame]],
                 reduce: Reduce | None = None) -> list[list[pl.DataFrame]]:
    """:meth:`Pieces.collect`, or for a plain lazy frame its queries collected once (one piece)."""
    if isinstance(frame, Pieces):
        return frame.collect(queries, reduce)
    frames = pl.collect_all(list(queries(frame)))
    return [[df] for df in (reduce(frames) if reduce is not None else frames)]
