"""The project owns its rule specification: docs/spec.md. Every citation "docs/spec.md §N" (or §N.M, an item of a
section, or a range §N–§M) in the code, tests, docs, configs and notebooks names a section or item that exists,
and nothing cites a rule book outside the repository."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import reference_scorer

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "docs" / "spec.md"
CITATION = re.compile(r"docs/spec\.md §(\d+b?)(?:\.(\d+))?(?:\s*[–-]\s*§?(\d+b?))?")
SUFFIXES = (".py", ".md", ".yaml", ".toml", ".ipynb", ".json", ".txt", ".pyi")


def _files() -> list[Path]:
    names = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / n for n in names.split() if n.endswith(SUFFIXES) and (ROOT / n).is_file()]


def _resolves(section: str, item: str | None) -> bool:
    text = SPEC.read_text(encoding="utf-8")
    head = re.search(rf"^## §{section} ", text, re.M)
    if head is None:
        return False
    if item is None:
        return True
    body = text[head.end():]
    body = body[:body.find("\n## ")] if "\n## " in body else body
    return re.search(rf"^{item}\. ", body, re.M) is not None


def citations() -> list[tuple[str, str, str | None, str | None]]:
    return [(f.relative_to(ROOT).as_posix(), *m.group(1, 2, 3)) for f in _files()
            for m in CITATION.finditer(f.read_text(encoding="utf-8", errors="replace"))]


def test_there_are_citations_to_check():
    assert len(citations()) > 40


def test_every_citation_names_a_section_or_item_of_the_spec():
    bad = [(f, sec, item, last) for f, sec, item, last in citations()
           if not _resolves(sec, item) or (last is not None and not _resolves(last, None))]
    assert bad == []


@pytest.mark.parametrize(("section", "item", "ok"), [("3", None, True), ("2", "10", True), ("5b", None, True),
                                                     ("9", None, False), ("2", "13", False), ("4", "1", False)])
def test_the_check_tells_a_dangling_citation(section, item, ok):
    assert _resolves(section, item) is ok


def test_nothing_cites_a_rule_book_outside_the_repository():
    allowed = {"tests/test_analysis_compare.py", "tests/test_spec_citations.py"}  # they check it is absent
    cited = [f.relative_to(ROOT).as_posix() for f in _files() if "RULES.md" in f.read_text(encoding="utf-8",
                                                                                            errors="replace")]
    assert set(cited) <= allowed


def test_the_reference_scorer_reads_its_label_and_tie_orders_from_the_spec():
    """tests/reference_scorer.py takes both orders from docs/spec.md §3's text; they agree with the code's."""
    from simulator.rules.vocab import HAND_TYPES, LABEL_ORDER

    assert reference_scorer.LABELS == LABEL_ORDER and reference_scorer.TABLE_ORDER == HAND_TYPES
