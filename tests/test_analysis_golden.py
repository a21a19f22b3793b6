"""Every number of the report, of ``xuezhan compare`` and of a study's checks, on small runs of every shipped
study, equals the golden file's to 1e-9 relative (issue 47: the analysis reworked for scale computes the same
tables). The runs are committed (``tests/data/analysis_golden/``), so this checks the analysis, not the engine;
``python -m tests.analysis_golden --update`` rewrites the golden file (see :mod:`tests.analysis_golden`)."""

from __future__ import annotations

import json
import math
from typing import Any

import polars as pl
import pytest
from analysis_golden import GOLDEN, RUNS, STUDIES, flatten, tables

REL = 1e-9
ABS = 1e-12  # a difference of two equal sums, computed in another order


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        if not isinstance(a, int | float) or not isinstance(b, int | float):
            return False
        return math.isclose(a, b, rel_tol=REL, abs_tol=ABS)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def mismatches(got: Any, want: Any, where: str = "") -> list[str]:
    """Where two flattened tables differ: a missing column, a dtype, a length, or the first unequal value of a
    column. Columns the golden file does not have (the stable ``id`` of :mod:`analysis.ids`, added after it was
    written) are not numbers of the report: tests/test_ids.py checks them."""
    if isinstance(want, dict) and isinstance(got, dict) and "columns" in want:
        dtypes = {c: t for c, t in got.get("dtypes", {}).items() if c in want["dtypes"]}
        out = [f"{where}: dtypes {dtypes} != {want['dtypes']}"] if dtypes != want["dtypes"] else []
        for col, values in want["columns"].items():
            mine = got.get("columns", {}).get(col)
            if mine is None or len(mine) != len(values):
                out.append(f"{where}.{col}: {None if mine is None else len(mine)} values, want {len(values)}")
                continue
            bad = [i for i, (x, y) in enumerate(zip(mine, values, strict=True)) if not _same(x, y)]
            if bad:
                out.append(f"{where}.{col}[{bad[0]}]: {mine[bad[0]]!r} != {values[bad[0]]!r} ({len(bad)} rows)")
        return out
    return [] if _same(got, want) else [f"{where}: {got!r} != {want!r}"]


@pytest.fixture(scope="module")
def golden() -> dict[str, Any]:
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


# read whole, and (a study of each kind of unit: hands, sessions, duplicate walls, several bots) in pieces of 80
# hands: three a run, so every sum crosses piece boundaries
CASES = [(s, None) for s in STUDIES] + [(s, "80") for s in ("quickstart", "sessions", "skill", "strategies")]


@pytest.mark.parametrize(("study", "piece"), CASES, ids=[f"{s}-{'pieces' if p else 'whole'}" for s, p in CASES])
def test_report_compare_and_checks_equal_the_golden_numbers(study: str, piece: str | None, golden: dict[str, Any],
                                                            monkeypatch: pytest.MonkeyPatch):
    if piece is not None:
        monkeypatch.setenv("XUEZHAN_PIECE_HANDS", piece)
    want = golden[study]
    got = {k: flatten(v) for k, v in tables(RUNS / study).items()}
    assert sorted(got) == sorted(want)
    problems = [p for k in want for p in mismatches(got[k], want[k], k)]
    assert not problems, "\n".join(problems[:20])


def test_the_check_sees_a_changed_number(golden: dict[str, Any]):
    """The comparison is not vacuous: one estimate moved by 1e-8 relative is caught, 1e-11 is not."""
    table = golden["quickstart"]["ev_seat"]
    values = table["columns"]["mean"]
    i = next(j for j, v in enumerate(values) if isinstance(v, float) and v != 0)
    for scale, caught in ((1e-8, True), (1e-11, False)):
        moved = json.loads(json.dumps(table))
        moved["columns"]["mean"][i] = values[i] * (1 + scale)
        assert bool(mismatches(moved, table, "ev_seat")) is caught


def test_declines_are_the_same_numbers_on_every_call():
    """Same logs, same bytes: the declines' difference SEs are sums over units in a fixed order (they were summed
    in a hash group-by's order, and their last bits changed from one call to the next)."""
    from analysis import shape
    from analysis.load import open_run

    run = open_run(RUNS / "caps")
    first = shape.decline_effect(run, "bot")
    assert first.filter(pl.col("declined").is_null()).height > 0  # the difference rows are there
    assert all(shape.decline_effect(run, "bot").equals(first) for _ in range(3))
