"""Design files (``xuezhan design FILE``): the baseline rule set, the search space, the targets, the objective and
the line-ups every target must hold in — validated strictly, each problem one line naming the file and the key.

The format is documented for users in docs/design.md; its JSON Schema is ``xuezhan rules schema design``.
Validation goes beyond the schema: every search key must be a key of the baseline rule set and every choice and
both ends of every range must be values the rule set accepts there; every metric id must be known
(:mod:`simulator.run.design_metrics`); an ``edge:A-B`` metric needs both bots seated in every line-up.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from simulator.errors import UserError
from simulator.rules import CONFIG_DIR, RulesError, RuleSet, apply_overrides, explain, flat_keys, load_raw, validate
from simulator.run.design_metrics import EDGE, metric_info
from simulator.run.study import DEFAULT_POPULATIONS, config_path, resolve_named_file

DESIGN_DIR = CONFIG_DIR / "designs"  # the shipped design examples
Number = int | float


class DesignError(UserError):
    """A design file that cannot be read or validated; one line naming the file and the key."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Space(_Strict):
    """How a rule key is searched: a list of ``choices`` (any values the key accepts), or ``low..high`` (integers
    when both ends are integers, on a grid of ``step`` when given)."""

    choices: list[Any] | None = None
    low: Number | None = None
    high: Number | None = None
    step: Annotated[Number, Field(gt=0)] | None = None

    @model_validator(mode="after")
    def _one_form(self) -> Space:
        if self.choices is not None:
            if self.low is not None or self.high is not None or self.step is not None:
                raise ValueError("give choices or low/high, not both")
            if not self.choices:
                raise ValueError("empty choices: list at least one value")
            return self
        if self.low is None or self.high is None:
            raise ValueError("a searched key needs choices: [...] or low and high")
        if not self.low < self.high:
            raise ValueError(f"empty range: low ({self.low}) must be below high ({self.high})")
        if self.integer and self.step is not None and not isinstance(self.step, int):
            raise ValueError("an integer range takes an integer step")
        return self

    @property
    def integer(self) -> bool:
        return all(isinstance(x, int) and not isinstance(x, bool) for x in (self.low, self.high))


class Target(_Strict):
    """A metric that must lie in a band: its 95% interval inside ``[at_least, at_most]`` or ``within``."""

    metric: str
    at_most: Number | None = None
    at_least: Number | None = None
    within: tuple[Number, Number] | None = None
    population: str | None = None  # None: every line-up

    @model_validator(mode="after")
    def _one_band(self) -> Target:
        if self.within is not None and (self.at_most is not None or self.at_least is not None):
            raise ValueError("give within: [lo, hi] or at_least / at_most, not both")
        if self.within is None and self.at_most is None and self.at_least is None:
            raise ValueError("a target needs at_most, at_least or within: [lo, hi]")
        lo, hi = self.band
        if lo > hi:
            raise ValueError(f"empty target band [{lo}, {hi}]")
        return self

    @property
    def band(self) -> tuple[float, float]:
        if self.within is not None:
            return float(self.within[0]), float(self.within[1])
        return (-float("inf") if self.at_least is None else float(self.at_least),
                float("inf") if self.at_most is None else float(self.at_most))

    def text(self) -> str:
        lo, hi = self.band
        band = (f"within [{lo:g}, {hi:g}]" if self.within is not None else
                f"≤ {hi:g}" if self.at_least is None else f"≥ {lo:g}" if self.at_most is None else
                f"in [{lo:g}, {hi:g}]")
        return f"{self.metric} {band}"


class Population(_Strict):
    seats: Annotated[list[Any], Field(min_length=4, max_length=4)]
    duplicate: bool | None = None  # every wall played four times with the seats rotated (None: the file's)

    @model_validator(mode="before")
    @classmethod
    def _bare_list(cls, v: Any) -> Any:
        return {"seats": v} if isinstance(v, list) else v


Objective = Literal["fewest_changes", "closest"] | dict[Literal["minimize", "maximize"], str]


class DesignFile(_Strict):
    """The schema of a design file (``configs/designs/*.yaml``)."""

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")]  # the output file's stem
    description: str = ""
    baseline: str  # a rule set: a name in configs/ or a path (relative to the design file first)
    # the line-ups: name -> four seats (or {seats, duplicate}); "default" or a list of names of the studies'
    # default populations (strong, casual, mixed, greedy: simulator.run.study.DEFAULT_POPULATIONS); None: the baseline's
    populations: Literal["default"] | list[str] | dict[str, Population] | None = None
    duplicate: bool = False  # duplicate seating for every line-up that does not say
    search: Annotated[dict[str, Space], Field(min_length=1)]
    targets: Annotated[list[Target], Field(min_length=1)]
    objective: Objective = "fewest_changes"
    budget: Annotated[int, Field(ge=1)] = 20           # trials (the first is the baseline's values, when searchable)
    walls: Annotated[int, Field(ge=2)] = 2000          # search walls per trial (common to every trial)
    blocks: Annotated[int, Field(ge=1)] = 2            # a trial stops after a block that shows it cannot be met
    fresh_walls: Annotated[int, Field(ge=2)] = 8000    # fresh walls re-measuring the chosen rule set
    confirm: Annotated[int, Field(ge=1, le=10)] = 3    # candidates re-measured on fresh walls, best first
    seed: Annotated[int, Field(ge=0)] = 0

    @field_validator("objective", mode="before")
    @classmethod
    def _one_objective(cls, v: Any) -> Any:
        if isinstance(v, dict) and len(v) != 1:
            raise ValueError("one objective: fewest_changes, closest, {minimize: X} or {maximize: X}")
        return v

    @model_validator(mode="after")
    def _sizes(self) -> DesignFile:
        if self.walls < 2 * self.blocks:
            raise ValueError(f"walls ({self.walls}) must be at least 2 per block ({self.blocks} blocks)")
        return self


@dataclass(frozen=True)
class Design:
    """A validated design: the file's model, where it was read, the baseline (its resolved config path and
    raw mapping) and the rule set of every line-up under the baseline's rules."""

    file: DesignFile
    path: Path
    config: Path
    raw: dict[str, Any]
    populations: dict[str, tuple[RuleSet, bool]]  # name -> (baseline rules with that line-up, duplicate)

    def rules(self, params: Mapping[str, Any]) -> dict[str, tuple[RuleSet, bool]]:
        """Every line-up's rule set with the search keys set to ``params``."""
        return {name: (validate(apply_overrides(r.resolved(), dict(params)), f"{self.path} (candidate)"), dup)
                for name, (r, dup) in self.populations.items()}

    def baseline_values(self) -> dict[str, Any]:
        flat = flat_keys(next(iter(self.populations.values()))[0].model_dump(mode="json"))  # every key, defaults too
        return {k: flat[k] for k in self.file.search}

    def ids(self) -> list[str]:
        """The metric ids the targets and the objective read, in first-use order."""
        out = [t.metric for t in self.file.targets]
        obj = self.file.objective
        if isinstance(obj, dict):
            out.append(next(iter(obj.values())))
        return [m for i, m in enumerate(out) if m not in out[:i] and m not in self.file.search]


def resolve_design_path(ref: str | Path) -> Path:
    return resolve_named_file(ref, DESIGN_DIR, "design", DesignError)


def _check_values(design: DesignFile, base: RuleSet, where: Path) -> None:
    flat = flat_keys(base.model_dump(mode="json"))  # resolved() leaves out keys at an "off" default
    for key, space in design.search.items():
        if key not in flat or key in ("name", "description") or key.startswith("seats."):
            raise DesignError(f"{where}: search.{key}: unknown rule key (a dotted key of the baseline "
                              f"{base.name}, e.g. settlement.huazhu_penalty)")
        values = space.choices if space.choices is not None else [space.low, space.high]
        for value in values:
            try:
                validate(apply_overrides(base.resolved(), {key: value}), "")
            except RulesError as exc:
                why = str(exc).split(": ", 2)[-1]
                raise DesignError(f"{where}: search.{key}: {value!r} is not an allowed value ({why})") from None


def _check_metrics(design: DesignFile, pops: dict[str, tuple[RuleSet, bool]], where: Path) -> None:
    obj = design.objective
    named = [(f"targets.{i}", t.metric, t.population) for i, t in enumerate(design.targets)]
    if isinstance(obj, dict):
        named.append(("objective", next(iter(obj.values())), None))
    for loc, mid, only in named:
        if loc == "objective" and mid in design.search:
            space = design.search[mid]
            if space.choices is not None and not all(isinstance(v, int | float) for v in space.choices):
                raise DesignError(f"{where}: objective: {mid} takes values that are not numbers")
            continue
        try:
            metric_info(mid)
        except KeyError:
            from simulator.run.design_metrics import METRICS

            raise DesignError(f"{where}: {loc}: unknown metric id {mid!r} (known: {', '.join(METRICS)}, "
                              "edge:A-B, or for the objective a searched key)") from None
        m = EDGE.match(mid)
        for name, (rules, _) in pops.items():
            if only is not None and name != only:
                continue
            bots = {s.bot for s in rules.seats}
            missing = [b for b in (m.groups() if m else ()) if b not in bots]
            if missing:
                raise DesignError(f"{where}: {loc}: {mid} needs a seat played by {missing[0]} in line-up {name!r}")
    for i, t in enumerate(design.targets):
        if t.population is not None and t.population not in pops:
            raise DesignError(f"{where}: targets.{i}.population: no line-up named {t.population!r}")


def _lineups(design: DesignFile, where: Path) -> dict[str, Population]:
    pops = design.populations
    if pops is None:
        return {}
    if isinstance(pops, dict):
        return pops
    names = list(DEFAULT_POPULATIONS) if pops == "default" else pops
    unknown = [n for n in names if n not in DEFAULT_POPULATIONS]
    if unknown or not names:
        raise DesignError(f"{where}: populations: {'no population named ' + repr(unknown[0]) if unknown else 'empty'}"
                          f" (the default ones: {', '.join(DEFAULT_POPULATIONS)}; or a mapping name -> four seats)")
    return {n: Population(seats=DEFAULT_POPULATIONS[n]) for n in names}


def load_design(ref: str | Path | Mapping[str, Any]) -> Design:
    """Read and validate a design: a file, a shipped example's name, or a mapping with the file's keys."""
    from simulator.rules import read_yaml_mapping

    if isinstance(ref, Mapping):
        where, data = Path(f"<design {ref.get('name', '?')}>"), dict(ref)
    else:
        where = resolve_design_path(ref)
        data = read_yaml_mapping(where, "a design")
    try:
        design = DesignFile.model_validate(data)
    except ValidationError as exc:
        raise DesignError(explain(exc, where)) from None
    try:
        config = config_path(design.baseline, where)
        raw = load_raw(config)
        base = validate(raw, str(config))
        pops = {name: (validate(apply_overrides(raw, {"seats": p.seats}), f"{where} (populations.{name})"),
                       design.duplicate if p.duplicate is None else p.duplicate)
                for name, p in _lineups(design, where).items()} or {base.name: (base, design.duplicate)}
    except RulesError as exc:
        raise DesignError(str(exc)) from None
    _check_values(design, base, where)
    _check_metrics(design, pops, where)
    return Design(design, where, config, raw, pops)
