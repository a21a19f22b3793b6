"""xuezhan's public API under one unambiguous, typed name.

The installed top-level packages ``simulator`` and ``analysis`` keep the project's layout, but those names are
generic: a notebook directory holding an ``analysis.py``, or another distribution installing an ``analysis``
package, would shadow them silently. ``import xuezhan`` always means this project::

    import xuezhan
    rules = xuezhan.load_rules("chengdu", ["scoring.cap=5"])
    run = xuezhan.open_run("runs/quickstart")
    xuezhan.plots.ev_errorbars(xuezhan.expected_value(run, "seat"))

The names are declared once, as the static imports of ``xuezhan/__init__.pyi`` (what type checkers and IDEs
read: the package ships ``py.typed``). This module reads that stub and imports each name's module on first
use, so ``import xuezhan`` itself is cheap and never compiles anything. ``API`` maps each name to its module;
a module name (``plots``, ``compare`` …) maps to the module itself.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import Any

from simulator import __version__


def _read_stub() -> dict[str, str]:
    """``{public name: module}`` from the stub's ``from M import X as X`` lines (``__version__`` excluded)."""
    tree = ast.parse((Path(__file__).with_suffix(".pyi")).read_text(encoding="utf-8"))
    return {alias.asname or alias.name: node.module for node in tree.body if isinstance(node, ast.ImportFrom)
            for alias in node.names if node.module and alias.name != "__version__"}


API: dict[str, str] = _read_stub()
__all__ = ["__version__", *API]

def __getattr__(name: str) -> Any:
    module = API.get(name)
    if module is None:
        raise AttributeError(f"module 'xuezhan' has no attribute {name!r}")
    parent = importlib.import_module(module)
    value = getattr(parent, name, None)
    if value is None:  # a submodule of a package: xuezhan.plots is analysis.plots
        value = importlib.import_module(f"{module}.{name}")
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
