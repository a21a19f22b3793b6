"""The numbers of the report, of ``xuezhan compare`` and of a study's checks, as plain data (issue 47).

:func:`tables` computes, on one run, every numeric table the report shows (the functions the report calls, not
its rendered text, whose number formatting is free to change), the compare rows (by seat with every component,
by bot) and the study's checks (findings, play and any-column differences). :func:`flatten` turns them into
JSON-able columns; the golden file ``tests/data/analysis_golden.json`` holds them for small runs of the shipped
studies (committed under ``tests/data/analysis_golden/``), and ``tests/test_analysis_golden.py`` checks them to
1e-9 relative. Regenerate (only when a number is meant to change, say why in the commit)::

    python -m tests.analysis_golden --update           # recompute the golden file from the committed runs
    python -m tests.analysis_golden --simulate         # re-simulate the runs first (the engine changed play)
"""

from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path
from typing import Any

import polars as pl

DATA = Path(__file__).parent / "data"
RUNS = DATA / "analysis_golden"
GOLDEN = DATA / "analysis_golden.json"
HANDS = 240  # per arm; sessions studies: hands = sessions × session.hands, the study's own
CHUNK = 80  # hands a part file: a multiple of 16 (the sessions study's session) and of 4 (duplicate walls)
N_BOOT = 20
SESSION_HANDS = 10
STUDIES = ("adaptation", "caps", "declare", "haidilao", "huazhu", "pass_lock", "quickstart", "sessions", "skill",
           "strategies")


def tables(run_dir: Path) -> dict[str, Any]:
    """Every table of the report, compare and the study's checks on one run, keyed by a stable name."""
    from analysis import diagnostics, economy, ev, family, fans, play, risk, sessions, shape, skill, sweep
    from analysis.load import open_run
    from analysis.report_build import comparisons, header_table

    run = open_run(run_dir)
    base = run.baseline
    out: dict[str, Any] = {
        "hand_types": fans.hand_type_frequencies(run), "flags": fans.flag_frequencies(run),
        "fan_summary": fans.fan_summary(run), "fan_distribution": fans.fan_distribution(run),
        "ev_seat": ev.expected_value(run, "seat"), "ev_position": ev.expected_value(run, "position"),
        "ev_bot": ev.expected_value(run, "bot"),
        "risk": risk.risk_table(run, "bot", n_boot=N_BOOT, seed=1),
        "risk_seat_no_boot": risk.risk_table(run, "seat", n_boot=0),
        "risk_position": risk.risk_table(run, "position", n_boot=N_BOOT, seed=2),
        "session_risk": risk.session_risk_table(run, "bot", hands=SESSION_HANDS, n_boot=N_BOOT, seed=1,
                                                n_sessions=2000, boot_sessions=200),
        "score_distribution": risk.score_distribution(run, "bot"),
        "play": play.play_table(run, comparisons(run, base)),
        "header": header_table(run, base).drop("seats", "rules vs baseline"),
        "shape": shape.game_shape(run), "economy": economy.economy_table(run, "bot"),
        "decline": shape.decline_effect(run, "bot"),
        "skill": skill.skill_table(run, n_boot=N_BOOT, seed=1) if run.duplicate else None,
        # what the logs show, with its counts (the advice is wording, free to change)
        "findings": [[f.variant, f.key, f.problem] for f in diagnostics.diagnose(run, base)],
    }
    metrics = {}
    for a, b in comparisons(run, base):
        fam = family.paired_family(run, b, a)
        for k, df in fam.items():
            out[f"family {a} {b} {k}"] = df
        metrics[b] = fam["metrics"] if a == base else None
        for by, comps in (("seat", ev.COMPONENTS), ("bot", ("score_total", "score_win"))):
            scores, mets, n = family.compare_rows(run, b, a, by, comps)
            out[f"compare {a} {b} {by}"] = scores
            out[f"compare {a} {b} {by} metrics"] = mets
            out[f"compare {a} {b} {by} tests"] = n
        out[f"differing {a} {b}"] = [diagnostics.differing_hands(run, b, a, w) for w in ("play", "any")]
    rule = sweep.sweep_rule(run, base)
    if rule is not None:
        out["dose"] = sweep.dose_table(run, base, rule, {v: m for v, m in metrics.items() if m is not None})
    if run.has_sessions:
        by = "bot" if any(len(set(run.bots(v))) > 1 for v in run.variants) else "seat"
        out["session_results"] = sessions.session_results(run, by)
        out["session_distribution"] = sessions.session_distribution(run, by)
        out["ruin"] = sessions.ruin_table(run, "seat")
        out["house_take"] = sessions.house_take(run)
        for v in sessions.session_variants(run):
            if v != base and run.session(base) is not None and run.session(v)["hands"] == run.session(base)["hands"]:
                out[f"dealer_rule {v}"] = sessions.dealer_rule_effect(run, v, base, "seat")
    return out


def _value(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return repr(x)  # nan, inf: JSON has none
    if isinstance(x, list | tuple):
        return [_value(y) for y in x]
    return x


def flatten(obj: Any) -> Any:
    """A table as ``{"columns": {name: [values]}, "dtypes": {...}}`` (floats at full precision: JSON writes the
    shortest repr that reads back to the same double); other values as they are."""
    if isinstance(obj, pl.DataFrame):
        return {"dtypes": {c: str(t) for c, t in obj.schema.items()},
                "columns": {c: [_value(v) for v in obj[c].to_list()] for c in obj.columns}}
    return _value(obj)


def compute(run_dirs: dict[str, Path]) -> dict[str, Any]:
    return {name: {k: flatten(v) for k, v in tables(path).items()} for name, path in run_dirs.items()}


def simulate() -> None:
    """Re-simulate the committed runs (each shipped study at :data:`HANDS` hands a arm, one worker)."""
    from simulator.run.study import load_study, simulate_study

    for name in STUDIES:
        study, _ = load_study(name)
        out = RUNS / name
        shutil.rmtree(out, ignore_errors=True)
        # several part files a arm (CHUNK hands each: whole sessions, whole walls), so that analyses that read a
        # run in pieces are checked across piece boundaries
        study = study.model_copy(update={"chunk_size": CHUNK, "hands": min(study.hands, HANDS)})
        simulate_study(study, out_dir=out, jobs=1, progress=False)


def main(argv: list[str]) -> None:
    if "--simulate" in argv:
        simulate()
    if "--update" in argv or "--simulate" in argv:
        data = compute({name: RUNS / name for name in STUDIES})
        GOLDEN.write_text(json.dumps(data, ensure_ascii=False, indent=0, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {GOLDEN}")


if __name__ == "__main__":
    main(sys.argv[1:])
