"""The bots at the table: one seat's bot and its parameters (:class:`BotSpec`), a Python bot's class by name
(:func:`bot_class`), and the expert's tuned parameters read from a file written by ``xuezhan tune``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import numpy as np
from pydantic import Field, ValidationInfo, create_model, field_validator, model_serializer, model_validator

from simulator.errors import did_you_mean
from simulator.rules import bot_table
from simulator.rules.blocks import FrozenModel
from simulator.rules.load import CONFIG_DIR, RulesError, read_yaml_mapping, shorten
from simulator.rules.vocab import BOT_ENTRY_POINTS, BOT_INDEX, BOTS

PARAMS = bot_table.all_params()  # every compiled bot's parameters by name: the seat's fields
# the expert's parameters `xuezhan tune` searches, (low, high, step) from the bot table (`temperature` stays as the
# seat sets it: noise, not skill)
TUNABLE: dict[str, tuple[float, float, float]] = {p.name: p.tune for p in PARAMS.values() if p.tune}
RECORDED = "recorded"  # validation context key: a rule set read back from logs (simulator.rules.validate)
TUNED_KEY = "params"  # the mapping of TUNABLE values in a file written by `xuezhan tune` (simulator.run.tune)


def resolve_tuned_path(ref: str | Path) -> Path:
    """A tuned-parameters file: a path, else relative to configs/ (``tuned/xueliu.yaml``); RulesError if neither."""
    for candidate in (Path(ref), CONFIG_DIR / ref):
        if candidate.is_file():
            return candidate
    raise RulesError(f"params_from {str(ref)!r}: no such file (looked for it as a path and under configs/)")


def read_tuned(ref: str | Path) -> dict[str, float]:
    """The tuned expert parameters of a file written by ``xuezhan tune`` (its ``params`` mapping, a subset of
    ``TUNABLE``, each a number in that key's range); one-line RulesError otherwise."""
    path = resolve_tuned_path(ref)
    data = read_yaml_mapping(path, "a tuned-parameters file")
    params = data.get(TUNED_KEY)
    if not isinstance(params, dict) or not params:
        raise RulesError(f"{path}: not a tuned-parameters file (no `{TUNED_KEY}:` mapping of "
                         f"{', '.join(TUNABLE)}; `xuezhan tune` writes them)")
    out = {}
    for key, val in params.items():
        if key not in TUNABLE:
            raise RulesError(f"{path}: {TUNED_KEY}.{key}: unknown key (tuned keys: {', '.join(TUNABLE)})")
        if isinstance(val, bool) or not isinstance(val, int | float) or not val == val:
            raise RulesError(f"{path}: {TUNED_KEY}.{key}: expected a number, got {shorten(repr(val))}")
        lo, hi, _ = TUNABLE[key]
        if not lo <= val <= hi:
            raise RulesError(f"{path}: {TUNED_KEY}.{key}: {val} is outside the tuned range [{lo}, {hi}]")
        out[key] = float(val)
    return out


class _Seat(FrozenModel):
    """One seat's bot and its parameters (unused parameters are ignored by bots that have none).

    ``bot`` is a compiled bot (``BOTS``), a Python bot class ``package.module:ClassName`` or the name of one
    registered under the ``xuezhan.bots`` entry-point group; ``params`` are the keyword arguments it is built with
    (Python bots only). See docs/bots.md. The compiled bots' parameters (each a field of this model: name, range,
    default, doc) are declared in :mod:`simulator.rules.bot_table`.

    ``params_from`` (expert): a tuned-parameters file written by ``xuezhan tune`` (a path, else relative to
    configs/, e.g. ``tuned/xueliu.yaml``); its ``params`` (the ``TUNABLE`` keys) fill the keys the seat does not
    give itself (a key written in the seat wins). The path stays in the rule set (manifests, report), the values
    too, so a recorded rule set re-validates without the file.
    """

    @model_validator(mode="before")
    @classmethod
    def _fill_params_from(cls, data: Any) -> Any:
        if not isinstance(data, dict) or data.get("params_from") is None or not isinstance(data["params_from"], str):
            return data  # no file, or a wrong type that pydantic reports on the key
        if data.get("bot") != "expert":
            raise ValueError(f"params_from is for the expert (the parameters `xuezhan tune` searches), not for "
                             f"bot {data.get('bot', 'greedy')!r}")
        missing = [k for k in TUNABLE if k not in data]
        if not missing:  # every tuned key given (e.g. a recorded rule set): the file adds nothing
            return data
        tuned = read_tuned(data["params_from"])
        return {**{k: tuned[k] for k in missing if k in tuned}, **data}

    @field_validator("bot")
    @classmethod
    def _known_bot(cls, v: str, info: ValidationInfo) -> str:
        if v not in BOT_INDEX and not _recorded(info):
            bot_class(v)  # importable, a class: checked when the rules are loaded, not in a worker
        return v

    @model_validator(mode="after")
    def _params_fit(self, info: ValidationInfo) -> _Seat:
        if self.params is not None:
            if self.bot in BOT_INDEX:
                raise ValueError(f"params are for Python bots; {self.bot!r} takes {', '.join(PARAMS)}")
            if _recorded(info):
                return self
            import inspect

            try:
                inspect.signature(bot_class(self.bot)).bind(**self.params)
            except TypeError as e:
                raise ValueError(f"bot {self.bot!r}: params do not fit its constructor: {e}") from None
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: Any) -> dict[str, Any]:
        # no params key for seats without params: the digests and manifests of existing configs stay the same
        data = handler(self)
        if self.params is None:
            data.pop("params", None)
        if self.params_from is None:
            data.pop("params_from", None)
        own = {p.name for p in bot_table.BY_NAME[self.bot].params} if self.bot in bot_table.BY_NAME else set()
        for name in PARAMS:  # a later bot's parameter: written for its own seats only (the flat ones always)
            if name not in bot_table.FLAT_PARAMS and name not in own:
                data.pop(name, None)
        return data

    @property
    def is_python(self) -> bool:
        return self.bot not in BOT_INDEX

    def build(self) -> Any:
        """A new instance of this seat's Python bot."""
        return bot_class(self.bot)(**(self.params or {}))

    bot: str = "greedy"
    params: dict[str, Any] | None = None
    params_from: str | None = None
    def to_row(self) -> np.ndarray:
        """The seat's parameter row for the compiled engine: its bot's parameters (simulator.rules.bot_table.row)."""
        return np.array(bot_table.row(self.bot, {n: getattr(self, n) for n in PARAMS}), dtype=np.int64)


def _field(p: bot_table.Param) -> tuple[Any, Any]:
    """A bot parameter of the bot table as a pydantic field: type, bounds, default, description."""
    kind = int if p.kind == "int" else float
    return Annotated[kind, Field(ge=p.low, le=p.high, description=p.doc)], p.default


_SeatParams = create_model("_SeatParams", __base__=_Seat, __module__=__name__,
                           **{name: _field(p) for name, p in PARAMS.items()})


class BotSpec(_SeatParams):  # type: ignore[valid-type,misc]  # (its fields come from the bot table)
    __doc__ = _Seat.__doc__


def _recorded(info: ValidationInfo) -> bool:
    """Whether the rule set being validated was read back from logs (a manifest): a Python bot's seat is then a
    name and its parameters, never imported — reading logs must not execute code they name."""
    return bool(info.context and info.context.get(RECORDED))


def bot_class(name: str) -> type:
    """The Python bot class ``package.module:ClassName`` or registered as ``name`` in the ``xuezhan.bots``
    entry-point group; a ValueError naming the problem otherwise."""
    import importlib
    from importlib.metadata import entry_points

    if ":" in name:
        mod, _, attr = name.partition(":")
        try:
            obj: Any = importlib.import_module(mod)
            for part in attr.split("."):
                obj = getattr(obj, part)
        except (ImportError, AttributeError) as e:
            hint = ""
            if isinstance(e, ModuleNotFoundError) and e.name == mod.split(".")[0]:
                hint = (f"; {mod.split('.')[0]} must be importable: run from its directory (the xuezhan command "
                        "looks there), or add that directory to PYTHONPATH or sys.path")
            raise ValueError(f"cannot load bot {name!r}: {e}{hint}") from None
    else:
        eps = [ep for ep in entry_points(group=BOT_ENTRY_POINTS) if ep.name == name]
        if not eps:
            raise ValueError(f"unknown bot {name!r}{did_you_mean(name, BOTS)}: not one of {', '.join(BOTS)}, not a "
                             "'package.module:Class'"
                             f" path and not registered under the {BOT_ENTRY_POINTS!r} entry points")
        try:
            obj = eps[0].load()
        except Exception as e:  # noqa: BLE001 - a broken plug-in is the user's input error, reported in one line
            raise ValueError(f"cannot load bot {name!r} ({eps[0].value}): {e}") from None
    if not isinstance(obj, type) or not callable(getattr(obj, "act", None)):
        raise ValueError(f"bot {name!r} is not a class with an act(obs) method")
    return obj
