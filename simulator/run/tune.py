"""``xuezhan tune``: the expert's parameters adapted to one rule set, with an honest re-measure of the gain.

The search (optuna, the ``tune`` extra): every trial seats a candidate expert (the ``TUNABLE`` parameters of
:mod:`simulator.rules`, drawn by a seeded TPE sampler; the first trial is the defaults) in seat 0 against a fixed
**field** in seats 1–3 (default: three default experts), under duplicate seating on the same walls for every trial
(deal ids ``0..walls−1`` of ``seed``, each wall played four times with the candidate in each seat). Its score is
the candidate's mean score per player-hand (base units). The walls come in ``blocks``; after each block the
running mean is reported and optuna's successive-halving pruner stops trials that trail, so bad trials cost a
block or two. The study lives in ``DIR/NAME.db`` (SQLite): rerunning the same command continues it up to the
budget (the settings are checked), and the sampler is re-seeded from ``(seed, trials finished)`` before every
trial, so an interrupted and resumed search proposes the same trials as an uninterrupted one.

The gain: the search's best score is optimistic (the best of many noisy scores on the same walls), so it is
never reported as the gain. The winner and the default expert are both re-measured against the same field on
**fresh walls** (master seed ``fresh_seed``, default ``seed + 1``), paired by wall: gain = mean over walls of
(winner − default) per player-hand, SE over walls. Unless the 95% interval lies above 0 the file keeps the
defaults and says the gain is within noise (the EV computation already adapts to the rules).

The file ``DIR/NAME.yaml`` holds ``params`` (what ``{bot: expert, params_from: DIR/NAME.yaml}`` reads), the
verdict, the winner searched, the fresh-wall gain with SE, CI and n, and the settings (rules digest, seed,
budget, walls, field). It depends only on the arguments: the same command writes the same bytes.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from simulator.errors import UserError
from simulator.files import atomic_write
from simulator.hands import play_hands
from simulator.rules import TUNABLE, TUNED_KEY, RuleSet
from simulator.run.tuned import DEFAULTS, candidate, fingerprint_record, lineup

Z95 = 1.959963984540054  # two-sided 95% normal quantile
FORMAT = 1  # version of the tuned-parameters file
PRUNE_AFTER = 5  # finished trials before any is pruned


class TuneError(UserError):
    """Bad tune input (field, sizes, a study directory tuned with other settings, optuna missing)."""


@dataclass(frozen=True)
class TuneSpec:
    """The search and the re-measure. ``walls``: walls per full trial (each played 4 times), split into
    ``blocks`` equal blocks between which trials may be pruned; ``fresh_walls`` for the re-measure."""

    budget: int = 30
    walls: int = 800
    blocks: int = 4
    fresh_walls: int = 2000
    seed: int = 0
    fresh_seed: int | None = None  # default seed + 1

    def check(self) -> None:
        if self.budget < 1:
            raise TuneError(f"--budget must be at least 1 trial, got {self.budget}")
        if self.blocks < 1 or self.walls < self.blocks:
            raise TuneError(f"--walls ({self.walls}) must be at least --blocks ({self.blocks}), which is at least 1")
        if self.fresh_walls < 2:
            raise TuneError(f"--fresh-walls must be at least 2 (an SE needs two walls), got {self.fresh_walls}")
        if self.seed < 0 or (self.fresh_seed is not None and self.fresh_seed < 0):
            raise TuneError("--seed and --fresh-seed must be 0 or more")
        if self.fresh == self.seed:
            raise TuneError(f"--fresh-seed must differ from --seed ({self.seed}): the gain is measured on fresh walls")

    @property
    def fresh(self) -> int:
        return self.seed + 1 if self.fresh_seed is None else self.fresh_seed


def require_optuna() -> Any:
    """The optuna module (quiet), or :class:`TuneError` naming the extra to install."""
    try:
        import optuna
    except ImportError:
        raise TuneError("xuezhan tune needs optuna: pip install 'xuezhan[tune]'") from None
    optuna.logging.set_verbosity(optuna.logging.ERROR)  # not a "trial failed" traceback on Ctrl-C
    return optuna


def parse_field(text: str | None) -> list[Any]:
    """``--field``: one seat spec for all three field seats (``greedy``, ``{bot: expert, tempo: 0.02}``) or a
    YAML list of three (``[expert, greedy, greedy]``); default three default experts."""
    if text is None:
        return ["expert"] * 3
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        raise TuneError(f"--field {text[:60]!r}: not valid YAML (e.g. greedy or [expert, greedy, greedy])") from None
    if isinstance(data, str | dict):
        return [data] * 3
    if not isinstance(data, list) or len(data) != 3:
        raise TuneError(f"--field {text[:60]!r}: expected one seat spec or a list of 3 (seats 1-3)")
    return data


def seat0_per_wall(rules: RuleSet, first: int, walls: int, seed: int) -> np.ndarray:
    """float64[walls]: seat spec 0's mean score per player-hand (base units) on walls ``first..first+walls−1``
    of ``seed``, each played four times (duplicate seating: spec ``(seat + rotation) % 4`` plays table seat
    ``seat``, so spec 0 plays every table seat of the wall once)."""
    ids = np.arange(4 * first, 4 * (first + walls), dtype=np.int64)
    p = play_hands(rules, ids, seed, duplicate=True)["players"]
    hand = np.asarray(p["hand_id"], dtype=np.int64)
    spec = (np.asarray(p["seat"], dtype=np.int64) + hand % 4) % 4
    mine = spec == 0
    deal = np.asarray(p["deal_id"], dtype=np.int64)[mine] - first
    score = np.asarray(rules.base_units(p["score_total"]), dtype=np.float64)[mine]
    return np.bincount(deal, weights=score, minlength=walls).astype(np.float64) / 4.0


def settings_record(rules: RuleSet, overrides: list[str] | None, field: list[Any], spec: TuneSpec) -> dict:
    """What identifies a search (stored in the optuna study; a rerun must match it to continue)."""
    base = lineup(rules, {"bot": "expert"}, field)
    return {"format": FORMAT, "rules": rules.name, "set": list(overrides or []), "rules_digest": base.digest(),
            "field": base.resolved()["seats"][1:], "walls": spec.walls, "blocks": spec.blocks, "seed": spec.seed,
            "ranges": {k: list(v) for k, v in TUNABLE.items()}}


def open_study(optuna: Any, db: Path, name: str, settings: dict, pruner: Any) -> Any:
    storage = f"sqlite:///{db}"
    existed = db.exists()
    study = optuna.create_study(study_name=name, storage=storage, direction="maximize", pruner=pruner,
                                load_if_exists=True)
    stored = study.user_attrs.get("settings")
    if existed and stored is not None and stored != settings:
        diff = sorted(k for k in settings if stored.get(k) != settings[k])
        raise TuneError(f"{db} holds a search with other settings ({', '.join(diff)}); use another --out or --name, "
                        "or delete it")
    if stored is None:
        study.set_user_attr("settings", settings)
    return study


def finished_only(optuna: Any, inner: Any) -> Any:
    """``inner`` pruner comparing a trial only with finished (complete or pruned) trials: a trial cut by Ctrl-C
    (FAIL) or a kill (RUNNING) keeps the rung values it reached in the storage, which must not steer the pruning
    of a resumed search."""

    class View:
        def __init__(self, study: Any) -> None:
            self._study = study

        def __getattr__(self, attr: str) -> Any:
            return getattr(self._study, attr)

        def get_trials(self, deepcopy: bool = True, states: Any = None) -> list[Any]:
            keep = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)
            return [t for t in self._study.get_trials(deepcopy=deepcopy, states=states) if t.state in keep]

    class FinishedOnly(optuna.pruners.BasePruner):
        def prune(self, study: Any, trial: Any) -> bool:
            view = View(study)
            if len(view.get_trials(deepcopy=False)) < PRUNE_AFTER:  # too few to compare with: run it through
                return False
            return inner.prune(view, trial)

    return FinishedOnly()


def finished_trials(optuna: Any, study: Any) -> list[Any]:
    states = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)
    return [t for t in study.get_trials(deepcopy=False) if t.state in states]


@dataclass(frozen=True)
class Gain:
    """Paired fresh-wall measure of the winner against the default expert, base units per player-hand."""

    winner: float
    default: float
    gain: float
    se: float
    walls: int
    seed: int

    @property
    def ci(self) -> tuple[float, float]:
        return self.gain - Z95 * self.se, self.gain + Z95 * self.se

    @property
    def significant(self) -> bool:
        return self.ci[0] > 0


def fresh_gain(rules: RuleSet, field: list[Any], params: dict[str, float], spec: TuneSpec) -> Gain:
    """The winner and the default expert against ``field`` on the same fresh walls, paired by wall."""
    a = seat0_per_wall(lineup(rules, candidate(params), field), 0, spec.fresh_walls, spec.fresh)
    if params == DEFAULTS:
        b = a
    else:
        b = seat0_per_wall(lineup(rules, candidate(DEFAULTS), field), 0, spec.fresh_walls, spec.fresh)
    d = a - b
    return Gain(float(a.mean()), float(b.mean()), float(d.mean()), float(d.std(ddof=1) / math.sqrt(d.size)),
                d.size, spec.fresh)


def _r(x: float) -> float:
    return float(round(x, 6))


def tuned_document(settings: dict, spec: TuneSpec, best: dict[str, float], search: dict, g: Gain,
                   fingerprint: Callable[[dict[str, float]], dict]) -> dict:
    """The tuned-parameters file (plain data, fixed key order; nothing time-dependent). ``fingerprint(params)``:
    the play fingerprint of the weights kept (:func:`simulator.run.tuned.fingerprint_record`)."""
    keep = g.significant
    params = {k: _r(best[k] if keep else DEFAULTS[k]) for k in TUNABLE}
    return {
        TUNED_KEY: params,
        "verdict": ("tuned: the gain on fresh walls is above noise (95% interval above 0)" if keep else
                    "defaults kept: the gain on fresh walls is within noise (95% interval reaches 0)"),
        "searched": {k: _r(best[k]) for k in TUNABLE},
        "fresh": {"gain": _r(g.gain), "se": _r(g.se), "ci95": [_r(g.ci[0]), _r(g.ci[1])], "walls": g.walls,
                  "player_hands": 4 * g.walls, "seed": g.seed, "searched_ev": _r(g.winner),
                  "default_ev": _r(g.default),
                  "unit": "base units per player-hand, searched - default expert against the field, paired by wall"},
        "search": {"budget": spec.budget, **search, "walls": spec.walls, "blocks": spec.blocks, "seed": spec.seed,
                   "sampler": "TPE (seeded per trial)", "pruner": "successive halving over wall blocks"},
        "rules": {"name": settings["rules"], "set": settings["set"], "digest": settings["rules_digest"]},
        "field": settings["field"],
        "fingerprint": fingerprint(params),
        "format": FORMAT,
    }


@dataclass(frozen=True)
class TuneResult:
    path: Path
    document: dict
    best_search_score: float  # optimistic: the best of many scores on the search walls (never the gain)
    trials_run: int           # trials run by this call (0 when the study had reached the budget)
    cpu_seconds: float


Progress = Callable[[int, int, str], None]  # (trials finished, budget, text)


def tune(rules: RuleSet, overrides: list[str] | None, field_text: str | None, spec: TuneSpec, out_dir: Path,
         name: str | None = None, progress: Progress | None = None) -> TuneResult:
    """Search (resuming ``out_dir/NAME.db``), re-measure on fresh walls, write ``out_dir/NAME.yaml``."""
    optuna = require_optuna()
    spec.check()
    cpu0 = time.process_time()
    field = parse_field(field_text)
    lineup(rules, {"bot": "expert"}, field)  # a bad field fails here, before anything is written
    name = name or rules.name
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.+-]*", name):
        raise TuneError(f"--name {name[:60]!r}: a file name stem (letters, digits, _ . + -), not a path")
    settings = settings_record(rules, overrides, field, spec)
    out_dir.mkdir(parents=True, exist_ok=True)
    # after blocks 2 and 3 a trial goes on only if it is in the top half of the finished trials at that point
    pruner = finished_only(optuna, optuna.pruners.SuccessiveHalvingPruner(min_resource=1, reduction_factor=2,
                                                                           min_early_stopping_rate=0))
    study = open_study(optuna, out_dir / f"{name}.db", name, settings, pruner)
    size = spec.walls // spec.blocks
    starts = [b * size for b in range(spec.blocks)]
    sizes = [size] * (spec.blocks - 1) + [spec.walls - starts[-1]]

    def objective(trial: Any) -> float:
        params = {k: trial.suggest_float(k, lo, hi, step=step) for k, (lo, hi, step) in TUNABLE.items()}
        r = lineup(rules, candidate(params), field)
        total = 0.0
        for b, (first, n) in enumerate(zip(starts, sizes, strict=True)):
            total += float(seat0_per_wall(r, first, n, spec.seed).sum())
            trial.report(total / (first + n), b)
            if b + 1 < spec.blocks and trial.should_prune():
                raise optuna.TrialPruned()
        return total / spec.walls

    ran = 0
    while len(done := finished_trials(optuna, study)) < spec.budget:
        best = max((t.value for t in done if t.value is not None), default=float("nan"))
        if progress:
            progress(len(done), spec.budget, f"best on the search walls so far {best:+.3f}")
        # re-seeded from (seed, trials finished): a resumed search proposes what an uninterrupted one would
        if not done and not study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.WAITING,)):
            study.enqueue_trial(dict(DEFAULTS))  # the first trial: the defaults (their score on these walls)
        study.sampler = optuna.samplers.TPESampler(seed=spec.seed * 100_003 + len(done),
                                                   n_startup_trials=min(8, max(2, spec.budget // 3)))
        study.optimize(objective, n_trials=1, catch=())
        ran += 1
    done = finished_trials(optuna, study)[:spec.budget]
    if progress:
        progress(len(done), spec.budget, "re-measuring the winner on fresh walls")
    complete = [(i, t) for i, t in enumerate(done) if t.state == optuna.trial.TrialState.COMPLETE]
    best_index, top = max(complete, key=lambda it: (it[1].value, -it[0]))  # counted over finished trials only
    best = {k: float(top.params[k]) for k in TUNABLE}
    g = fresh_gain(rules, field, best, spec)
    search = {"trials": len(done), "complete": len(complete), "pruned": len(done) - len(complete),
              "best_trial": best_index}
    doc = tuned_document(settings, spec, best, search, g, lambda params: fingerprint_record(rules, params, field))
    path = out_dir / f"{name}.yaml"
    command = " ".join([settings["rules"], *(f"--set {x}" for x in settings["set"])])
    header = (f"# xuezhan tune {command}: the expert's parameters for this rule set.\n"
              "# Use in a seat: {bot: expert, params_from: <this file>}\n")
    atomic_write(path, (header + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=1000,
                                                         default_flow_style=None)).encode())
    return TuneResult(path, doc, float(top.value), ran, time.process_time() - cpu0)


def rich_progress(quiet: bool) -> tuple[Any, Progress | None]:
    """A context manager and callback drawing a rich bar of trials on stderr (``nullcontext``/None if quiet)."""
    if quiet:
        return nullcontext(), None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("trials"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   TextColumn("{task.description}"), console=Console(stderr=True))
    task = bar.add_task("", total=None)

    def update(done: int, budget: int, text: str) -> None:
        bar.update(task, completed=done, total=budget, description=text)

    return bar, update
