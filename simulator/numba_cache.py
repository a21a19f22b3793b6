"""Keep numba's on-disk caches honest for the package.

numba keys the cache of a compiled function on that function's own source file, yet the cached machine code
embeds every compiled callee (evaluate, scoring, bots, ...) and the module constants it reads. After an edit in a
callee's file a cached caller would silently keep running the old callee (an A/B run of a bot change would
measure the old bot). :func:`drop_stale_caches` (run when :mod:`simulator` is imported, before anything can be
compiled or loaded; it reads files only and does not import numba) hashes every *compiled source* — each module
of the package with a numba-compiled function, found by walking the package, plus every package module those
import at top level (whose constants the compiled code embeds), transitively — and, in each directory where
numba keeps these modules' caches (``$NUMBA_CACHE_DIR/<dir>_<sha1 of its path>`` when that is set, else the
source directory's ``__pycache__``, as numba's own locators place them), deletes the cache files whenever that
digest differs from the stamp (``numba_sources.sha256``) written there with the caches. The next call
recompiles (about a minute for the engine).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

STAMP = "numba_sources.sha256"  # file name of the digest stamp in each cache directory
# a numba decorator; both patterns start with a newline (the text is searched with one prepended): a literal
# first character keeps the search fast, which matters since this runs on every import of the package
_JIT = re.compile(r"\n[ \t]*@(?:numba\.)?(?:njit|jit|cfunc|vectorize|guvectorize)\b")
# top-level imports (indented ones run inside Python functions, never in compiled code)
_IMPORT = re.compile(r"\n(?:from[ \t]+([\w.]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)|import[ \t]+([\w.]+))")

_checked = False


def is_cached(dispatcher, sig: tuple | None = None) -> bool:
    """Whether numba has an on-disk cache of this ``cache=True`` function (best effort: numba internals); with
    ``sig``, of its copy for these argument types."""
    sigs = cached_signatures(dispatcher)
    return bool(sigs) if sig is None else tuple(sig) in sigs


def cached_signatures(dispatcher) -> list[tuple]:
    """The argument types of every copy of a ``cache=True`` function in numba's disk cache (best effort: numba
    internals; empty when there is none)."""
    try:
        return [tuple(key[0]) for key in dispatcher._cache._cache_file._load_index()]
    except (AttributeError, OSError, TypeError, IndexError):
        return []


def _module_names(root: Path, paths) -> dict[str, Path]:
    """Dotted module name (``simulator.bots.common``; a package by its ``__init__``) of each source under
    ``root`` (the package directory)."""
    names = {}
    for path in paths:
        parts = [root.name, *path.relative_to(root).with_suffix("").parts]
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def _imports(modules: dict[str, Path], text: str) -> set[Path]:
    """Package modules a source imports at top level: ``from simulator.x import a`` gives ``x.a`` when that is a
    module, else ``x`` (a package's ``__init__`` only for names it defines: ``from simulator.rules import vocab``
    reads ``rules/vocab.py``, not the package's rule-set model), ``import simulator.x`` gives ``x``."""
    found = set()
    for match in _IMPORT.finditer("\n" + text):
        module = match.group(1) or match.group(3)
        if match.group(3):
            names = []
        else:  # the imported names without their aliases (``a as b``) and comments, which name no module
            names = re.findall(r"(\w+)(?:[ \t]+as[ \t]+\w+)?", re.sub(r"#[^\n]*", "", match.group(2)))
        subs = [f"{module}.{n}" for n in names]
        if not subs or any(s not in modules for s in subs):
            subs.append(module)
        found |= {modules[s] for s in subs if s in modules}
    return found


def compiled_sources(root: Path | None = None) -> list[Path]:
    """Every source whose code or constants numba-compiled functions of the package embed, sorted: the modules
    with a compiled function (found by walking the package ``root``, default this package) and, transitively,
    the package modules they import at top level."""
    root = Path(os.path.abspath(root or Path(__file__).parent))
    texts = {p: p.read_text(encoding="utf-8") for p in root.rglob("*.py") if "__pycache__" not in p.parts}
    modules = _module_names(root, texts)
    todo = [p for p, text in texts.items() if _JIT.search("\n" + text) or "njit(" in text]
    seen = set(todo)
    while todo:
        for dep in _imports(modules, texts[todo.pop()]) - seen:
            seen.add(dep)
            todo.append(dep)
    return sorted(seen)


def sources_digest(sources: list[Path], root: Path) -> str:
    """sha256 (hex) over the sources' paths relative to ``root`` and their bytes."""
    digest = hashlib.sha256()
    for src in sources:
        digest.update(src.relative_to(root).as_posix().encode() + b"\0")
        digest.update(src.read_bytes())
    return digest.hexdigest()


def cache_dirs(sources: list[Path]) -> list[Path]:
    """The directories numba caches these sources' functions in (numba's ``UserProvidedCacheLocator`` when
    ``$NUMBA_CACHE_DIR`` is set, else ``InTreeCacheLocator``): one per source directory."""
    user = os.environ.get("NUMBA_CACHE_DIR")
    dirs = []
    for parent in sorted({os.path.dirname(os.path.abspath(src)) for src in sources}):
        if user:
            sub = "_".join([os.path.split(parent)[-1], hashlib.sha1(parent.encode()).hexdigest()])
            dirs.append(Path(user) / sub)
        else:
            dirs.append(Path(parent) / "__pycache__")
    return dirs


def drop_stale_caches() -> None:
    """In each directory where numba caches the package's compiled functions, delete the cache files unless
    the stamp there records the current digest of :func:`compiled_sources` (then write the stamp). Runs once
    per process, when :mod:`simulator` is imported, before any cached function can be loaded."""
    global _checked
    if _checked:
        return
    _checked = True
    root = Path(os.path.abspath(Path(__file__).parent))
    try:
        sources = compiled_sources(root)
        digest = sources_digest(sources, root)
    except OSError:
        return  # an unreadable source: numba cannot cache its functions either
    for where in cache_dirs(sources):
        stamp = where / STAMP
        try:
            if stamp.read_text() == digest:
                continue
        except OSError:
            pass
        try:
            for pattern in ("*.nbi", "*.nbc"):
                for f in where.glob(pattern):
                    f.unlink(missing_ok=True)
            where.mkdir(parents=True, exist_ok=True)
            tmp = where / f"{STAMP}.{os.getpid()}.tmp"
            tmp.write_text(digest)
            os.replace(tmp, stamp)
        except OSError:
            pass  # read-only location: numba cannot write caches there either
