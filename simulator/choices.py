"""The closed sets of values of command-line options, as ``Literal`` types: declared once here (a module with no
imports, so the CLI starts fast), listed in ``--help`` and checked by typer, and used by the library modules
(``simulator.run.runner.BACKENDS``, ``simulator.replay.LANGS`` are these types' values)."""

from __future__ import annotations

from typing import Literal

Backend = Literal["loky", "dask"]  # joblib's local processes, or a dask.distributed cluster (the dask extra)
Lang = Literal["zh", "en"]  # a replay's tile names: Chinese, or tile notation with English words
Check = Literal["full", "sizes"]  # how a reader verifies a run's files: size, SHA-256 and rows; or sizes only (fast)
CompareFormat = Literal["table", "csv", "json"]  # xuezhan compare's output
CompareBy = Literal["bot", "seat"]  # a paired comparison's grouping
Suit = Literal["m", "p", "s"]  # a suit: 万 (characters), 筒 (dots), 条 (bamboo)
FileSchema = Literal["rules", "study", "design"]  # the files whose JSON Schema simulator.cli.catalog.json_schema gives
SchemaKind = Literal[FileSchema, "compare"]  # xuezhan rules schema: those files, and compare --format json
