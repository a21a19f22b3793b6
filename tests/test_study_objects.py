"""A study given as a Python object (a dict with a study file's keys, or the ``StudyFile`` model) runs exactly
as the same study written to a file, and a bad one is refused with a one-line error naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import xuezhan
from simulator.run.study import StudyError

STUDY = {
    "name": "objects",
    "baseline": "chengdu",
    "variants": [{"name": "cap3", "rules": "chengdu", "set": {"scoring.cap": 3}}],
    "seats": ["greedy", "value", "greedy", "greedy"],
    "hands": 16,
    "seed": 4,
    "chunk_size": 8,
}


def parts(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*.parquet"))}


def test_a_dict_a_model_and_a_file_give_the_same_run(tmp_path: Path):
    path = tmp_path / "objects.yaml"
    path.write_text(yaml.safe_dump(STUDY))
    runs = {}
    for kind, study in (("file", path), ("dict", STUDY), ("model", xuezhan.StudyFile.model_validate(STUDY))):
        result = xuezhan.run_study(study, out_dir=tmp_path / kind, jobs=1, report=False, progress=False,
                                   diagnose=False)
        runs[kind] = parts(result.out_dir)
        assert (result.out_dir / "study.json").is_file()
    assert runs["file"] and runs["file"] == runs["dict"] == runs["model"]
    run = xuezhan.open_run(tmp_path / "dict")
    assert run.variants == ("chengdu", "cap3") and run.baseline == "chengdu"


def test_a_bad_study_object_is_one_line_naming_the_key():
    with pytest.raises(StudyError, match=r"^<study objects>: hands") as exc:
        xuezhan.load_study({**STUDY, "hands": 0})
    assert "\n" not in str(exc.value)
    with pytest.raises(StudyError, match="no_such_key"):
        xuezhan.load_study({**STUDY, "no_such_key": 1})


def test_a_run_shows_its_variants_hands_digest_and_seats_in_a_notebook(tmp_path: Path):
    result = xuezhan.run_study(STUDY, out_dir=tmp_path / "r", jobs=1, report=False, progress=False, diagnose=False)
    run = xuezhan.open_run(result.out_dir)
    html = run._repr_html_()
    assert html.startswith("<p><b>xuezhan study objects</b>") and html.count("<tr>") == 1 + len(run.variants)
    for v in run.variants:
        assert f"<td>{run.digest(v)[:12]}</td>" in html
    assert "<td>chengdu (baseline)</td><td>16</td><td>4</td>" in html
    assert "greedy, value, greedy, greedy" in html
