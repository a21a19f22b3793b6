"""A study from end to end: simulated (:func:`simulator.run.study.simulate_study`), checked (``analysis.diagnostics``:
did each variant's rule act, does its play differ from the baseline) and reported (``analysis.report``).

This is where the simulator and the analysis meet; neither package imports the other for it. ``xuezhan study``
and ``xuezhan.run_study`` both run this function.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from analysis.cells import baseline_of
from analysis.diagnostics import diagnose as diagnose_run
from analysis.diagnostics import differing_hands, stale_findings
from analysis.load import open_run
from analysis.pieces import pieces
from analysis.pieces import progress as bar
from analysis.populations import check_headline
from analysis.report import write_report
from simulator.choices import Backend
from simulator.run.study import Overrides, PopulationChoice, StudyRef, StudyResult, load_study, simulate_study


def run_study(ref: StudyRef, *, out_dir: str | Path | None = None, jobs: int | None = None, hands: int | None = None,
              seed: int | None = None, overrides: Overrides | None = None, resume: bool = False,
              backend: Backend = "loky", scheduler: str | None = None, report: bool = True,
              progress: bool = True, diagnose: bool = True,
              populations: PopulationChoice | None = None) -> StudyResult:
    """Run a study (a file, a shipped study's name, a :class:`~simulator.run.study.StudyFile` or a dict with a study
    file's keys, as in docs/studies.md): simulate every variant on common random numbers, check that each
    variant's changes acted (``diagnose``), then write the report (``report``).

    ``hands`` and ``seed`` replace the file's; ``overrides`` (``--set`` strings or a mapping) apply to every arm;
    ``populations`` selects the line-ups by name (``"strong,mixed"``, a list, or ``"default"``) or replaces them
    (a dict name → four seats), as in docs/studies.md, "Populations". Returns the
    :class:`~simulator.run.study.StudyResult` with its report path, findings and differing hands.
    """
    study, where = load_study(ref)
    check_headline(study.headline, where)  # refused before anything is simulated
    result = simulate_study(ref, out_dir=out_dir, jobs=jobs, hands=hands, seed=seed, overrides=overrides,
                            resume=resume, backend=backend, scheduler=scheduler, progress=progress,
                            populations=populations)
    if not (diagnose or report):  # seated tuned files tuned on another expert (simulator.run.tuned), as the run found
        stale = [f for s in result.summaries for f in stale_findings(s.name, s.stale)]
        return dataclasses.replace(result, findings=stale)
    run = open_run(result.out_dir)  # opened (and its files verified) once, for the diagnostics and the report
    baseline = result.summaries[0].name
    bases = {v: baseline_of(run, v, baseline) for v in run.variants}
    # each check reads the run one piece at a time: identical play (every column), then play only
    with bar("study checks", 2 * sum(v != b for v, b in bases.items()) * len(pieces(run)), enabled=progress):
        findings = diagnose_run(run, baseline)  # the stale seats first, read back from the manifests
        differing = {v: differing_hands(run, v, b) for v, b in bases.items() if v != b} if diagnose else {}
    path = write_report(run, baseline, None, findings=findings, progress=progress) if report else None
    if not diagnose:  # the result's findings are then the stale seats only; the report still checked the run
        return dataclasses.replace(result, report=path, findings=[f for f in findings if f.key == "seats"])
    return dataclasses.replace(result, report=path, findings=findings, differing=differing,
                               baselines={v: b for v, b in bases.items() if v != b})
