"""The argument types the hand loop really passes to each compiled engine function, found by numba's type
inference alone (no machine code is generated, nothing is written to the disk cache), so the answer does not
depend on what the cache holds — only on the code. Run as a script (tests/test_warmup.py does, in a child):

    python tests/signature_probe.py simple full

prints one JSON line per line-up: ``{"lineup", "typed", "mismatch": {function: [types the loop passes, ...]},
"copies": {function: n}}``: every function of the warm-up's plan (simulator.hands.precompile) called with types other
than the planned ones, and every function the loop reaches with more than one signature (numba compiles one copy
per signature: a literal constant argument, typed ``Literal[int](0)``, costs a whole extra copy).

Typing starts at the batch (``engine.play`` with the batch plan's types) and follows every call into the
package's compiled functions, each typed for the types its caller passes (``inline="always"`` callees are
inlined into their callers first, as in a real compile). Callees' own copies are loaded from the cache where
they are there (or compiled in memory: slower, same answer).
"""

from __future__ import annotations

import json
import sys

from numba import njit
from numba import types as nt
from numba.core import caching
from numba.core.compiler import CompilerBase, DefaultPassBuilder
from numba.core.compiler_machinery import FunctionPass, register_pass
from numba.core.typed_passes import NopythonTypeInference


class _Typed(Exception):
    def __init__(self, calltypes, typemap):
        super().__init__("typed")
        self.calltypes, self.typemap = calltypes, typemap


@register_pass(mutates_CFG=False, analysis_only=True)
class _StopAfterTyping(FunctionPass):
    _name = "xuezhan_stop_after_typing"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        raise _Typed(state.calltypes, state.typemap)


class _TypingOnly(CompilerBase):
    """numba's nopython pipeline up to type inference, then stop (no lowering, no cache)."""

    def define_pipelines(self):
        pm = DefaultPassBuilder.define_nopython_pipeline(self.state)
        pm.add_pass_after(_StopAfterTyping, NopythonTypeInference)
        pm.finalize()
        return [pm]


def calls(fn, sig: tuple) -> list[tuple]:
    """``(dispatcher, argument types)`` of every call to a compiled function in ``fn``'s body typed for ``sig``."""
    probe = njit(pipeline_class=_TypingOnly)(fn.py_func)
    try:
        probe.compile(sig)
    except _Typed as typed:
        out = []
        for expr, s in typed.calltypes.items():
            if getattr(expr, "op", None) == "call":
                ft = typed.typemap.get(expr.func.name)
                if isinstance(ft, nt.Dispatcher):
                    out.append((ft.dispatcher, tuple(s.args)))
        return out
    raise AssertionError(f"typing {fn.py_func.__name__} did not stop")


def used_signatures(simple: bool) -> tuple[dict, int]:
    """``{dispatcher: {argument types}}`` of every package function the batch reaches, and how many were typed."""
    from simulator.hands import precompile

    (top, sig), = precompile.batch_plan(simple)
    seen, stack, used = set(), [(top, tuple(sig))], {}
    while stack:
        fn, s = stack.pop()
        if (fn, s) in seen:
            continue
        seen.add((fn, s))
        used.setdefault(fn, set()).add(s)
        if fn.py_func.__module__.split(".")[0] == "simulator":
            stack.extend(calls(fn, s))
    return used, len(seen)


def mismatches(simple: bool, used: dict) -> dict[str, list[str]]:
    """Planned functions the loop calls (``used``, from :func:`used_signatures`) with other types than planned:
    ``{name: [types...]}``."""
    from simulator.hands import precompile

    types = precompile.arg_types(True)
    planned = [*precompile.side_plan(simple), *precompile.core_plan(simple),
               *((fn, precompile.signature(fn, types)) for fn in precompile.PINNED)]
    bad = {fn.py_func.__name__: sorted(str(s) for s in used.get(fn, set()) - {tuple(sig)}) for fn, sig in planned}
    return {k: v for k, v in bad.items() if v}


if __name__ == "__main__":
    caching.Cache.save_overload = lambda self, sig, data: None  # read the cache, never write it
    from simulator.hands import precompile

    precompile.pin_signatures()  # as the warm-up does: calls with constants convert to the pinned copy
    for lineup in sys.argv[1:]:
        used, typed = used_signatures(lineup == "simple")  # (typing the loop is most of the probe's time: once)
        bad = mismatches(lineup == "simple", used)
        copies = {f"{fn.py_func.__module__}.{fn.py_func.__name__}": len(sigs) for fn, sigs in used.items()
                  if len(sigs) > 1}
        print(json.dumps({"lineup": lineup, "typed": typed, "mismatch": bad, "copies": copies}), flush=True)
