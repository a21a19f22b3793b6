"""xuezhan's public API under one unambiguous name.

The installed top-level packages ``simulator`` and ``analysis`` keep the project's layout, but those names are
generic: a notebook directory holding an ``analysis.py``, or another distribution installing an ``analysis``
package, would shadow them silently. ``import xuezhan`` always means this project; each name below is the
object of the module given in ``API`` (imported on first use, so ``import xuezhan`` itself is cheap and never
compiles anything)::

    import xuezhan
    rules = xuezhan.load_rules("chengdu", ["scoring.cap=5"])
    run = xuezhan.open_run("runs/quickstart")
"""

from __future__ import annotations

import importlib
from typing import Any

from simulator import __version__

# name -> module that defines it
API: dict[str, str] = {
    # rules and scoring
    "RuleSet": "simulator.rules", "BotSpec": "simulator.rules", "load_rules": "simulator.rules",
    "score_hand": "simulator.score", "UserError": "simulator.errors",
    # simulation
    "play_hands": "simulator.hands", "Variant": "simulator.runner", "RunSpec": "simulator.runner",
    "simulate": "simulator.runner", "run_variants": "simulator.runner",
    "load_study": "simulator.study", "run_study": "simulator.study",
    "record_hand": "simulator.replay", "record_logged_hand": "simulator.replay",
    # analysis (reads the logs only)
    "open_run": "analysis.load", "Run": "analysis.load",
    "hand_type_frequencies": "analysis.fans", "flag_frequencies": "analysis.fans",
    "fan_distribution": "analysis.fans", "expected_value": "analysis.ev", "risk_table": "analysis.risk",
    "session_risk_table": "analysis.risk", "game_shape": "analysis.shape",
    "paired_comparison": "analysis.compare", "paired_hand_metrics": "analysis.compare",
    "economy_table": "analysis.economy", "diagnose": "analysis.diagnostics", "write_report": "analysis.report",
}
__all__ = ["__version__", *API]


def __getattr__(name: str) -> Any:
    module = API.get(name)
    if module is None:
        raise AttributeError(f"module 'xuezhan' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
