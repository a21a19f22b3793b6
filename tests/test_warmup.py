"""The cold start's compile plan (simulator.hands.precompile, simulator.hands.warmup): what the warm-up compiles, for
which types, and that the engine loads it rather than compiling again; the compile notice users see.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import njit

from simulator import engine, numba_cache
from simulator.hands import play_hands, precompile
from simulator.rules import load_rules


def test_warm_up_announces_a_cold_compile_and_is_silent_when_warm(monkeypatch, caplog):
    from simulator.hands import warmup

    calls = []
    monkeypatch.setattr(warmup, "_run_once", lambda engine, tables, simple: calls.append(1))
    monkeypatch.setattr(warmup, "_warm", set())
    monkeypatch.setattr(warmup, "cache_is_warm", lambda lineup: True)
    assert warmup.warm_up(progress=True) == 0.0 and not calls
    assert caplog.records == []
    monkeypatch.setattr(warmup, "cache_is_warm", lambda lineup: False)
    warmup.warm_up(progress=True)
    assert calls == [1]
    assert [(r.name, r.levelname) for r in caplog.records] == [("xuezhan.compile", "WARNING")] * 2
    assert "one time, cached in" in caplog.text and str(warmup.cache_location()) in caplog.text
    warmup.warm_up(progress=True)  # once per process
    assert calls == [1]


COLD = ("import logging, sys; from simulator.hands import warmup; warmup._run_once = lambda *a: None; "
        "warmup.cache_is_warm = lambda lineup: False; {setup}; warmup.warm_up(progress=False)")


@pytest.mark.parametrize(("setup", "shown"), [("pass", True), ("logging.getLogger('xuezhan').setLevel(logging.ERROR)",
                                                                False)])
def test_the_compile_notice_shows_unconfigured_and_is_silenced_by_logging(setup, shown):
    """A library logs (issue 52): with no logging set up the notice reaches stderr (a silent minute looks hung);
    a notebook or an RL program silences or captures it as any library's log."""
    proc = subprocess.run([sys.executable, "-c", COLD.format(setup=setup)], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert ("compiling the engine (one time" in proc.stderr) is shown, proc.stderr
    assert ("compiled in" in proc.stderr) is shown and proc.stdout == ""


def test_the_cli_prints_the_librarys_log_as_plain_lines(capsys):
    import logging

    from simulator import cli

    cli._log_to_stderr()
    cli._log_to_stderr()  # once per process, however often main runs
    logging.getLogger("xuezhan.compile").warning("compiling the engine (one time, cached in %s) …", "/cache")
    assert capsys.readouterr().err == "compiling the engine (one time, cached in /cache) …\n"


def test_an_rl_environment_announces_a_cold_step_compile(monkeypatch, caplog):
    """The PettingZoo/Gymnasium path says it is compiling before a cold first hand (minutes of silence before)."""
    import types

    pytest.importorskip("pettingzoo")
    from simulator.agents.env import XuezhanEnv
    from simulator.hands import game

    monkeypatch.setattr(game.precompile, "step_plan", lambda: (types.SimpleNamespace(signatures=[]), ()))
    monkeypatch.setattr(game.numba_cache, "is_cached", lambda *a: False)
    monkeypatch.setattr(game.precompile, "pin_signatures", lambda **kw: None)
    XuezhanEnv("chengdu")
    assert [(r.name, r.levelname) for r in caplog.records] == [("xuezhan.compile", "WARNING")]
    assert "compiling the engine's step path" in caplog.text


def test_cache_is_warm_after_a_batch(tmp_path, monkeypatch):
    from simulator.hands import warmup
    from simulator.kernel import tables

    play_hands(load_rules("chengdu"), np.arange(2), 0)
    assert warmup.cache_is_warm()
    monkeypatch.setenv("XUEZHAN_CACHE", str(tmp_path))  # no suit table there: not warm
    assert not tables.table_path().is_file() and not warmup.cache_is_warm()


@pytest.mark.parametrize("simple", [True, False])
def test_the_warm_up_cached_every_planned_signature(simple):
    """The warm-up compiles the loop's callees ahead of it, for types read off the real allocations by argument
    name (simulator.hands.precompile), into the disk cache: after the session's warm-up (tests/conftest.py) and a
    batch, each planned function's cache holds its planned copy. (Whether the loop calls exactly those types is
    the next test's, which does not depend on what else the cache holds.)"""
    types = precompile.arg_types(True)
    planned = [*precompile.side_plan(simple), *precompile.core_plan(simple),
               *((fn, precompile.signature(fn, types)) for fn in precompile.PINNED)]
    seats = ["greedy"] * 4 if simple else ["expert", "value", "defensive", "greedy"]
    play_hands(load_rules("chengdu", {"seats": seats}), np.arange(8), 0, record=True)
    for fn, sig in planned:
        if fn.targetoptions.get("inline") == "always":
            # planned only so that its callees get compiled: the loop inlines it and never loads a copy of its own
            # (a cache warmed by an ordinary run rather than the warm-up has none)
            continue
        assert tuple(sig) in numba_cache.cached_signatures(fn), fn.py_func.__name__


@pytest.mark.slow
@pytest.mark.parametrize("lineup", ["simple", "full"])
def test_the_loop_calls_every_planned_function_with_exactly_its_planned_types(lineup):
    """A planned signature that does not match the loop's call, or a constant argument that numba types as a
    literal, makes the loop compile a second copy on a cold start (slow, not wrong). tests/signature_probe.py
    types the whole loop from the batch down with numba's type inference only — in a child process that reads
    the disk cache and never writes it, so the answer depends on the code, not on what the cache holds (a
    stray copy compiled there by a script or another test changes nothing) — and lists every planned function
    called with other types. One line-up per test: the two probes run in parallel under pytest-xdist."""
    probe = Path(__file__).with_name("signature_probe.py")
    done = subprocess.run([sys.executable, str(probe), lineup], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    found = [json.loads(line) for line in done.stdout.splitlines()]
    assert [f["lineup"] for f in found] == [lineup]
    for f in found:
        assert f["typed"] > 100, f  # the whole loop was followed, not just the batch
        assert f["mismatch"] == {}, f
        # one compiled copy per function: a literal constant argument (a call like ``f(x, 0)``) makes numba compile
        # the callee and everything below it again (the expert's discard_values was compiled 4 times, ~5 s of a
        # cold start). Only these small helpers keep a second signature (flag constants, ±1, int/float amounts).
        extra = {name: n for name, n in f["copies"].items() if name.rsplit(".", 1)[1] not in SMALL_HELPERS}
        assert extra == {}, f"compiled more than once per line-up: {extra}"


SMALL_HELPERS = {"_has", "own_ckongs", "points_of", "kong_value", "unseen_of"}


def test_a_greedy_line_up_compiles_no_parameterised_bot():
    """Line-ups of random and greedy seats pass ``None`` parameter rows, so numba prunes the value, defensive
    and expert bots from that copy of the engine (they are most of a cold start's compile time)."""
    from numba.core import types

    from simulator import bots, engine
    from simulator.hands import warmup

    assert warmup.lineup_of(load_rules("chengdu")) == "simple"
    assert warmup.lineup_of(load_rules("chengdu", {"seats": ["greedy", "greedy", "expert", "random"]})) == "full"
    assert engine.lineup_params(np.array([0, 1, 1, 0]), np.zeros((4, 8), np.int64)) == (None, (None,) * 4)
    sigs = {fn.py_func.__name__: sig for fn, sig in (*precompile.side_plan(True), *precompile.core_plan(True))}
    for param, like in ((bots.param_discard, "bot_discard"), (bots.param_claim, "bot_claim"),
                        (bots.param_self_kong, "bot_self_kong")):
        sig = sigs[like]
        assert sig[2] == types.none  # (game, st, bpar, ...)
        fresh = njit(param.py_func)  # not from the disk cache, so that the typed calls can be inspected
        fresh.compile(sig)  # typing the bots' branches with a None row would fail: they must be pruned
        called = " ".join(str(t) for t in fresh.overloads[sig].fndesc.calltypes.values())
        assert not any(b in called for b in ("expert", "value", "defensive")), called
    play_hands(load_rules("chengdu"), np.arange(2), 0)
    assert warmup.cache_is_warm("simple")


@pytest.mark.parametrize("simple", [True, False])
def test_the_warm_up_compiles_the_parameter_types_the_loop_passes(simple):
    """The second warm-up process compiles the setup steps and the bots for the line-up's parameter types; a
    wrong type there compiles a useless copy (for simple line-ups: with every parameterised bot) and leaves the
    real one to the loop."""
    from numba import typeof

    from simulator.rules import BOT_INDEX

    seats = ["greedy", "random", "greedy", "greedy" if simple else "expert"]
    ids = np.array([BOT_INDEX[b] for b in seats])
    _, rows = engine.lineup_params(ids, np.zeros((4, 8), np.int64))
    sigs = {fn.py_func.__name__: sig for fn, sig in precompile.side_plan(simple)}
    assert sigs["declare_voids"][2] == typeof(rows)  # (game, st, bpar)
    # (game, st, bpar, seat, void, legal): the loop inlines bot_discard; a full copy compiles its call param_discard
    assert sigs["bot_discard" if simple else "param_discard"][2] == typeof(rows[0])


def test_play_hands_from_python_announces_a_cold_compile(monkeypatch, caplog):
    """A notebook's first xuezhan.play_hands on a cold cache says it is compiling (as simulate does)."""
    from simulator.hands import warmup

    calls = []
    monkeypatch.setattr(warmup, "_run_once", lambda engine, tables, simple: calls.append(simple))
    monkeypatch.setattr(warmup, "_warm", set())
    monkeypatch.setattr(warmup, "cache_is_warm", lambda lineup: False)
    warmup.play_hands(load_rules("chengdu", {"seats": ["expert"] * 4}), np.arange(2), 0)  # xuezhan.play_hands
    assert calls == [False]  # the full copy, which this line-up needs
    assert "compiling the engine (one time" in caplog.text


def test_the_compile_plan_types_scalars_by_their_annotations():
    """The warm-up's plan reads a scalar argument's type off its annotation (``seat: int``, ``drew: bool``) and an
    array's or record's off the real allocation of that name; an argument with neither is an error that names it,
    not a guess (a wrong guess compiles a useless copy and leaves the real one to the loop)."""
    from numba import njit
    from numba.core import types

    def f(st, seat: int, drew: bool):
        return seat

    def g(st, seat: int, kind):
        return seat

    plan_types = precompile.arg_types(True)
    assert precompile.signature(njit(f), plan_types) == (plan_types["st"], types.int64, types.boolean)
    with pytest.raises(TypeError, match="argument 'kind' has no known type"):
        precompile.signature(njit(g), plan_types)
