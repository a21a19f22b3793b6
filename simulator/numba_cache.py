"""Keep numba's on-disk caches honest for the engine.

numba keys the cache of a compiled function on that function's own source file, yet the cached machine code
embeds every compiled callee (evaluate, scoring, bots, ...). After an edit in a callee's file a cached engine
would silently keep running the old callee. :func:`drop_stale_caches` (called when :mod:`simulator.engine` is
imported, before anything is compiled or loaded) deletes the package's cache files whenever one of the sources
the engine embeds has changed since they were written.
"""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

from numba.core import types

_checked = False


def compiled_sources(root: Path | None = None) -> list[Path]:
    """Every source file whose code or constants compiled engine code can embed: the package's modules that define
    compiled functions (``njit`` in their text), and every module of the package they import at module level,
    transitively (a function-level import is Python-side code, never compiled in).
    Found by walking the package and reading imports, so a new or split module is never forgotten."""
    root = root or Path(__file__).resolve().parent
    files = {p.relative_to(root.parent).with_suffix("").as_posix().replace("/", "."): p for p in root.rglob("*.py")}
    files = {m.removesuffix(".__init__"): p for m, p in files.items()}
    todo = [m for m, p in files.items() if "njit" in p.read_text(encoding="utf-8")]
    seen: set[str] = set()
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        for node in ast.parse(files[m].read_text(encoding="utf-8")).body:  # module-level imports: what it embeds
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or "", *(f"{node.module}.{a.name}" for a in node.names)]
                     if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            todo.extend(n for n in names if n in files and n not in seen)
    return sorted(files[m] for m in seen)


def is_cached(dispatcher, arg: int | None = None, none: bool = False) -> bool:
    """Whether numba has an on-disk cache of this ``cache=True`` function (best effort: numba internals); with
    ``arg``, of a copy compiled with argument ``arg`` typed ``None`` (``none``) or not."""
    try:
        cache_file = dispatcher._cache._cache_file
        if arg is None:
            return Path(cache_file._index_path).is_file()
        sigs = [key[0] for key in cache_file._load_index()]  # index keys: (argument types, machine, hashes)
    except (AttributeError, OSError, TypeError, IndexError):
        return False
    return any(len(sig) > arg and (sig[arg] == types.none) == none for sig in sigs)


def cached_signatures(dispatcher) -> list[tuple]:
    """The argument types of every copy of a ``cache=True`` function in numba's disk cache (best effort: numba
    internals; empty when there is none)."""
    try:
        return [tuple(key[0]) for key in dispatcher._cache._cache_file._load_index()]
    except (AttributeError, OSError, TypeError, IndexError):
        return []


def drop_stale_caches() -> None:
    """Delete the package's numba cache files if an embedded source changed (the next call recompiles, about
    a minute); a stamp of the sources' hash in ``simulator/__pycache__`` records the state the caches match.
    Runs once per process, when :mod:`simulator.engine` is imported (before any cached function is loaded)."""
    global _checked
    if _checked:
        return
    _checked = True
    root = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for src in compiled_sources(root):
        digest.update(src.relative_to(root).as_posix().encode())
        digest.update(src.read_bytes())
    stamp = root / "__pycache__" / "numba_sources.sha256"
    try:
        if stamp.read_text() == digest.hexdigest():
            return
    except OSError:
        pass
    try:
        for pattern in ("*.nbi", "*.nbc"):
            for f in root.rglob(f"__pycache__/{pattern}"):
                f.unlink(missing_ok=True)
        stamp.parent.mkdir(exist_ok=True)
        stamp.write_text(digest.hexdigest())
    except OSError:
        pass  # read-only install: numba cannot write caches there either
