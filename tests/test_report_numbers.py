"""Numbers that read right (issue 52, item 2): an estimate and its interval are printed at the precision of their
SE with trailing zeros kept, in positional notation (never ``3e-05``), with U+2212 for minus; checked on the
formatter and on the Markdown reports of every shipped study (small committed runs: tests/data/analysis_golden)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from analysis.fmt import MINUS, UNADJUSTED, fmt, fmt_interval, fmt_se

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "data" / "analysis_golden"
E_NOTATION = re.compile(r"(?<![\w.])\d+(?:\.\d+)?[eE][+\-−]?\d+(?![\w.])")  # 3e-05, not a digest's 58e12
HYPHEN_MINUS = re.compile(r"(?:^|[\s\[(,;:])-\d")  # a number written with the hyphen-minus


def test_the_issues_examples_read_right():
    assert fmt_interval(16.0, 14.98, 17.02, 0.52) == "+16.00 [14.98, 17.02]"  # %g printed "+16 [14.98, 17.02]"
    assert fmt_interval(-3e-05, -0.00189, 0.00183, 0.00095) == f"{MINUS}0.00003 [{MINUS}0.00189, 0.00183]"
    assert fmt_interval(0.00183, 0.00059, 0.0031, 0.00063) == "+0.00183 [0.00059, 0.00310]"
    assert fmt_interval(0.002, 0.001, 0.003, 0.0005, scale=100) == "+0.200 [0.100, 0.300]"  # a share in pp
    assert fmt_se(-0.0001, 0.003, signed=True) == f"{MINUS}0.0001" and fmt_se(0.0, 0.1, signed=True) == "0.00"
    assert fmt(-3e-05) == f"{MINUS}0.00003" and fmt(1.5e-07) == "0.00000015" and fmt(-12345) == f"{MINUS}12,345"
    assert fmt(None) == "—" and fmt(float("nan")) == "—" and fmt(16.0) == "16"


def _cells(md: str) -> list[str]:
    """Every table cell and summary bullet of a Markdown report (the prose of Methods left out)."""
    out = []
    for line in md.splitlines():
        if line.startswith("|") and not set(line) <= set("|-: "):
            out += [c.strip() for c in line.strip("|").split("|")]
        elif line.startswith(("- ", "* ")):
            out.append(line)
    return out


@pytest.mark.slow  # one report per shipped study (240 hands an arm), without bootstrap
@pytest.mark.parametrize("study", sorted(p.name for p in GOLDEN.iterdir()) if GOLDEN.is_dir() else [])
def test_a_shipped_studys_report_reads_right(study: str, tmp_path: Path):
    from analysis.report import write_report

    path = write_report(GOLDEN / study, out=tmp_path / "report.html", n_boot=0)
    cells = _cells(path.with_suffix(".md").read_text(encoding="utf-8"))
    assert len(cells) > 20
    assert not [c for c in cells if E_NOTATION.search(c)]
    assert not [c for c in cells if HYPHEN_MINUS.search(c)]
    # an interval beside a Holm verdict says it is unadjusted (item 3): "+0.227 [0.047, 0.407] inconclusive" is
    # then no contradiction
    md = path.with_suffix(".md").read_text(encoding="utf-8")
    captions = re.findall(r"^\*\*(.*?)\*\*$", md, re.M)
    beside = [c for c in captions if "interval" in c and ("verdict" in c or "Holm" in c)]
    assert beside and all(UNADJUSTED in c for c in beside), beside
    # the HTML a reader (and a screen reader) can use (item 9): one self-contained file, headers scoped, wide
    # tables in scrolling containers, Chinese marked as such and a font stack that has it
    page = path.read_text(encoding="utf-8")
    assert len(re.findall(r"<th[\s>]", page)) == page.count('<th scope="col">') > 20
    assert page.count("<table>") == page.count('<div class="scroll"><table>')
    assert '<span lang="zh">' in page and '"Noto Sans CJK SC"' in page
    assert not re.findall(r"""(?:src|href)=['"](?!data:|#)""", page)  # nothing to load from elsewhere
    assert not re.findall(r"<p class='m'>\s*[•-] ", page) and "<ul><li>" in page  # bullets are a list


def test_the_paired_sections_describe_their_intervals_as_methods_does(tmp_path: Path):
    """Item 3: each paired section's account of its intervals is the Methods' (Student on differing − 1 degrees of
    freedom for 2 to 29 differing units, gamma for one — not a "conservative gamma interval" for all few), says the
    intervals are unadjusted beside Holm verdicts, and the rows' intervals are made that way."""
    from analysis import family
    from analysis.load import open_run
    from analysis.rare import INTERVAL_RULES, RARE_UNITS, few_interval
    from analysis.report import write_report

    md = write_report(GOLDEN / "caps", out=tmp_path / "report.html", n_boot=0).with_suffix(".md").read_text(
        encoding="utf-8")
    sections = {s.split("\n", 1)[0]: s for s in md.split("\n## ")[1:]}
    methods = " ".join(sections["Methods and definitions"].replace("  \n", " ").split())
    paired = [" ".join(s.replace("  \n", " ").split()) for t, s in sections.items() if t.startswith("Paired: ")]
    assert paired and INTERVAL_RULES in methods and f"With 2 to {RARE_UNITS - 1}" in INTERVAL_RULES
    assert all(INTERVAL_RULES in p and "unadjusted" in p for p in paired)
    assert "conservative" not in md
    run = open_run(GOLDEN / "caps")
    rows = family.paired_family(run, run.variants[1], run.baseline)
    few = [r for df in rows.values() for r in df.iter_rows(named=True) if 2 <= r["n_differ"] < RARE_UNITS]
    assert few and all(r["interval"] == "few differing" for r in few)
    for r in few:  # the Student interval on n_differ − 1 degrees of freedom, as the words say
        assert (r["ci_lo"], r["ci_hi"]) == pytest.approx(few_interval(r["diff"], r["se_paired"], r["n_differ"])[:2])
