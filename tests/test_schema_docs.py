"""The log columns are declared once, in ``simulator.logs.schema.COLUMNS``: docs/logs.md's column tables list exactly
those names, in file order, with their Arrow types; the engine's columns (``records.to_columns``) and analysis'
polars schemas follow the same declaration."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from simulator.logs import schema
from simulator.rules import FLAGS

DOC = Path(__file__).resolve().parents[1] / "docs" / "logs.md"
HEADINGS = {"hands": "## `hands`", "players": "## `players`", "wins": "## `wins`",
            "sessions": "## Session columns"}


def _rows(heading: str) -> list[list[str]]:
    """The cells of the first Markdown table under ``heading`` (header and separator dropped)."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index(heading):]
    section = section[:section.find("\n## ", 1)]
    lines = [ln for ln in section.splitlines() if ln.startswith("|")]
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in lines[2:]]


def _names(cell: str) -> list[str]:
    """Column names of a cell: `a`, `b` → [a, b]; `pinghu` … `dance` → the pattern flags from one to the other."""
    names = re.findall(r"`(\w+)`", cell)
    if "…" in cell:
        first, last = names
        return list(FLAGS[FLAGS.index(first):FLAGS.index(last) + 1])
    return names


def documented(table: str) -> list[tuple[str, str]]:
    """``(column, type cell)`` of a table in docs/logs.md, in the order documented."""
    return [(name, row[1]) for row in _rows(HEADINGS[table]) for name in _names(row[0])]


@pytest.mark.parametrize("table", list(schema.COLUMNS))
def test_the_docs_list_every_column_of_the_schema_in_order(table: str):
    doc = documented(table)
    assert [n for n, _ in doc] == [schema.PARTITION, *(c.name for c in schema.COLUMNS[table])]
    assert doc[0][1] in ("from the path", "")  # the partition: not in the files
    declared = {c.name: schema.type_name(c.type) for c in schema.COLUMNS[table]}
    hands = {c.name: schema.type_name(c.type) for c in schema.COLUMNS["hands"]}
    for name, typ in doc[1:]:
        # an empty type cell says "as in hands"
        assert typ == declared[name] or (typ == "" and hands.get(name) == declared[name]), (table, name, typ)


def test_the_docs_list_the_session_columns():
    doc = [(t, name, row[2]) for row in _rows(HEADINGS["sessions"]) for t in _names(row[0])
           for name in _names(row[1])]
    expected = [(t, c.name, schema.type_name(c.type)) for t, cols in schema.SESSION_COLUMNS.items() for c in cols]
    assert sorted(doc) == sorted(expected)


def test_a_column_added_to_the_schema_fails_the_docs_check(monkeypatch):
    """The check can fail: a column the docs do not list is caught."""
    extra = schema.Column("new_column", schema.pa.int8(), "not documented")
    monkeypatch.setitem(schema.COLUMNS, "wins", [*schema.COLUMNS["wins"], extra])
    with pytest.raises(AssertionError):
        test_the_docs_list_every_column_of_the_schema_in_order("wins")


def test_engine_columns_take_their_names_and_dtypes_from_the_schema():
    from simulator.hands import play_hands
    from simulator.rules import load_rules

    out = play_hands(load_rules("chengdu"), np.arange(6, dtype=np.int64), 3)
    for table, cols in schema.COLUMNS.items():
        assert list(out[table]) == [c.name for c in cols], table
        for c in cols:
            dtype = schema.numpy_dtype(c.type)
            if dtype is not None:
                assert out[table][c.name].dtype == dtype, (table, c.name)


@pytest.mark.parametrize("table", list(schema.COLUMNS))
def test_the_docs_say_null_exactly_for_the_columns_that_can_be_null(table: str):
    """The null rule of the column table: a column documented as possibly null is one the files write null."""
    cells = {name: row[2] for row in _rows(HEADINGS[table]) for name in _names(row[0])}
    for c in schema.COLUMNS[table]:
        assert ("null" in cells[c.name]) == (c.null != schema.NEVER), (table, c.name)
