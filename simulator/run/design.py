"""``xuezhan design FILE``: rule values that meet a designer's targets, found on common walls and confirmed on
fresh ones.

The search (optuna, the ``tune`` extra, as :mod:`simulator.run.tune`): every trial sets the searched rule keys to a
candidate and plays every line-up of the design on the **same walls** (walls ``0..walls−1`` of ``seed``, in
``blocks``), computing each target's metric from the in-memory batch (:mod:`simulator.run.design_metrics`: per-wall
sums, SE clustered by wall). A trial whose interval of some target lies wholly outside the target after a block
stops there (it cannot be met but by the noise of the remaining walls). When the space is a finite grid no larger
than the budget, every point is played (in a fixed order); otherwise a seeded TPE sampler with the targets as
constraints proposes candidates, the first being the baseline's values when they lie in the space. The study
lives in ``DIR/NAME.db`` (SQLite): rerunning continues it up to the budget, and the sampler is re-seeded from
``(seed, trials finished)`` before every trial, so a resumed search proposes what an uninterrupted one would.

The search's own noise: a candidate counts as feasible on the search walls only when every target's 95%
interval lies inside its target, and the winner is never taken from the search walls. The feasible candidates,
best objective first, are re-measured on **fresh walls** (seed ``seed + 1``), at most ``confirm`` of them; the
first whose every interval lies inside its target is chosen. Nothing met: the candidate closest to feasible (the
smallest sum of the amounts by which its intervals stick out, each in its target's scale) is re-measured and
reported with the targets it misses and by how much.

Output: ``DIR/NAME.yaml`` (only when every target is met: ``extends:`` the baseline, the changed keys, a comment
saying what it meets), ``DIR/NAME.json`` (everything measured), the report ``DIR/NAME.md`` with its figure
``DIR/NAME.png`` (:mod:`simulator.run.design_report`). The YAML and JSON depend only on the design and its settings:
the same file and seed write the same bytes.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from pydantic import ValidationError

from simulator.files import atomic_write
from simulator.rules import CONFIG_DIR, explain
from simulator.run.design_file import Design, DesignError, load_design
from simulator.run.design_metrics import Estimate, Moments, measure, metric_info
from simulator.run.design_report import write_report
from simulator.run.tune import Progress, finished_trials, open_study, require_optuna

FORMAT = 1


@dataclass(frozen=True)
class Measured:
    """Every metric of a candidate in every line-up, and whether each target holds (interval inside)."""

    params: dict[str, Any]
    estimates: dict[str, dict[str, Estimate]]  # line-up -> metric id -> estimate
    excess: list[float]  # per (target, line-up), in the target's scale; 0 = the interval lies inside

    @property
    def met(self) -> bool:
        return all(e <= 0 for e in self.excess)


def _grid(design: Design) -> list[dict[str, Any]] | None:
    """Every point of a finite search space in a fixed order (None when a key has a real range)."""
    axes = []
    for key, space in design.file.search.items():
        if space.choices is not None:
            axes.append([(key, v) for v in space.choices])
        elif space.integer:
            axes.append([(key, v) for v in range(int(space.low), int(space.high) + 1, int(space.step or 1))])
        elif space.step is not None:
            n = int(math.floor((space.high - space.low) / space.step + 1e-9))
            axes.append([(key, float(round(space.low + i * space.step, 12))) for i in range(n + 1)])
        else:
            return None
    return [dict(point) for point in itertools.product(*axes)]


def _suggest(trial: Any, design: Design) -> dict[str, Any]:
    out = {}
    for key, space in design.file.search.items():
        if space.choices is not None:
            index = trial.suggest_categorical(key, list(range(len(space.choices))))
            out[key] = space.choices[index]
        elif space.integer:
            out[key] = trial.suggest_int(key, int(space.low), int(space.high), step=int(space.step or 1))
        else:
            out[key] = trial.suggest_float(key, float(space.low), float(space.high), step=space.step)
    return out


def _as_trial_params(design: Design, params: Mapping[str, Any]) -> dict[str, Any]:
    """The values optuna stores for ``params`` (a choice's index)."""
    return {k: (design.file.search[k].choices.index(v) if design.file.search[k].choices is not None else v)
            for k, v in params.items()}


def _in_space(design: Design, params: Mapping[str, Any]) -> bool:
    for key, space in design.file.search.items():
        v = params[key]
        if space.choices is not None:
            if v not in space.choices:
                return False
        elif not isinstance(v, int | float) or isinstance(v, bool) or not space.low <= v <= space.high or (
                space.integer and not isinstance(v, int)):
            return False
    return True


def _scale(lo: float, hi: float) -> float:
    if math.isfinite(lo) and math.isfinite(hi) and hi > lo:
        return hi - lo
    bound = hi if math.isfinite(hi) else lo
    return abs(bound) if bound else 1.0


def excesses(design: Design, est: Mapping[str, Mapping[str, Estimate]]) -> list[tuple[int, str, float, float]]:
    """``[(target index, line-up, amount the interval sticks out in the target's unit, the same in its scale)]``
    for every target and the line-ups it must hold in."""
    out = []
    for i, t in enumerate(design.file.targets):
        lo, hi = t.band
        for pop in ([t.population] if t.population else list(design.populations)):
            e = est[pop][t.metric]
            over = max(e.hi - hi, lo - e.lo, 0.0) if math.isfinite(e.value) else math.inf
            out.append((i, pop, over, over / _scale(lo, hi)))
    return out


def _hopeless(design: Design, est: Mapping[str, Mapping[str, Estimate]]) -> bool:
    """Some target's interval lies wholly outside its target (more walls would have to undo the evidence)."""
    for t in design.file.targets:
        lo, hi = t.band
        for pop in ([t.population] if t.population else list(design.populations)):
            e = est[pop][t.metric]
            if e.lo > hi or e.hi < lo:
                return True
    return False


def _estimates(acc: Mapping[str, Mapping[str, Moments]]) -> dict[str, dict[str, Estimate]]:
    return {pop: {mid: m.estimate(metric_info(mid).share) for mid, m in d.items()} for pop, d in acc.items()}


def play(design: Design, params: Mapping[str, Any], seed: int, walls: int, blocks: int = 1,
         stop_early: bool = False) -> Measured:
    """Measure every metric of ``params`` in every line-up on walls ``0..walls−1`` of ``seed``."""
    ids = design.ids()
    acc: dict[str, dict[str, Moments]] = {pop: {mid: Moments() for mid in ids} for pop in design.populations}
    size = walls // blocks
    starts = [b * size for b in range(blocks)]
    sizes = [size] * (blocks - 1) + [walls - starts[-1]]
    rules = design.rules(params)
    for b, (first, n) in enumerate(zip(starts, sizes, strict=True)):
        for pop, (r, dup) in rules.items():
            measure(r, dup, first, n, seed, ids, acc[pop])
        if stop_early and b + 1 < blocks and _hopeless(design, _estimates(acc)):
            break
    est = _estimates(acc)
    return Measured(dict(params), est, [x[3] for x in excesses(design, est)])


def objective_value(design: Design, m: Measured) -> float:
    """What the search minimises (see docs/design.md): changed keys (+ the distance as a tie-break), the distance
    to the baseline, or a searched key's value or a metric's mean over the line-ups (negated to maximise)."""
    base = design.baseline_values()
    dist, changes = 0.0, 0
    for key, space in design.file.search.items():
        v, b = m.params[key], base[key]
        changes += v != b
        if space.choices is not None or not isinstance(b, int | float) or isinstance(b, bool):
            dist += float(v != b)
        else:
            dist += abs(v - b) / (space.high - space.low)
    obj = design.file.objective
    if obj == "closest":
        return dist
    if obj == "fewest_changes":
        return changes + dist / (len(base) + 1)
    (sense, what), = obj.items()
    value = (float(m.params[what]) if what in design.file.search else
             float(np.mean([e[what].value for e in m.estimates.values()])))
    return value if sense == "minimize" else -value


def settings_record(design: Design) -> dict:
    """What identifies a search (stored in the optuna study; a rerun must match it to continue)."""
    f = design.file
    return {"format": FORMAT, "baseline": f.baseline,
            "populations": {k: [r.digest(), dup] for k, (r, dup) in design.populations.items()},
            "search": {k: v.model_dump(mode="json") for k, v in f.search.items()},
            "targets": [t.model_dump(mode="json") for t in f.targets],
            "objective": f.objective, "walls": f.walls, "blocks": f.blocks, "seed": f.seed}


def _record(m: Measured) -> dict:
    return {pop: {mid: e.record() for mid, e in d.items()} for pop, d in m.estimates.items()}


def _stored(design: Design, t: Any) -> Measured:
    est = {pop: {mid: Estimate(*v) for mid, v in d.items()} for pop, d in t.user_attrs["estimates"].items()}
    return Measured(dict(t.user_attrs["params"]), est, list(t.user_attrs["excess"]))


def _search(optuna: Any, design: Design, out_dir: Path, progress: Progress | None) -> tuple[list[Measured], int]:
    """Run the search up to the budget (resuming ``out_dir/NAME.db``); the trials in order, and how many ran now."""
    f = design.file
    study = open_study(optuna, out_dir / f"{f.name}.db", f.name, settings_record(design), None)
    grid = _grid(design)
    budget = min(f.budget, len(grid)) if grid is not None and len(grid) <= f.budget else f.budget
    exhaustive = grid is not None and len(grid) <= f.budget
    seen: dict[str, Measured] = {}

    def objective(trial: Any) -> float:
        params = _suggest(trial, design)
        key = json.dumps(params, sort_keys=True)
        if key not in seen:  # the same candidate on the same walls measures the same: not played again
            seen[key] = play(design, params, f.seed, f.walls, f.blocks, stop_early=True)
        m = seen[key]
        trial.set_user_attr("params", m.params)
        trial.set_user_attr("estimates", {pop: {mid: [e.value, e.se, e.lo, e.hi, e.n, e.walls] for mid, e in d.items()}
                                          for pop, d in m.estimates.items()})
        trial.set_user_attr("excess", m.excess)
        return -objective_value(design, m)

    for t in finished_trials(optuna, study):
        if t.state == optuna.trial.TrialState.COMPLETE:
            m = _stored(design, t)
            seen[json.dumps(m.params, sort_keys=True)] = m
    ran = 0
    while len(done := [t for t in finished_trials(optuna, study)
                       if t.state == optuna.trial.TrialState.COMPLETE]) < budget:
        if progress:
            met = sum(all(e <= 0 for e in t.user_attrs["excess"]) for t in done)
            progress(len(done), budget, f"{met} meeting every target on the search walls")
        waiting = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.WAITING,))
        if exhaustive and not waiting:
            study.enqueue_trial(_as_trial_params(design, grid[len(done)]))
        elif not done and not waiting and _in_space(design, design.baseline_values()):
            study.enqueue_trial(_as_trial_params(design, design.baseline_values()))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # constraints_func is experimental in optuna 4
            study.sampler = optuna.samplers.TPESampler(
                seed=f.seed * 100_003 + len(done), n_startup_trials=min(8, max(2, budget // 3)),
                constraints_func=lambda t: t.user_attrs.get("excess", [1.0]))
        study.optimize(objective, n_trials=1, catch=())
        ran += 1
    done = [t for t in finished_trials(optuna, study) if t.state == optuna.trial.TrialState.COMPLETE][:budget]
    return [_stored(design, t) for t in done], ran


@dataclass(frozen=True)
class DesignResult:
    """What a design run found: the files written (``rules`` None when nothing met every target), the document
    (``NAME.json``'s content), whether every target was met, the trials run by this call and the CPU seconds."""

    rules: Path | None
    report: Path
    document: dict
    met: bool
    trials_run: int
    cpu_seconds: float


def _changed(design: Design, params: Mapping[str, Any]) -> dict[str, Any]:
    base = design.baseline_values()
    return {k: v for k, v in params.items() if v != base[k]}


def _nested(flat: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in flat.items():
        node = out
        *parents, last = key.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[last] = value
    return out


def _fmt(e: Estimate) -> str:
    return f"{e.value:+.4f} [{e.lo:+.4f}, {e.hi:+.4f}]"


def rules_text(design: Design, out_dir: Path, doc: dict, fresh: Measured) -> str:
    """``NAME.yaml``: ``extends:`` the baseline, the changed keys, and comments on what it meets."""
    f = design.file
    shipped = design.config.resolve().parent == CONFIG_DIR.resolve()  # a shipped rule set: by its name
    extends = design.config.stem if shipped else os.path.relpath(design.config.resolve(), out_dir.resolve())
    lines = [f"# xuezhan design {f.name}" + (f": {f.description}" if f.description else ""),
             f"# Meets every target on fresh walls (seed {doc['fresh']['seed']}; each 95% interval inside its target):"]
    for i, pop, _, _ in excesses(design, fresh.estimates):
        t = design.file.targets[i]
        e = fresh.estimates[pop][t.metric]
        lines.append(f"#   {t.text()}: {_fmt(e)}, {pop}, {e.walls:,} walls, n = {e.n:,} {metric_info(t.metric).per}s")
    lines.append(f"# Found by {doc['search']['trials']} trials on {f.walls:,} walls of seed {f.seed}; "
                 f"report: {f.name}.md")
    body = {"extends": extends, "name": f.name, **_nested(_changed(design, fresh.params))}
    return "\n".join(lines) + "\n" + yaml.safe_dump(body, sort_keys=False, allow_unicode=True)


def design(ref: str | Path | Mapping[str, Any], out_dir: str | Path = "designs", *, budget: int | None = None,
           seed: int | None = None, walls: int | None = None, fresh_walls: int | None = None,
           progress: Progress | None = None) -> DesignResult:
    """Search rule values meeting the targets of a design (a file, a shipped example's name or a mapping with the
    file's keys), re-measure on fresh walls, write ``out_dir/NAME.{yaml,json,md,png}`` (docs/design.md).
    ``budget``, ``seed``, ``walls``, ``fresh_walls`` replace the file's."""
    optuna = require_optuna()
    cpu0 = time.process_time()
    d = load_design(ref)
    update = {k: v for k, v in (("budget", budget), ("seed", seed), ("walls", walls), ("fresh_walls", fresh_walls))
              if v is not None}
    for k, v in update.items():
        least = {"seed": 0, "budget": 1}.get(k, 2)
        if v < least:
            raise DesignError(f"--{k.replace('_', '-')} must be at least {least}, got {v}")
    if update:
        try:
            file = type(d.file).model_validate({**d.file.model_dump(mode="json"), **update})
        except ValidationError as exc:
            raise DesignError(explain(exc, f"{d.path} (with the command's options)")) from None
        d = Design(file, d.path, d.config, d.raw, d.populations)
    f = d.file
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    trials, ran = _search(optuna, d, out_dir, progress)
    order = sorted(range(len(trials)), key=lambda i: (objective_value(d, trials[i]), i))
    feasible = [i for i in order if trials[i].met]
    fresh_seed = f.seed + 1
    played: dict[str, Measured] = {}

    def fresh(params: dict[str, Any], what: str) -> Measured:  # each candidate measured once on the fresh walls
        key = json.dumps(params, sort_keys=True)
        if key not in played:
            if progress:
                progress(len(trials), len(trials), f"measuring {what} on fresh walls")
            played[key] = play(d, params, fresh_seed, f.fresh_walls)
        return played[key]

    confirmed: list[tuple[int, Measured]] = []
    chosen: tuple[int, Measured] | None = None
    for i in feasible[:f.confirm]:
        m = fresh(trials[i].params, f"candidate {len(confirmed) + 1}")
        confirmed.append((i, m))
        if m.met:
            chosen = (i, m)
            break
    closest = None
    if chosen is None:
        i = min(range(len(trials)), key=lambda i: (sum(x for x in trials[i].excess), objective_value(d, trials[i]), i))
        closest = (i, fresh(trials[i].params, "the closest candidate"))
    base = fresh(d.baseline_values(), "the baseline")
    doc = document(d, trials, order, confirmed, chosen, closest, base, fresh_seed, ran)
    rules_path = None
    if chosen is not None:
        rules_path = out_dir / f"{f.name}.yaml"
        atomic_write(rules_path, rules_text(d, out_dir, doc, chosen[1]).encode())
    else:
        (out_dir / f"{f.name}.yaml").unlink(missing_ok=True)  # a rerun that no longer meets them keeps no file
    atomic_write(out_dir / f"{f.name}.json", (json.dumps(doc, indent=1, ensure_ascii=False) + "\n").encode())
    report = write_report(d, doc, out_dir)
    return DesignResult(rules_path, report, doc, chosen is not None, ran, time.process_time() - cpu0)


def _targets(d: Design, m: Measured) -> list[dict]:
    out = []
    for i, pop, over, _ in excesses(d, m.estimates):
        t = d.file.targets[i]
        out.append({"target": t.text(), "population": pop, **m.estimates[pop][t.metric].record(),
                    "met": over <= 0, "misses_by": float(round(over, 6))})
    return out


def document(d: Design, trials: list[Measured], order: list[int], confirmed: list[tuple[int, Measured]],
             chosen: tuple[int, Measured] | None, closest: tuple[int, Measured] | None, base: Measured,
             fresh_seed: int, ran: int) -> dict:
    """``NAME.json``: plain data in a fixed key order, nothing time-dependent (``ran`` is not stored)."""
    f = d.file
    rank = {i: r for r, i in enumerate(order)}
    return {
        "name": f.name, "description": f.description, "baseline": f.baseline,
        "met": chosen is not None,
        "chosen": None if chosen is None else {"trial": chosen[0], "params": chosen[1].params,
                                               "changed": _changed(d, chosen[1].params),
                                               "targets": _targets(d, chosen[1])},
        "closest": None if closest is None else {"trial": closest[0], "params": closest[1].params,
                                                 "targets": _targets(d, closest[1]),
                                                 "failed": [t for t in _targets(d, closest[1]) if not t["met"]]},
        "confirmed": [{"trial": i, "params": m.params, "met": m.met} for i, m in confirmed],
        "baseline_fresh": {"params": base.params, "targets": _targets(d, base)},
        "fresh": {"seed": fresh_seed, "walls": f.fresh_walls},
        "search": {"trials": len(trials), "budget": f.budget, "walls": f.walls, "blocks": f.blocks, "seed": f.seed,
                   "feasible": sum(m.met for m in trials),
                   "history": [{"trial": i, "params": m.params, "objective": float(round(objective_value(d, m), 6)),
                                "rank": rank[i], "met": m.met, "excess": float(round(sum(m.excess), 6)),
                                "estimates": _record(m)}
                               for i, m in enumerate(trials)]},
        "objective": f.objective, "format": FORMAT,
    }

