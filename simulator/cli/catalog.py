"""What ships and how rule files resolve: ``xuezhan list`` and ``xuezhan rules show | diff | schema``.

Library functions (each returns data; the typer commands at the bottom only print it):

- :func:`catalog` — the shipped rule sets and studies (name, description) and the compiled bots with their
  parameters (default, range);
- :func:`resolved_yaml` — a rule set after ``extends:`` and overrides, as YAML (what the engine plays);
- :func:`rules_diff` — the dotted keys on which two resolved rule sets differ;
- :func:`json_schema` — the JSON Schema of rule files and of study files (pydantic's ``model_json_schema``), so
  that an editor (VS Code's YAML extension, ...) validates and autocompletes them (``xuezhan rules schema`` is
  :func:`simulator.cli.logs.schema_command`, which also prints the schema of ``compare --format json``).
"""

from __future__ import annotations

import json
from typing import Any

import typer

from simulator.choices import FileSchema
from simulator.cli import complete as cli_complete
from simulator.errors import UserError
from simulator.rules.bot_table import BOT_TABLE

# the parameters of BotSpec each compiled bot reads (docs/studies.md, "Bots and their parameters"; the bot table)
BOT_PARAMS: dict[str, tuple[str, ...]] = {b.name: tuple(p.name for p in b.params) for b in BOT_TABLE}


def _description(path) -> str:
    from simulator.rules import read_yaml_mapping

    try:
        data = read_yaml_mapping(path, "a listing")
        if data.get("description") or not data.get("extends"):
            return str(data.get("description", "")).strip()
        changes = ", ".join(f"{k}={json.dumps(vb, ensure_ascii=False)}" for k, _, vb in
                            rules_diff(str(data["extends"]), str(path)))
        return f"extends {data['extends']}: {changes or 'no change'}"
    except UserError as exc:
        return f"(unreadable: {exc})"


def catalog() -> dict[str, list[dict[str, Any]]]:
    """``{"rule sets": [{name, description}], "studies": [...], "bots": [{name, params: {p: (default,
    lo, hi)}}]}`` of this installation (the package's configs/)."""
    from annotated_types import Ge, Le

    from simulator.rules import BOTS, CONFIG_DIR, BotSpec
    from simulator.run.study import STUDY_DIR

    def bounds(name: str) -> tuple[Any, Any, Any]:
        field = BotSpec.model_fields[name]
        lo = next((m.ge for m in field.metadata if isinstance(m, Ge)), None)
        hi = next((m.le for m in field.metadata if isinstance(m, Le)), None)
        return field.default, lo, hi

    return {
        "rule sets": [{"name": p.stem, "description": _description(p)} for p in sorted(CONFIG_DIR.glob("*.yaml"))],
        "studies": [{"name": p.stem, "description": _description(p)} for p in sorted(STUDY_DIR.glob("*.yaml"))],
        "bots": [{"name": b, "params": {p: bounds(p) for p in BOT_PARAMS[b]}} for b in BOTS] + registered_bots(),
    }


def registered_bots() -> list[dict[str, Any]]:
    """The Python bots registered by name (``xuezhan.bots`` entry points: the built-in ``search`` and plug-ins),
    each with its constructor's keyword defaults (no declared range: ``None``)."""
    import inspect
    from importlib.metadata import entry_points

    from simulator.rules import BOT_ENTRY_POINTS, bot_class

    out = []
    for ep in sorted(entry_points(group=BOT_ENTRY_POINTS), key=lambda e: e.name):
        try:
            sig = inspect.signature(bot_class(ep.name))
        except ValueError:
            continue  # a broken plug-in is reported where it is seated
        params = {n: (p.default, None, None) for n, p in sig.parameters.items() if p.default is not p.empty}
        out.append({"name": ep.name, "params": params})
    return out


def resolved_yaml(ref: str, overrides: list[str] | None = None) -> str:
    """The rule set ``ref`` (name or path) with ``extends:`` resolved and ``overrides`` applied, as YAML."""
    import yaml

    from simulator.rules import load_rules, read_yaml_mapping, resolve_config_path

    rules = load_rules(ref, overrides or None)
    data = rules.resolved()
    path = resolve_config_path(ref)
    own = read_yaml_mapping(path)
    if own.get("extends") and not own.get("description"):  # not the parent's, which extends: passed down
        data["description"] = _description(path)
    return f"# digest {rules.digest()}\n" + yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def rules_diff(a: str, b: str, overrides: list[str] | None = None) -> list[tuple[str, Any, Any]]:
    """``[(dotted key, value in a, value in b)]`` for every resolved key that differs (``name`` and
    ``description`` left out), sorted by key; a key missing on one side shows None there."""
    from simulator.rules import flat_keys, load_rules

    fa, fb = (flat_keys(load_rules(ref, overrides or None).resolved()) for ref in (a, b))
    keys = sorted(k for k in fa.keys() | fb.keys() if k not in ("name", "description") and fa.get(k) != fb.get(k))
    return [(k, fa.get(k), fb.get(k)) for k in keys]


def json_schema(kind: FileSchema) -> dict[str, Any]:
    """The JSON Schema of a rule file (``rules``: :class:`simulator.rules.RuleSet`, plus the file-only keys
    ``extends``), of a study file (``study``: :class:`simulator.run.study.StudyFile`) or of a design file (``design``:
    :class:`simulator.run.design_file.DesignFile`)."""
    if kind == "study":
        from simulator.run.study import StudyFile

        schema = StudyFile.model_json_schema(by_alias=True)
    elif kind == "design":
        from simulator.run.design_file import DesignFile

        schema = DesignFile.model_json_schema(by_alias=True)
    else:
        from simulator.rules import RuleSet

        schema = RuleSet.model_json_schema(by_alias=True)
        schema.setdefault("properties", {})["extends"] = {
            "type": "string", "description": "a rule set (name in configs/ or path) this file overrides"}
        schema.pop("required", None)  # a file that extends another may give any subset of the keys
        # a seat is a bot's name or a mapping (RuleSet._seats accepts both; pydantic sees the mapping only)
        seat = {"anyOf": [{"type": "string", "description": "a compiled bot (" + ", ".join(BOT_PARAMS)
                           + ") or a Python bot module:Class"}, {"$ref": "#/$defs/BotSpec"}]}
        schema["properties"]["seats"].update(prefixItems=[seat] * 4, items=False)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = f"xuezhan {kind} file"
    return schema


# ---- the commands ----------------------------------------------------------------------------------------------

rules_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None,
                        help="Rule sets: show one resolved, compare two, or print the JSON Schema of the files.")


def list_command() -> None:
    """List the shipped rule sets and studies (with their descriptions) and the bots with their parameters."""
    cat = catalog()
    for section in ("rule sets", "studies"):
        typer.echo(f"{section}:")
        width = max(len(e["name"]) for e in cat[section])
        for entry in cat[section]:
            first = entry["description"].splitlines()[0] if entry["description"] else ""
            typer.echo(f"  {entry['name']:<{width}}  {first}")
    typer.echo("bots (a Python bot: module:Class, see docs/bots.md):")
    for bot in cat["bots"]:
        params = ", ".join(f"{p}={d}" + (f" ({lo}–{hi})" if lo is not None else "")
                           for p, (d, lo, hi) in bot["params"].items()) or "no parameters"
        typer.echo(f"  {bot['name']:<9}  {params}")


@rules_app.command("show")
def show_command(
    ref: str = typer.Argument("chengdu", autocompletion=cli_complete.rule_sets,
                              help="Rule set: a name in configs/ or a YAML path."),
    set_: list[str] | None = typer.Option(None, "--set", help="Rule override KEY=VALUE, repeatable."),
) -> None:
    """Print a rule set as the engine plays it: extends: resolved, overrides applied, every key (YAML)."""
    typer.echo(resolved_yaml(ref, set_), nl=False)


@rules_app.command("diff")
def diff_command(
    a: str = typer.Argument(..., autocompletion=cli_complete.rule_sets, help="Rule set A (name or path)."),
    b: str = typer.Argument(..., autocompletion=cli_complete.rule_sets, help="Rule set B (name or path)."),
    set_: list[str] | None = typer.Option(None, "--set", help="Rule override applied to both, repeatable."),
) -> None:
    """Print the resolved keys on which two rule sets differ: KEY: A-value -> B-value."""
    rows = rules_diff(a, b, set_)
    if not rows:
        typer.echo(f"{a} and {b} play the same rules")
    for key, va, vb in rows:
        typer.echo(f"{key}: {json.dumps(va, ensure_ascii=False)} -> {json.dumps(vb, ensure_ascii=False)}")
