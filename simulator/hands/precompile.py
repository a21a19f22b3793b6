"""What a cold warm-up compiles, and in which of its two processes (see :mod:`simulator.hands.warmup`).

numba compiles a function on its first call, for the types of that call. A cold start would compile the whole
engine in one process, one function after another, with the hand loop last. :mod:`simulator.hands.warmup` splits it
over two processes instead: each compiles one half of the loop's callees, for the exact argument types the loop
passes, into the disk cache; then the parent compiles the batch itself, which loads those halves from the cache.

The engine's functions name their arguments consistently (``table``, ``params``, ``g``, ``ps``, ``conc`` …), so
the argument types are read, by parameter name, off the arrays the batch really allocates
(:func:`arg_types`): a signature cannot drift from the loop's calls without a test noticing
(tests/test_warmup.py). The bots' dispatchers take one seat's slices under the same names (:func:`_bots`).
"""

from __future__ import annotations

import inspect

import numpy as np
from numba import typeof
from numba import types as nt

from simulator import engine, numba_cache
from simulator.bots import (
    bot_claim,
    bot_discard,
    bot_self_kong,
    bot_void,
    param_claim,
    param_discard,
    param_self_kong,
)
from simulator.kernel import settlement, state
from simulator.kernel.state import BOOL, I64, N_SEATS
from simulator.logs import records
from simulator.rules import BOT_INDEX, N_BOT_PARAMS, N_PARAMS

# A scalar argument says its type in its function's signature (``seat: int``, ``self_draw: bool``; numba ignores
# annotations): int is numba's int64 and bool its boolean, as the loop passes them. Everything else is a record or
# an array, typed by name in :func:`arg_types`.
_SCALARS = {int: I64, bool: BOOL, "int": I64, "bool": BOOL}


def _lineup(simple: bool):
    """:func:`simulator.engine.lineup_params` of a simple line-up or a full one: ``(bot_par, bpar)``."""
    bot = BOT_INDEX["greedy" if simple else "expert"]
    return engine.lineup_params(np.full(N_SEATS, bot), np.zeros((N_SEATS, N_BOT_PARAMS), np.int64))


def arg_types(simple: bool) -> dict:
    """numba type of every engine argument name, as the batch path of :func:`simulator.engine.play` passes it for a
    simple line-up (``None`` parameter rows) or a full one (see :func:`simulator.engine.lineup_params`)."""
    one = np.zeros(1, np.int64)
    table, params = np.zeros((1, 10), np.uint8), np.zeros(N_PARAMS, np.int64)
    bot_par, bpar = _lineup(simple)
    arrays = dict(st=engine.alloc.py_func(True), table=table, params=params, io=engine.alloc_io.py_func(),
                  game=state.Game(table, params, np.zeros(N_SEATS, np.int64), engine.alloc_io.py_func()),
                  bpar=bpar, bot_par=bot_par,
                  # the batch's own (run_batch)
                  bot_ids=np.zeros(N_SEATS, np.int64), bots=np.zeros(N_SEATS, np.int64),
                  out=engine.batch_out(engine.empty_raw(one, one, one)),
                  deals=state.Deals(np.zeros(1, np.uint64), np.zeros(1, np.uint64), one, one))
    arrays["batch"] = state.Batch(arrays["bot_ids"], bot_par, arrays["deals"], True, arrays["out"])
    types = {name: typeof(a) for name, a in arrays.items()}
    types.update({f: typeof(getattr(arrays["st"], f)) for f in ("events", "g")})  # state._append_event's arrays
    types.update(wall_seed=nt.uint64, bot_seed=nt.uint64, res=state.WIN_RESULT, win=state.WIN_AT)
    return types


def signature(fn, types: dict) -> tuple:
    """The argument types of engine function ``fn`` (a numba dispatcher): a scalar's from its annotation
    (:data:`_SCALARS`), a record's or an array's from ``types`` by the parameter's name."""
    sig = []
    for name, par in inspect.signature(fn.py_func).parameters.items():
        if par.annotation in _SCALARS:
            sig.append(_SCALARS[par.annotation])
        elif name in types:
            sig.append(types[name])
        else:
            raise TypeError(f"{fn.py_func.__module__}.{fn.py_func.__name__}: argument {name!r} has no known type "
                            f"(annotate a scalar as int or bool, or name it as the records' field)")
    return tuple(sig)


# The bots' dispatchers (simulator.bots) take the engine's records (``game``, ``st``), the seat's parameter row
# ``bpar`` (one row of the engine's) and the decision's scalars.
def _bots(fns, simple: bool):
    """``(function, argument types)`` of the bots' dispatchers ``fns``, by their parameters' names."""
    types = arg_types(simple)
    types["bpar"] = typeof(_lineup(simple)[1][0])  # a seat's row of the engine's (None in a simple line-up)
    return tuple((fn, signature(fn, types)) for fn in fns)


def _side_bots(simple: bool):
    """The second process's bots: the 定缺 choice (the expert's, most of the expert's code), then the per-turn
    decisions. The loop inlines ``bot_discard``/``bot_self_kong``, so in the full copy their ordinary-call callees
    (``param_*``) are what gets compiled and cached; a simple copy has no ``param_*`` (pruned) and compiles the
    dispatchers themselves, which compiles the greedy and random bots they call."""
    return _bots((bot_void, bot_discard, bot_self_kong) if simple else (bot_void, param_discard),
                 simple)


def _core_bots(simple: bool):
    """The parent's bot: the claim decision (the expert's reuses the hand values the second process has cached by
    the time the parent reaches it)."""
    return _bots((bot_claim,) if simple else (param_claim, param_self_kong), simple)


# The two halves, in compile order. The parent pins (:data:`PINNED`: settlement and hand evaluation, which both halves
# call) first, then the own turn's and the discard turn's callees (self-draw settlement, kongs, the deal, 换三张,
# ``takes_win``, the kong itself) and the claim and kong decisions; the second process meanwhile compiles the 定缺
# choice and the discard decision (in the full copy most of the expert: its hand values, which the parent's claim and
# kong decisions then load from the cache) and the 定缺 step, then loads the pinned functions the parent has cached by
# then and compiles the end of the hand. It then tells the parent (:data:`READY` on its stdout), which compiles the
# batch (:func:`precompile_batch`: ``engine.play``, the batch's loop over hands and the hand's loop over turns in one
# function, both turns inlined into it) while the second process compiles what runs outside the batch: the log columns
# and the seeds (simulator.logs.records, simulator.kernel.rng). The measured times of each step (benchmarks/engine.py
# --compile --warm-up) are in docs/internals.md, "Inlined turns" and "The batch and the hand loop as one function".
_SIDE_FIRST = (engine.declare_voids,)
_SIDE_THEN = (engine.finish,)
_CORE = (engine.settle_self_draw, engine.alloc, engine.locked_kongs, engine.locked_kong_options,
         engine.start_hand, engine.seat_hand, engine.end_hand, engine.offer_declare, engine.alloc_io,
         engine.exchange_three, engine.takes_win, engine.kong_turn)
READY = "precompile: the loop's callees are cached"


def _plan(fns, simple: bool):
    types = arg_types(simple)
    return tuple((fn, signature(fn, types)) for fn in fns)


def side_plan(simple: bool = True):
    """``(function, argument types)`` the second process compiles, in order (:func:`pin_signatures` comes before
    the last, the end of the hand): its bots, the 定缺 step, the end of the hand."""
    return (*_side_bots(simple), *_plan(_SIDE_FIRST, simple), *_plan(_SIDE_THEN, simple))


def core_plan(simple: bool = True):
    """``(function, argument types)`` the parent compiles meanwhile, after :func:`pin_signatures`: the turns'
    callees, then the claim and kong decisions."""
    return (*_plan(_CORE, simple), *_core_bots(simple))


# Functions the loop calls with module constants (numba types a constant argument as a literal and would compile
# one copy per distinct constant): compiled once for int64 arguments and frozen, so that those calls convert.
# The first three are cheap and need no evaluation: the second process pins them before anything else.
PINNED = (state._append_event, state.pay, state.ask, engine.keeps_waits, engine.play_on, settlement.kong_payment,
          settlement.return_kong, engine.record_win, engine.settle_ron)


def _compile(entries, freeze: bool = False) -> None:
    for fn, sig in entries:
        if sig not in fn.signatures:
            fn.compile(sig)
        if freeze:
            fn.disable_compile()


def pin_signatures(first: int | None = None, *, unless_cached=None) -> None:
    """Compile and freeze :data:`PINNED` (the first ``first`` of them) before the loop is compiled. With
    ``unless_cached=(dispatcher, argument types)`` (e.g. :func:`step_plan`): only if that top-level function's copy
    is not in the disk cache yet, since a cached copy embeds its callees already."""
    if unless_cached is not None:
        top, sig = unless_cached
        if top.signatures or numba_cache.is_cached(top, sig):
            return
    types = arg_types(True)  # none of these takes the bots' parameter rows
    _compile(((fn, signature(fn, types)) for fn in PINNED[:first]), freeze=True)


def precompile_core(simple: bool = True) -> None:
    """The parent's share of a cold warm-up before the batch: the pinned functions and :func:`core_plan`."""
    pin_signatures()
    _compile(core_plan(simple))


def batch_plan(simple: bool = True):
    """``(function, argument types)`` of the batch itself (the batch path of :func:`simulator.engine.play`, as
    run_batch calls it: no snapshot, a :class:`~simulator.kernel.state.Batch`), which the parent compiles once both
    halves are cached."""
    types = arg_types(simple)
    return ((engine.play, signature(engine.play, {**types, "snap": nt.none})),)


def step_plan():
    """``(function, argument types)`` of the step path's hand loop (:func:`simulator.engine.play` as
    :class:`simulator.hands.game.Hand` calls it: the engine's parameter rows, a snapshot to roll back to, no batch)."""
    types = arg_types(False)
    return engine.play, signature(engine.play, {**types, "snap": types["st"], "batch": nt.none})


def precompile_batch(simple: bool = True) -> None:
    _compile(batch_plan(simple))


def precompile_step() -> None:
    """Compile (or load) the step path's hand loop (:func:`step_plan`) as :class:`simulator.hands.game.Hand` first
    runs it: the pinned functions unless its copy is cached, then that copy. After the full line-up's warm-up its
    callees are cached, so this compiles the loop itself only (tests/conftest.py runs it before the tests)."""
    plan = step_plan()
    pin_signatures(unless_cached=plan)
    _compile([plan])


def precompile_side(simple: bool = True) -> None:
    """The second process of a cold warm-up: :func:`side_plan`, then (after printing :data:`READY`, the parent's
    cue to compile the batch) the log columns' formatting and the seeds, which run outside the batch."""
    plan = side_plan(simple)
    first = len(plan) - len(_SIDE_THEN)
    pin_signatures(3)
    _compile(plan[:first])
    pin_signatures()  # cached by the parent by now: loaded, not compiled again
    _compile(plan[first:])
    print(READY, flush=True)
    _log_columns()
    engine.deal_seeds(0, np.zeros(1, np.int64))


def _log_columns() -> None:
    """Compile the log columns' string formatting (simulator.logs.records), on a blank hand. Two win rows, not one: a
    column of a one-row array is contiguous, so numba would type it (and compile the formatting) differently from
    the real tables' strided columns."""
    raw = engine.empty_raw(*(np.zeros(1, np.int64),) * 3)
    engine.trim_raw(raw, 2)
    raw.events = np.zeros((2, 1 + state.EV_W), np.int32)
    records.to_columns(raw)
    records.event_columns(raw)
