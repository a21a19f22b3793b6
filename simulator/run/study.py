"""Studies: several rule variants simulated on common random numbers, then compared in one report.

A study file (YAML, validated strictly) names a baseline and variants; every variant is simulated with the same
seed and the same hand ids, so hand ``k`` sees the same wall and the same bot random streams in every variant
and differences between variants are paired, hand by hand. Each variant goes to ``DIR/<table>/variant=<name>/``
(see :mod:`simulator.logs.layout`) and the study itself is recorded in ``DIR/study.json``; the checks and the report
are composed on top, by :func:`xuezhan.studies.run_study` (the ``xuezhan study`` command's).

Rule overrides are applied in this order: the variant's rule file, the study's ``seats`` (or the population's),
the variant's ``set`` (so a variant may change the seating, as the strategies study does), then the command
line's ``--set``, which applies to every arm and is refused for a key on which the arms differ (it would erase
the comparison).

``populations`` (a mapping name → four seats, or ``default`` for :data:`DEFAULT_POPULATIONS`) crosses every
arm with every line-up: each cell ``<arm>.<population>`` is a variant of the run, all on the same hand ids and
so the same walls, and ``study.json`` records each cell's arm and population (the analysis compares an arm with
the baseline within its population, and the populations with each other).
The file format is documented for users in ``docs/studies.md``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from simulator.errors import UserError, did_you_mean
from simulator.files import atomic_write
from simulator.logs import layout, rundir
from simulator.logs import manifest as mf
from simulator.rules import (
    CONFIG_DIR,
    RuleSet,
    apply_overrides,
    explain,
    flat_keys,
    load_raw,
    parse_override,
    read_yaml_mapping,
    resolve_config_path,
    validate,
)
from simulator.run.runner import RunError, RunSpec, RunSummary, Variant, run_lock, run_variants

STUDY_DIR = CONFIG_DIR / "studies"  # the shipped studies (package data, or the checkout's configs/studies)
STUDY_FILE = rundir.STUDY_FILE


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


POPULATION_RE = r"^[A-Za-z][A-Za-z0-9_]*$"

DEFAULT_POPULATIONS: dict[str, list[Any]] = {
    "strong": ["expert", "expert", "expert", "expert"],
    "casual": [{"bot": "expert", "temperature": 0.5}, {"bot": "expert", "temperature": 0.5}, "greedy", "value"],
    "mixed": ["expert", "greedy", "value", "defensive"],
    "greedy": ["greedy", "greedy", "greedy", "greedy"],
}
"""The line-ups ``populations: default`` names (docs/studies.md, "Populations", says what each stands for):
players who adapt to the rules well (four experts), casual tables (two experts that err, at temperature 0.5, with
a greedy and a value bot), a mixed table of the four kinds (duplicate seating puts each kind in every seat), and
a non-adapting reference (four greedy bots, which play the same whatever the payments)."""


class StudyFile(_Strict):
    """The schema of ``configs/studies/*.yaml``."""

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")]  # the default output directory name
    description: str = ""
    baseline: RulesRef
    variants: list[VariantRef] = Field(default_factory=list)  # empty: a baseline-only study
    seats: list[Any] | None = None
    hands: Annotated[int, Field(gt=0)]
    seed: Annotated[int, Field(ge=0)] = 0
    duplicate: bool = False
    chunk_size: Annotated[int, Field(gt=0)] | None = None
    contrasts: list[tuple[str, str]] = Field(default_factory=list)  # [A, B]: B − A paired, besides the baseline
    # line-ups crossed with every arm on the same walls: name -> four seats, or "default" (DEFAULT_POPULATIONS)
    populations: Literal["default"] | dict[Annotated[str, Field(pattern=POPULATION_RE)], list[Any]] | None = None
    headline: list[str] | None = None  # hand metrics whose verdicts are compared across populations

    @field_validator("populations")
    @classmethod
    def _population_seats(cls, pops: Any, info: ValidationInfo) -> Any:
        if pops is None or pops == "default":
            return pops
        if not pops:
            raise ValueError("name at least one population (or leave the key out)")
        if info.data.get("seats") is not None:
            raise ValueError("give seats or populations, not both (each population is a seating)")
        return pops

    @field_validator("baseline", mode="before", json_schema_input_type=str | RulesRef)  # a name, or a mapping
    @classmethod
    def _baseline_str(cls, v: Any) -> Any:
        return {"rules": v} if isinstance(v, str) else v

    @field_validator("contrasts")
    @classmethod
    def _known_contrasts(cls, pairs: list[tuple[str, str]], info: ValidationInfo) -> list[tuple[str, str]]:
        # every variant is compared with the baseline anyway; a contrast adds a pair of two other arms
        base, variants = info.data.get("baseline"), info.data.get("variants")
        if base is None or variants is None:  # reported on its own key
            return pairs
        names = [base.name or Path(base.rules).stem, *(v.name for v in variants)]
        for a, b in pairs:
            unknown = [x for x in (a, b) if x not in names]
            if unknown:
                raise ValueError(f"[{a}, {b}]: no arm named {unknown[0]!r} (arms: {', '.join(names)})")
            if a == b or names[0] in (a, b):
                raise ValueError(f"[{a}, {b}]: needs two different arms other than the baseline ({names[0]}), "
                                 "which every variant is compared with already")
        if len(set(pairs)) < len(pairs):
            raise ValueError("the same pair is listed twice")
        return pairs


def resolve_named_file(ref: str | Path, folder: Path, what: str, error: type[UserError]) -> Path:
    """A reference to a file: a path, or a name in ``folder`` (a shipped study or design); ``error`` if none."""
    path = Path(ref)
    for candidate in (path, folder / path, folder / f"{ref}.yaml"):
        if candidate.is_file():
            return candidate
    hint = did_you_mean(path.stem, sorted(p.stem for p in folder.glob("*.yaml")))
    raise error(f"{what} {str(ref)!r} not found (looked for a file or configs/{folder.name}/{path.stem}.yaml){hint}")


def resolve_study_path(ref: str | Path) -> Path:
    """A study reference (a path, or a name in ``configs/studies/``) to an existing file."""
    return resolve_named_file(ref, STUDY_DIR, "study", StudyError)


StudyRef = str | Path | StudyFile | Mapping[str, Any]  # a file, a shipped study's name, or the study itself


def load_study(ref: StudyRef) -> tuple[StudyFile, Path]:
    """Read and validate a study: a file, a name in ``configs/studies/``, a :class:`StudyFile` or a mapping with
    the file's keys. Returns the model and the path that relative rule-set paths are resolved against (for a
    study given as an object: ``<study NAME>`` in the current directory, which is also how messages name it)."""
    if isinstance(ref, StudyFile):
        return ref, Path(f"<study {ref.name}>")
    if isinstance(ref, Mapping):
        where = Path(f"<study {ref.get('name', '?')}>")
        data: Any = dict(ref)
    else:
        where = resolve_study_path(ref)
        data = read_yaml_mapping(where, "a study")
    try:
        return StudyFile.model_validate(data), where
    except ValidationError as exc:
        raise StudyError(explain(exc, where, StudyFile)) from None


def config_path(ref: str, study_path: Path) -> Path:
    """A rule set reference of a study: a path (relative to the study file first), else a name in configs/.

    Bare names are never looked up beside the study file, where ``haidilao`` would find the study itself.
    """
    if "/" in ref or Path(ref).suffix in (".yaml", ".yml"):
        beside = study_path.parent / ref
        if beside.is_file():
            return beside
    return resolve_config_path(ref)


def _variant(ref: RulesRef, study: StudyFile, study_path: Path, population: str | None = None,
             seats: list[Any] | None = None) -> Variant:
    """Load one rule variant of a study (rules file, then the study's or the population's seats, then the
    variant's overrides); in a population, the cell ``<arm>.<population>``."""
    config = config_path(ref.rules, study_path)
    data = load_raw(config)
    seats = study.seats if population is None else seats
    if seats is not None:
        data = apply_overrides(data, {"seats": seats})
    arm = ref.name or Path(ref.rules).stem
    if population is not None and ref.overrides and any(k == "seats" or k.startswith("seats.")
                                                        for k in _override_keys(ref.overrides)):
        raise StudyError(f"{study_path}: arm {arm!r} sets seats, which its populations set (name the seatings "
                         "as populations instead)")
    data = apply_overrides(data, ref.overrides)
    name = arm if population is None else f"{arm}.{population}"
    rules: RuleSet = validate(data, f"{study_path} ({name})")
    source = {"rules": ref.rules, "config": str(config), "set": ref.overrides, "study": study.name}
    if population is not None:
        source |= {"arm": arm, "population": population}
    return Variant(name=name, rules=rules, source=source)


def study_populations(study: StudyFile) -> dict[str, list[Any]] | None:
    """The study's populations (``default`` resolved to :data:`DEFAULT_POPULATIONS`), None when it has none."""
    if study.populations is None:
        return None
    return dict(DEFAULT_POPULATIONS) if study.populations == "default" else dict(study.populations)


def study_variants(study: StudyFile, study_path: Path) -> list[Variant]:
    """The baseline first, then the variants, as runnable :class:`Variant` objects; with populations, every arm
    in every population (population by population, the first population's baseline first)."""
    arms = (study.baseline, *study.variants)
    pops = study_populations(study)
    if pops is None:
        return [_variant(ref, study, study_path) for ref in arms]
    return [_variant(ref, study, study_path, p, seats) for p, seats in pops.items() for ref in arms]


PopulationChoice = str | Sequence[str] | Mapping[str, Any]


def with_populations(study: StudyFile, choice: PopulationChoice | None, where: Path) -> StudyFile:
    """The study with other populations: ``"default"`` (:data:`DEFAULT_POPULATIONS`), names (a list, or one
    comma-separated string) picked from the study's populations or the default set, or a mapping name → four
    seats replacing them (a value None takes the named population from the study or the default set). The
    study's ``seats`` give way to the populations. None: the study as it is."""
    if choice is None:
        return study
    known = {**DEFAULT_POPULATIONS, **(study_populations(study) or {})}
    if isinstance(choice, str):
        choice = "default" if choice.strip() == "default" else [x.strip() for x in choice.split(",") if x.strip()]
    if isinstance(choice, str):
        pops: Any = choice
    else:
        pairs = choice.items() if isinstance(choice, Mapping) else ((n, None) for n in choice)
        pops = {}
        for name, seats in pairs:
            if seats is None and name not in known:
                raise StudyError(f"{where}: no population {name!r} (known: {', '.join(known)})")
            pops[name] = known[name] if seats is None else seats
    try:
        return StudyFile.model_validate({**study.model_dump(by_alias=True), "seats": None, "populations": pops})
    except ValidationError as exc:
        raise StudyError(explain(exc, where)) from None


def population_choice(ref: StudyRef, names: str | None, extra: Sequence[str] | None) -> PopulationChoice | None:
    """``xuezhan study``'s ``--populations NAMES`` and ``--population NAME=SEATS`` (repeatable) as one choice for
    :func:`with_populations`: the named line-ups (or the study's own), with each ``--population`` added or
    replaced (SEATS in YAML flow style, e.g. ``[expert, greedy, greedy, greedy]``)."""
    if not extra:
        return names
    if names is None:
        study, _ = load_study(ref)
        keep: list[str] = list(study_populations(study) or {})
    else:
        keep = list(DEFAULT_POPULATIONS) if names.strip() == "default" else [x.strip() for x in names.split(",")]
    choice: dict[str, Any] = {n: None for n in keep if n}
    for text in extra:
        name, sep, seats = text.partition("=")
        try:
            parsed = yaml.safe_load(seats) if sep else None
        except yaml.YAMLError:
            parsed = None
        if not name.strip() or not isinstance(parsed, list):
            raise StudyError(f"--population {text[:60]!r}: expected NAME=SEATS, e.g. 'pros=[expert, expert, value, "
                             "value]'")
        choice[name.strip()] = parsed
    return choice


def _override_keys(overrides: Overrides) -> list[str]:
    if isinstance(overrides, dict):
        return [str(k) for k in overrides]
    return [".".join(parse_override(text)[0]) for text in overrides]


def apply_common_overrides(variants: list[Variant], overrides: Overrides | None, source: str) -> list[Variant]:
    """Apply command-line overrides to every arm of a study (after everything else).

    A key on which the arms differ is refused: overriding it in every arm would erase what the study compares."""
    if not overrides:
        return variants
    flat = [flat_keys(v.rules.resolved()) for v in variants]
    differing = {k for f in flat[1:] for k in f.keys() | flat[0].keys()
                 if f.get(k) != flat[0].get(k) and k not in ("name", "description")}
    for key in _override_keys(overrides):
        clash = sorted(d for d in differing if d == key or d.startswith(key + ".") or key.startswith(d + "."))
        if clash:
            raise StudyError(f"--set {key}: the study's arms differ in {clash[0]}; setting it in every arm would "
                             "erase the comparison (edit the study file instead)")
    out = []
    for v in variants:
        rules = validate(apply_overrides(v.rules.resolved(), overrides), f"{source} ({v.name}, with --set)")
        out.append(Variant(name=v.name, rules=rules, source={**v.source, "study_set": overrides}))
    return out


def study_record(study: StudyFile, variants: list[Variant], hands: int,
                 overrides: Overrides | None = None) -> dict[str, Any]:
    """The content of ``study.json``: what was compared, on how many hands, with which seed."""
    pops = study_populations(study)
    contrasts = [list(pair) for pair in study.contrasts]
    record = {
        "name": study.name,
        "description": study.description,
        "baseline": variants[0].name,
        "variants": [{"name": v.name, "rules": v.source["rules"], "set": v.source["set"],
                      "digest": v.rules.digest(),
                      **({"arm": v.source["arm"], "population": v.source["population"]} if pops else {})}
                     for v in variants],
        "seats": study.seats,
        "set": overrides or None,
        "hands": hands,
        "seed": study.seed,
        "duplicate": study.duplicate,
        "contrasts": contrasts if not pops else [[f"{a}.{p}", f"{b}.{p}"] for p in pops for a, b in contrasts],
    }
    if pops:  # the cells of each population: the analysis pairs an arm with the baseline of its population
        record |= {"populations": pops, "headline": study.headline}
    return record


def _check_same_study(out_dir: Path, record: dict[str, Any]) -> bool:
    """One study per directory (called under the run directory's lock): refuse a directory holding another
    study (other name, arms, seed or seating) or variant directories that are not this study's arms. Returns
    whether ``study.json`` is already there."""
    earlier = layout.old_layout(out_dir)
    if earlier:
        raise RunError(f"{earlier}; or choose another --out")
    try:
        old = rundir.read_study(out_dir)
    except mf.ManifestError as exc:
        raise RunError(f"{exc}; refusing to write a study there") from None
    arms = [v["name"] for v in record["variants"]]
    if old is not None:
        same = {k: old.get(k) == record[k] for k in ("name", "seed", "duplicate")}
        same["arms"] = rundir.study_arms(old) == [(v["name"], v["digest"]) for v in record["variants"]]
        differ = [k for k, ok in same.items() if not ok]
        if differ:
            old_arms = ", ".join(a for a, _ in rundir.study_arms(old))
            raise RunError(f"{out_dir} holds study {str(old.get('name'))[:60]!r} (arms {old_arms}), which differs "
                           f"from this one in its {', '.join(differ)}: one study per directory; choose another --out")
    others = sorted(p.name for p in layout.control_dirs(out_dir) if layout.name_of(p) not in arms)
    if others:
        raise RunError(f"{out_dir} holds {others[0]}, not an arm of study {record['name']!r}: one study per "
                       "directory; choose another --out")
    return old is not None


def _record_bytes(record: dict[str, Any]) -> bytes:
    """``study.json``: the record with its checksum (``simulator.logs.manifest.canonical_checksum``)."""
    return (json.dumps({**record, mf.CHECKSUM: mf.canonical_checksum(record)}, indent=1, ensure_ascii=False)
            + "\n").encode()


@dataclass(frozen=True)
class StudyResult:
    """What a study run did: the output directory, per-variant summaries, and — when :func:`xuezhan.studies.run_study`
    ran it — the report (None when skipped), the diagnostics of ``analysis.diagnostics`` and, per variant, (hands
    whose play differs from the baseline, hands compared). :func:`simulate_study` leaves those three empty."""

    out_dir: Path
    summaries: list[RunSummary]
    report: Path | None = None
    findings: list[Any] = field(default_factory=list)
    differing: dict[str, tuple[int, int]] = field(default_factory=dict)  # variant -> (hands differing, hands)
    baselines: dict[str, str] = field(default_factory=dict)  # variant -> its baseline (its population's)


def _same_bytes(path: Path, data: bytes) -> bool:
    try:
        return path.read_bytes() == data
    except OSError:
        return False


def simulate_study(ref: StudyRef, *, out_dir: str | Path | None = None, jobs: int | None = None,
                   hands: int | None = None, seed: int | None = None, overrides: Overrides | None = None,
                   resume: bool = False, backend: str = "loky", scheduler: str | None = None,
                   progress: bool = True, populations: PopulationChoice | None = None) -> StudyResult:
    """Simulate a study (a file, a shipped study's name, a :class:`StudyFile` or a dict with a study file's keys, as
    in docs/studies.md): every variant on common random numbers, and ``study.json``. The diagnostics and the
    report are :func:`xuezhan.studies.run_study`'s (it calls this first).

    ``hands`` and ``seed`` replace the file's; ``overrides`` (``--set`` strings or a mapping) apply to every arm;
    ``populations`` selects or replaces the line-ups (:func:`with_populations`).
    """
    study, path = load_study(ref)
    study = with_populations(study, populations, path)
    if seed is not None:
        if seed < 0:
            raise StudyError(f"--seed must be a non-negative integer, got {seed}")
        study = study.model_copy(update={"seed": seed})
    variants = apply_common_overrides(study_variants(study, path), overrides, str(path))
    out_dir = Path(out_dir) if out_dir is not None else Path("runs") / study.name
    n = study.hands if hands is None else hands
    spec = RunSpec(hands=n, seed=study.seed, jobs=jobs, chunk_size=study.chunk_size, resume=resume,
                   backend=backend, scheduler=scheduler, duplicate=study.duplicate, progress=progress)
    record = study_record(study, variants, n, overrides)
    with run_lock(out_dir):  # one study per directory: checked, recorded and simulated under the lock
        existed = _check_same_study(out_dir, record)
        linked = rundir.link_lines(out_dir)  # refused before anything is written (docs/logs.md, links)
        if linked:
            raise RunError(linked[0] + (f" (+{len(linked) - 1} more)" if len(linked) > 1 else ""))
        data = _record_bytes(record)
        if not (existed and _same_bytes(out_dir / STUDY_FILE, data)):  # a no-op resume needs no disk
            atomic_write(out_dir / STUDY_FILE, data)  # first: a killed study still owns DIR
        try:
            summaries = run_variants(out_dir, variants, spec, study_locked=True)
        except RunError:
            if not existed:  # refused before simulating anything: leave the directory as it was
                (out_dir / STUDY_FILE).unlink(missing_ok=True)
            raise
    return StudyResult(out_dir, summaries)
