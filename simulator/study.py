"""Studies: several rule variants simulated on common random numbers, then compared in one report.

A study file (YAML, validated strictly) names a baseline and variants; every variant is simulated with the same
seed and the same hand ids, so hand ``k`` sees the same wall and the same bot random streams in every variant
and differences between variants are paired, hand by hand. Each variant goes to ``DIR/variant=<name>/`` (see
:mod:`simulator.runner`), the study itself is recorded in ``DIR/study.json``, and the report is written by
``analysis.report.write_report`` when that module is installed.

Rule overrides are applied in this order: the variant's rule file, the study's ``seats``, the variant's ``set``
(so a variant may change the seating, as the strategies study does).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from simulator.errors import UserError
from simulator.rules import RuleSet, apply_overrides, explain, load_raw, resolve_config_path, validate
from simulator.runner import RunError, RunSpec, RunSummary, Variant, atomic_write, run_variants

STUDY_DIR = Path(__file__).resolve().parent.parent / "configs" / "studies"
STUDY_FILE = "study.json"


class StudyError(UserError):
    """A study file that cannot be read or validated; one line naming the file and the key."""


Overrides = list[str] | dict[str, Any]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class RulesRef(_Strict):
    """A rule set: a config name or path plus optional overrides (``--set`` strings or a mapping)."""

    name: str | None = None
    rules: str
    overrides: Overrides | None = Field(default=None, alias="set")


class VariantRef(RulesRef):
    name: str  # type: ignore[assignment]  # required for variants, optional for the baseline


class StudyFile(_Strict):
    """The schema of ``configs/studies/*.yaml``."""

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")]  # the default output directory name
    description: str = ""
    baseline: RulesRef
    variants: Annotated[list[VariantRef], Field(min_length=1)]
    seats: list[Any] | None = None
    hands: Annotated[int, Field(gt=0)]
    seed: Annotated[int, Field(ge=0)] = 0
    duplicate: bool = False
    chunk_size: Annotated[int, Field(gt=0)] | None = None

    @field_validator("baseline", mode="before")
    @classmethod
    def _baseline_str(cls, v: Any) -> Any:
        return {"rules": v} if isinstance(v, str) else v


def resolve_study_path(ref: str | Path) -> Path:
    """A study reference (a path, or a name in ``configs/studies/``) to an existing file."""
    path = Path(ref)
    for candidate in (path, STUDY_DIR / path, STUDY_DIR / f"{ref}.yaml"):
        if candidate.is_file():
            return candidate
    raise StudyError(f"study {str(ref)!r} not found (looked for a file or configs/studies/{path.stem}.yaml)")


def load_study(ref: str | Path) -> tuple[StudyFile, Path]:
    """Read and validate a study file; returns the model and the file's path."""
    path = resolve_study_path(ref)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise StudyError(f"{path}: malformed YAML: {getattr(exc, 'problem', None) or exc}") from None
    if not isinstance(data, dict):
        raise StudyError(f"{path}: a study must be a YAML mapping")
    try:
        return StudyFile.model_validate(data), path
    except ValidationError as exc:
        raise StudyError(explain(exc, path)) from None


def _config_path(ref: str, study_path: Path) -> Path:
    """A rule set reference of a study: a path (relative to the study file first), else a name in configs/.

    Bare names are never looked up beside the study file, where ``haidilao`` would find the study itself.
    """
    if "/" in ref or Path(ref).suffix in (".yaml", ".yml"):
        beside = study_path.parent / ref
        if beside.is_file():
            return beside
    return resolve_config_path(ref)


def _variant(ref: RulesRef, study: StudyFile, study_path: Path) -> Variant:
    """Load one rule variant of a study (rules file, then the study's seats, then the variant's overrides)."""
    config = _config_path(ref.rules, study_path)
    data = load_raw(config)
    if study.seats is not None:
        data = apply_overrides(data, {"seats": study.seats})
    data = apply_overrides(data, ref.overrides)
    name = ref.name or Path(ref.rules).stem
    rules: RuleSet = validate(data, f"{study_path} ({name})")
    source = {"rules": ref.rules, "config": str(config), "set": ref.overrides, "study": study.name}
    return Variant(name=name, rules=rules, source=source)


def study_variants(study: StudyFile, study_path: Path) -> list[Variant]:
    """The baseline first, then the variants, as runnable :class:`Variant` objects."""
    return [_variant(ref, study, study_path) for ref in (study.baseline, *study.variants)]


def study_record(study: StudyFile, variants: list[Variant], hands: int) -> dict[str, Any]:
    """The content of ``study.json``: what was compared, on how many hands, with which seed."""
    return {
        "name": study.name,
        "description": study.description,
        "baseline": variants[0].name,
        "variants": [{"name": v.name, "rules": v.source["rules"], "set": v.source["set"],
                      "digest": v.rules.digest()} for v in variants],
        "seats": study.seats,
        "hands": hands,
        "seed": study.seed,
        "duplicate": study.duplicate,
    }


def _check_same_study(out_dir: Path, name: str) -> None:
    path = out_dir / STUDY_FILE
    if not path.is_file():
        return
    try:
        old = json.loads(path.read_text(encoding="utf-8")).get("name")
    except (OSError, ValueError, AttributeError):
        raise RunError(f"{path}: unreadable; refusing to write a study there") from None
    if old != name:
        raise RunError(f"{out_dir} holds study {old!r}, not {name!r}: choose another --out")


def run_study(ref: str | Path, *, out_dir: Path | None = None, jobs: int | None = None, hands: int | None = None,
              resume: bool = False, backend: str = "loky", scheduler: str | None = None, report: bool = True,
              progress: bool = True) -> tuple[list[RunSummary], Path | None]:
    """Run a study file: simulate every variant, write ``study.json``, then the report (if available).

    Returns the per-variant summaries and the report path (None when skipped or unavailable).
    """
    study, path = load_study(ref)
    variants = study_variants(study, path)
    out_dir = Path(out_dir) if out_dir is not None else Path("runs") / study.name
    n = study.hands if hands is None else hands
    spec = RunSpec(hands=n, seed=study.seed, jobs=jobs, chunk_size=study.chunk_size, resume=resume,
                   backend=backend, scheduler=scheduler, duplicate=study.duplicate, progress=progress)
    _check_same_study(out_dir, study.name)
    summaries = run_variants(out_dir, variants, spec)
    atomic_write(out_dir / STUDY_FILE,
                 (json.dumps(study_record(study, variants, n), indent=1, ensure_ascii=False) + "\n").encode())
    return summaries, (write_study_report(out_dir, variants[0].name) if report else None)


def write_study_report(run_dir: Path, baseline: str) -> Path | None:
    """Call ``analysis.report.write_report`` when that module exists; None when it does not."""
    if importlib.util.find_spec("analysis.report") is None:
        return None
    from analysis.report import write_report

    return write_report(run_dir, baseline, None)
