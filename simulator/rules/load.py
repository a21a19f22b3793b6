"""Reading rule files: where named rule sets live (``CONFIG_DIR``), strict YAML (a key given twice is an error),
``extends:`` chains (deep merge: mappings merge key by key, everything else is replaced) and ``--set key.path=value``
overrides. Produces raw mappings; :func:`simulator.rules.validate` turns them into a :class:`~simulator.rules.RuleSet`.
Every failure is a one-line :class:`RulesError` naming the file (and key or line).
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path
from typing import Any

import yaml

from simulator.errors import UserError, did_you_mean


def _config_dir() -> Path:
    """Named rule sets and studies: ``simulator/configs`` — in a checkout (and an editable install) a symbolic link
    to the repository's top-level ``configs/``, the one source of truth; in an installed package its copy, shipped
    as package data by ``pyproject.toml``. Without the link (a file system that dropped it), ``configs/``."""
    packaged = Path(str(importlib.resources.files("simulator") / "configs"))
    return packaged.resolve() if packaged.is_dir() else Path(__file__).resolve().parents[2] / "configs"


CONFIG_DIR = _config_dir()


class RulesError(UserError):
    """A rule file or override that cannot be loaded; the message is one line naming file and key."""


# ---------------------------------------------------------------------------------------------------------
# Loading: files, inheritance, overrides.

def deep_merge(base: dict, top: dict) -> dict:
    """Mappings merge key by key (``top`` wins); any other value in ``top`` replaces the one in ``base``."""
    out = dict(base)
    for key, val in top.items():
        if isinstance(val, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], val)
        else:
            out[key] = val
    return out


def resolve_config_path(ref: str | Path, relative_to: Path | None = None) -> Path:
    """A rule set reference (a name such as ``chengdu`` or a path) to an existing file."""
    ref_path = Path(ref)
    candidates = [ref_path]
    if relative_to is not None:
        candidates.append(relative_to / ref_path)
    if ref_path.suffix not in (".yaml", ".yml"):
        if relative_to is not None:
            candidates.append(relative_to / f"{ref}.yaml")
        candidates.append(CONFIG_DIR / f"{ref}.yaml")
    for c in candidates:
        if c.is_file():
            return c
    hint = did_you_mean(ref_path.stem, sorted(p.stem for p in CONFIG_DIR.glob("*.yaml")))
    raise RulesError(f"rule set {str(ref)!r} not found (looked for a file or configs/{ref_path.stem}.yaml){hint}")


def read_yaml_mapping(path: Path, what: str = "a rule set") -> dict:
    """The YAML mapping in ``path`` (``{}`` for an empty file); one-line :class:`RulesError` for unreadable,
    non-UTF-8 or malformed files, naming the file (and the line, for YAML errors)."""
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader
    except UnicodeDecodeError as exc:
        raise RulesError(f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})") from None
    except ValueError as exc:  # e.g. an integer literal longer than Python converts (4300 digits)
        raise RulesError(f"{path}: unreadable value ({shorten(str(exc))})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "malformed YAML"
        raise RulesError(f"{path}:{where} malformed YAML: {problem}") from None
    except OSError as exc:
        raise RulesError(f"{path}: cannot read ({exc.strerror})") from None
    if data is None:  # an empty file is a mistake (it would run the defaults under the file's name)
        raise RulesError(f"{path}: empty; {what} must be a YAML mapping (write `extends: chengdu` for the defaults)")
    if not isinstance(data, dict):
        raise RulesError(f"{path}: {what} must be a YAML mapping, got {type(data).__name__}")
    return data


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a key given twice in one mapping (PyYAML would keep the last silently)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, list | dict):
                continue  # unhashable: PyYAML's own error follows
            if key in seen:
                raise yaml.constructor.ConstructorError(None, None, f"key {str(key)[:40]!r} given twice",
                                                        key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep)


def load_raw(ref: str | Path, relative_to: Path | None = None, _seen: tuple[Path, ...] = ()) -> dict:
    """Raw merged mapping of a rule file with its ``extends`` chain resolved (not yet validated)."""
    path = resolve_config_path(ref, relative_to).resolve()
    if path in _seen:
        raise RulesError(f"{path}: extends cycle through {' -> '.join(p.name for p in _seen + (path,))}")
    data = read_yaml_mapping(path)
    parent = data.pop("extends", None)
    data.setdefault("name", path.stem)
    if parent is None:
        return data
    if not isinstance(parent, str):
        raise RulesError(f"{path}: extends: must be a rule set name or path")
    try:
        resolve_config_path(parent, path.parent)
    except RulesError as exc:
        raise RulesError(f"{path}: extends: {exc}") from None
    return deep_merge(load_raw(parent, path.parent, _seen + (path,)), data)


def flat_keys(data: Any, prefix: str = "", *, lists: bool = True) -> dict[str, Any]:
    """Nested rule data as ``{"scoring.cap": 4, "seats.0.bot": "greedy", ...}`` (the keys ``--set`` takes);
    with ``lists=False`` a list is one value (``{"seats": [...]}``)."""
    if isinstance(data, dict) or (lists and isinstance(data, list)):
        items = data.items() if isinstance(data, dict) else enumerate(data)
        return {k: v for key, val in items for k, v in flat_keys(val, f"{prefix}{key}.", lists=lists).items()}
    return {prefix[:-1]: data}


def parse_override(text: str) -> tuple[list[str], Any]:
    """``scoring.cap=3`` -> (['scoring', 'cap'], 3); the value is read as YAML (null, true, 16, cap, ...)."""
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key or any(not part for part in key.split(".")):
        raise RulesError(f"--set {text!r}: expected KEY=VALUE, e.g. scoring.cap=3")
    try:
        parsed = yaml.safe_load(value) if value.strip() else None
    except yaml.YAMLError:
        raise RulesError(f"--set {shorten(text)!r}: value is not valid YAML") from None
    except ValueError:  # an integer literal longer than Python converts (4300 digits)
        raise RulesError(f"--set {shorten(key)}=...: value is not a usable number ({len(value)} characters)") from None
    return key.split("."), parsed


def _nest(keys: list[str], value: Any) -> dict:
    """``(['scoring', 'cap'], 3)`` -> ``{'scoring': {'cap': 3}}``."""
    for key in reversed(keys):
        value = {key: value}
    return value


def apply_overrides(data: dict, overrides: list[str] | dict | None) -> dict:
    """Apply overrides on top of raw rule data: ``--set`` strings (``scoring.cap=3``) or a mapping, whose keys
    may be dotted (``{"scoring.cap": 3}``) or nested (``{"scoring": {"cap": 3}}``)."""
    if not overrides:
        return data
    if isinstance(overrides, dict):
        for key, value in overrides.items():
            keys = str(key).split(".")
            if not all(keys):
                raise RulesError(f"override key {key!r} is not a dotted rule key such as scoring.cap")
            data = deep_merge(data, _nest(keys, value))
        return data
    for text in overrides:
        data = deep_merge(data, _nest(*parse_override(text)))
    return data


def shorten(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters: an error line must stay one readable line whatever the input."""
    return text if len(text) <= limit else f"{text[:limit - 15]}...({len(text)} chars)"
