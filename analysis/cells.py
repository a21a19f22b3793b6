"""A study's populations × arms, read from ``study.json``: which variant of the run is which arm in which line-up.

A study with ``populations`` (docs/studies.md, "Populations") runs every arm in every population on the same
walls; each cell ``<arm>.<population>`` is a variant of the run, and ``study.json`` records its ``arm`` and
``population``. An arm is compared with the baseline arm *of its own population* (:func:`baseline_of`,
:func:`comparisons`), and the populations with each other (:mod:`analysis.populations`). A run without
populations is one unnamed population: every function here then says what the plain run says.
"""

from __future__ import annotations

from typing import Any

from analysis.load import Run


def populations(run: Run) -> dict[str, list[Any]]:
    """The study's populations (name → four seats, in study order); empty without populations."""
    return dict((run.study or {}).get("populations") or {})


def cell_map(run: Run) -> dict[str, tuple[str, str]]:
    """Variant → ``(arm, population)`` for every cell of a study with populations (empty otherwise)."""
    if not populations(run):
        return {}
    out = {}
    for v in (run.study or {}).get("variants") or []:
        if isinstance(v, dict) and v.get("name") in run.variants and v.get("population") is not None:
            out[str(v["name"])] = (str(v["arm"]), str(v["population"]))
    return out


def cell(run: Run, arm: str, population: str) -> str | None:
    """The variant that plays ``arm`` in ``population``, None when the run has none."""
    return next((v for v, ap in cell_map(run).items() if ap == (arm, population)), None)


def arms(run: Run) -> list[str]:
    """The study's arms in order (the baseline's first): the variants of a run without populations."""
    cells = cell_map(run)
    if not cells:
        return list(run.variants)
    return list(dict.fromkeys(cells[v][0] for v in run.variants if v in cells))


def baseline_of(run: Run, variant: str, baseline: str) -> str:
    """The variant ``variant`` is compared with: the baseline arm in its population (``baseline`` itself in a
    run without populations, or for a variant outside them)."""
    cells = cell_map(run)
    if variant not in cells or baseline not in cells:
        return baseline
    return cell(run, cells[baseline][0], cells[variant][1]) or baseline


def comparisons(run: Run, baseline: str) -> list[tuple[str, str]]:
    """The paired comparisons ``(A, B)``, each shown as B − A: every variant against its baseline (in its
    population), then the study's ``contrasts`` (per population)."""
    pairs = [(baseline_of(run, v, baseline), v) for v in run.variants]
    pairs = [(a, b) for a, b in pairs if a != b]
    bases = {a for a, _ in pairs} | {baseline}
    return pairs + [c for c in run.contrasts if c not in pairs and not bases & set(c)]


def seat_words(seats: list[Any]) -> list[str]:
    """A seating for people: ``expert ×2 (temperature 0.5)``-style labels, repeated seats counted once."""
    labels = []
    for seat in seats:
        if isinstance(seat, dict):
            extra = ", ".join(f"{k} {v}" for k, v in seat.items() if k != "bot")
            labels.append(str(seat.get("bot", "greedy")) + (f" ({extra})" if extra else ""))
        else:
            labels.append(str(seat))
    out: list[str] = []
    for label in labels:
        if out and out[-1].split(" ×")[0] == label:
            k = int(out[-1].rsplit("×", 1)[1]) if " ×" in out[-1] else 1
            out[-1] = f"{label} ×{k + 1}"
        else:
            out.append(label)
    return out
