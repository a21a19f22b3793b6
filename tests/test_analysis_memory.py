"""The analysis' memory does not grow with the hands (issue 47): the same stage on two runs of different sizes,
each in a fresh process, peaks within a constant of each other when the run is read in pieces
(:mod:`analysis.pieces`), and grows when the same stage reads the larger run whole.

The runs are small (greedy bots, 1,000-hand part files) and the pieces smaller still (2,000 hands), so the
larger run is read in many more pieces than the smaller one: a stage that held every row would need ~1–2 KB a
hand more (tens of MB over the difference in size), far above the allowance. A second pair of runs (16-hand
sessions, duplicate walls, two populations, one of them with two bots) covers the session tables, the
populations' first screen (dealer edge, interactions) and the skill table.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow,  # two small studies simulated, then stages each in its own process
              pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux's clear_refs")]

SMALL, LARGE = 8_000, 64_000
PIECE = "2000"
ALLOWANCE_MIB = 24.0  # constant extra for the larger run: per-piece results, file metadata, allocator noise

STAGES = {
    "checks": ("from analysis.diagnostics import diagnose, differing_hands\n"
               "diagnose(run, 'base'); differing_hands(run, 'cap3', 'base')"),
    "ev": "from analysis.ev import expected_value; expected_value(run, 'position')",
    "family": "from analysis.family import paired_family; paired_family(run, 'cap3', 'base')",
    "fans": "fans.flag_frequencies(run)",
    "shape": "shape.game_shape(run)",  # ~20 MiB more at 64,000 hands: its own stage, so growth is not summed
    "declines": "shape.decline_effect(run, 'bot')",
    "session_risk": "from analysis import risk; risk.session_risk_table(run, 'bot', n_boot=0)",
}
SESSION_SMALL, SESSION_LARGE = 4_096, 32_768  # hands a cell; four cells
SESSION_PIECE = "2048"  # whole walls of whole sessions (64 hand ids)
SESSION_STAGES = {
    "sessions": ("s = sessions; s.session_results(run, 'seat'); s.session_distribution(run, 'seat'); "
                 "s.ruin_table(run, 'seat'); s.house_take(run); s.dealer_rule_effect(run, 'cap3.mixed', 'base.mixed')"),
    "screen": ("from analysis.report_build import comparisons\n"
               "fams = {(a, b): family.paired_family(run, b, a) for a, b in comparisons(run, run.baseline)}\n"
               "open('/proc/self/clear_refs', 'w').write('5')\n"  # the families are measured above
               "populations.screen(run, run.baseline, fams)"),
    "skill": "skill.skill_table(run, n_boot=0)",
}


@pytest.fixture(scope="module")
def session_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    from simulator.run.study import simulate_study

    arm = {"session.hands": 16, "session.bankroll": 40}
    out = {}
    for hands in (SESSION_SMALL, SESSION_LARGE):
        path = tmp_path_factory.mktemp(f"sess{hands}")
        study = {"name": "memsess", "baseline": {"name": "base", "rules": "chengdu", "set": arm},
                 "variants": [{"name": "cap3", "rules": "cap3", "set": arm}],
                 "populations": {"mixed": ["value", "greedy", "greedy", "greedy"], "greedy": ["greedy"] * 4},
                 "duplicate": True, "hands": hands, "seed": 5, "chunk_size": 1024}
        simulate_study(study, out_dir=path, jobs=1, progress=False)
        out[hands] = path
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    from simulator.run.study import simulate_study

    out = {}
    for hands in (SMALL, LARGE):
        path = tmp_path_factory.mktemp(f"mem{hands}")
        study = {"name": "mem", "baseline": {"name": "base", "rules": "chengdu"},
                 "variants": [{"name": "cap3", "rules": "cap3"}], "seats": ["greedy"] * 4, "hands": hands,
                 "seed": 5, "chunk_size": 1000}
        simulate_study(study, out_dir=path, jobs=1, progress=False)
        out[hands] = path
    return out


def peak_mib(stage: str, run_dir: Path, piece: str, stages: dict[str, str] = STAGES) -> float:
    """Peak resident memory (MiB) of a fresh process while it runs the stage: the high-water mark is reset
    (``/proc/self/clear_refs``) once the modules are imported and the run opened, whose own peak is the same at
    any size and would hide the stage's."""
    src = ("import re\nfrom analysis import diagnostics, ev, family, fans, populations, sessions, shape, skill\n"
           "from analysis.load import open_run\n"
           f"run = open_run({str(run_dir)!r}, check='sizes')\n"
           "open('/proc/self/clear_refs', 'w').write('5')\n"
           f"{stages[stage]}\n"
           "print(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1))\n")
    out = subprocess.run([sys.executable, "-c", src], env={**os.environ, "XUEZHAN_PIECE_HANDS": piece,
                                                           "POLARS_MAX_THREADS": "2"},
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.split()[-1]) / 1024


@pytest.mark.parametrize("stage", STAGES)
def test_peak_memory_does_not_grow_with_the_hands(stage: str, runs: dict[int, Path]):
    small, large = peak_mib(stage, runs[SMALL], PIECE), peak_mib(stage, runs[LARGE], PIECE)
    assert large - small <= ALLOWANCE_MIB, f"{stage}: {small:.0f} MiB at {SMALL:,} hands, {large:.0f} at {LARGE:,}"


@pytest.mark.parametrize("stage", SESSION_STAGES)
def test_sessions_populations_and_skill_do_not_grow_with_the_hands(stage: str, session_runs: dict[int, Path]):
    small, large = (peak_mib(stage, session_runs[n], SESSION_PIECE, SESSION_STAGES)
                    for n in (SESSION_SMALL, SESSION_LARGE))
    assert large - small <= ALLOWANCE_MIB, \
        f"{stage}: {small:.0f} MiB at {SESSION_SMALL:,} hands a cell, {large:.0f} at {SESSION_LARGE:,}"


def test_the_check_sees_a_stage_that_reads_the_run_whole(runs: dict[int, Path]):
    """The mutation the test above guards against: one piece (the whole run) makes the paired family grow."""
    whole = str(10 ** 9)
    small, large = peak_mib("family", runs[SMALL], whole), peak_mib("family", runs[LARGE], whole)
    assert large - small > ALLOWANCE_MIB, f"{small:.0f} MiB at {SMALL:,} hands, {large:.0f} at {LARGE:,}"
