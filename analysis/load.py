"""Open a run directory and scan its Parquet logs lazily with polars.

Layout (written by ``simulator.run.runner``; paths: ``simulator.logs.layout``)::

    RUN/study.json                                   (studies only: name, baseline, variants, hands, seed, ...)
    RUN/_variants/variant=<name>/_manifest.json      (resolved rule set, digest, seed, chunks with checksums)
    RUN/{hands,players,wins}/variant=<name>/part-*.parquet

Every variant's files are verified against its manifest when the run is opened (size, SHA-256 and footer row
count of every listed file: ``check="full"``, the default; or sizes only, ``check="sizes"``, much faster on a
large run), and only the files the manifest lists are read, so a damaged, missing or stray file is an error
naming the file, never silently different data.

Tables follow :mod:`simulator.logs.schema`; money columns are integers in **base units** (multiply by
``Run.base(variant)`` for score units); a variant whose rules set ``settlement.money_scale`` logs money units
(that many per base unit), and :meth:`Run.players` then reads every variant's score columns as Float64 base
units. Categorical columns are read as plain strings and ``variant`` (not stored in the files) is taken from the
directory name, so frames from different variants concatenate and join without dictionary clashes. Runs of the
earlier variant-first layout are refused with a "re-simulate" message.
This module never imports the engine or the runner.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import polars as pl

from simulator.errors import UserError
from simulator.logs import layout, rundir, schema
from simulator.logs import manifest as mf

MONEY_COLUMNS = (*schema.SCORE_COMPONENTS, "score_total")
"""The players table's money columns: base units, or money units under ``settlement.money_scale`` (Run.players
reads them back in base units)."""

TABLE_NAMES = tuple(schema.TABLES)


class RunDirError(UserError):
    """A run directory that cannot be analysed (missing, empty, unknown variant, unreadable manifest)."""


def _polars_schema(table: str, sessions: bool = False) -> dict[str, pl.DataType]:
    """The polars schema of a log table as this module returns it (``variant`` first, categoricals as strings);
    ``sessions``: with the session columns (``schema.SESSION_FIELDS``)."""
    empty = pl.from_arrow(schema.tables(sessions)[table].empty_table())
    assert isinstance(empty, pl.DataFrame)
    return {schema.PARTITION: pl.String,
            **{name: (pl.String if dtype == pl.Categorical else dtype) for name, dtype in empty.schema.items()}}


def _find_rules(manifest: dict[str, Any]) -> dict[str, Any]:
    """The resolved rule set inside a manifest: the mapping that holds ``scoring`` (top level or one down)."""
    if isinstance(manifest.get("scoring"), dict):
        return manifest
    for key in ("rules", "rule_set", "ruleset", "resolved"):
        val = manifest.get(key)
        if isinstance(val, dict) and isinstance(val.get("scoring"), dict):
            return val
    for val in manifest.values():
        if isinstance(val, dict) and isinstance(val.get("scoring"), dict):
            return val
    return {}


@dataclass(frozen=True)
class Run:
    """A run directory: its variants (in study order), their manifests and the optional study description."""

    path: Path
    variants: tuple[str, ...]
    manifests: dict[str, dict[str, Any]] = field(repr=False)
    study: dict[str, Any] | None = field(default=None, repr=False)
    hand_range: tuple[int, int] | None = None
    """Hand ids ``[first, stop)`` this view reads (:meth:`restrict`; ``None``: every hand): a piece of a large
    run, read without the others (:mod:`analysis.pieces`)."""

    # -- metadata -----------------------------------------------------------------------------------------
    def rules(self, variant: str) -> dict[str, Any]:
        """Resolved rule set (plain data) of a variant, as recorded in its manifest ({} if not recorded)."""
        return _find_rules(self.manifests[self.check(variant)])

    def base(self, variant: str) -> int:
        """``scoring.base`` of a variant: score units per base unit (1 if the manifest does not say)."""
        return int(self.rules(variant).get("scoring", {}).get("base", 1))

    def money_scale(self, variant: str) -> int:
        """``settlement.money_scale`` of a variant: money units per base unit in its logs' score columns (1 if
        the manifest does not say); :meth:`players` divides them back to base units."""
        return int(self.rules(variant).get("settlement", {}).get("money_scale", 1))

    def bots(self, variant: str) -> list[str]:
        """The bot seated at each seat 0-3 (from the rule set; ``[]`` when the manifest has none)."""
        return [s.get("bot", "?") if isinstance(s, dict) else str(s) for s in self.rules(variant).get("seats", [])]

    def seat_labels(self, variant: str) -> list[str]:
        """Each seat's bot with the parameters that differ from their defaults (``simulator.rules.BotSpec``),
        e.g. ``expert (temperature 0.5)``; a Python bot's ``params`` as ``key=value``. ``[]`` without seats."""
        from simulator.rules import BotSpec  # plain data: the defaults of a seat, no engine

        defaults = {k: f.default for k, f in BotSpec.model_fields.items()
                    if k not in ("bot", "params", "params_from")}
        labels = []
        for seat in self.rules(variant).get("seats", []):
            if not isinstance(seat, dict):
                labels.append(str(seat))
                continue
            changed = [f"{k} {v}" for k, v in seat.items() if k in defaults and v != defaults[k]]
            changed += [f"{k}={v}" for k, v in (seat.get("params") or {}).items()]
            # an adapted player (parameters from `xuezhan tune`) names its file; any other seat is a fixed player
            source = f"adapted, {seat['params_from']}: " if seat.get("params_from") else ""
            label = f"{source}{', '.join(changed) or 'defaults'}" if source else ", ".join(changed)
            labels.append(seat.get("bot", "?") + (f" ({label})" if label else ""))
        return labels

    def economy(self, variant: str) -> dict[str, float]:
        """``{room_factor, rake}`` of a variant (manifest top level, else its rule set; defaults 1 and 0)."""
        eco = self.manifests[self.check(variant)].get("economy") or self.rules(variant).get("economy") or {}
        return {"room_factor": float(eco.get("room_factor", 1.0)), "rake": float(eco.get("rake", 0.0))}

    def stale(self, variant: str) -> list[mf.Stale]:
        """The tuned files the variant seated whose weights were tuned on another version of the expert or rule
        set, as the run's own check found them (manifest ``stale``; ``[]`` when there were none)."""
        return [mf.Stale(**e) for e in self.manifests[self.check(variant)].get("stale", [])]

    def digest(self, variant: str) -> str:
        """SHA-256 digest of the variant's rules: the manifest's, else recomputed from the resolved rule set."""
        man = self.manifests[self.check(variant)]
        for key in ("digest", "rules_digest", "rule_digest"):
            if isinstance(man.get(key), str):
                return man[key]
        rules = self.rules(variant)
        if not rules:
            return "unknown"
        from simulator.rules import validate

        return validate(dict(rules), f"{variant}/{mf.MANIFEST}", recorded=True).digest()

    @cached_property
    def duplicate(self) -> bool:
        """Whether the run played duplicate seating (each wall dealt four times, bots rotated): the manifests'
        or study's ``duplicate`` flag; when none records one, whether any logged ``deal_id`` differs from its
        ``hand_id``."""
        flags = [m.get("duplicate") for m in self.manifests.values()] + [(self.study or {}).get("duplicate")]
        if any(isinstance(f, bool) for f in flags):
            return any(f is True for f in flags)
        return bool(self.hands().select((pl.col("deal_id") != pl.col("hand_id")).any()).collect().item())

    def session(self, variant: str) -> dict[str, Any] | None:
        """The variant's ``session`` rules (plain data), None when its hands are independent (no sessions)."""
        sess = self.rules(variant).get("session")
        return sess if isinstance(sess, dict) else None

    @cached_property
    def has_sessions(self) -> bool:
        """Whether any variant played sessions: then every table has the session columns (null in a variant
        without sessions)."""
        return any(self.session(v) is not None for v in self.variants)

    @property
    def cluster(self) -> str:
        """Column of the independent unit: in a run with sessions ``unit_id`` (the session, see :meth:`scan`:
        its hands are chained — the dealer follows from the previous hand, a broke player ends it); else
        ``deal_id`` (the wall) under duplicate seating — the four seatings of one wall share every tile, so they
        are one observation of the wall, not four — else ``hand_id``."""
        if self.has_sessions:
            return "unit_id"
        return "deal_id" if self.duplicate else "hand_id"

    @property
    def unit(self) -> str:
        """Name of the independent unit for tables: ``"session"`` in a run with sessions, ``"wall"`` under
        duplicate seating, else ``"hand"``."""
        if self.has_sessions:
            return "session"
        return "wall" if self.duplicate else "hand"

    @property
    def id_columns(self) -> tuple[str, ...]:
        """Identifier columns every analysis keeps with a row: ``hand_id``, ``deal_id`` and, in a run with
        sessions, ``unit_id`` (:attr:`cluster`)."""
        return ("hand_id", "deal_id", "unit_id") if self.has_sessions else ("hand_id", "deal_id")

    @property
    def baseline(self) -> str:
        """The study's baseline if the run is a study and names one, else the first variant."""
        if self.study and self.study.get("baseline") in self.variants:
            return str(self.study["baseline"])
        return self.variants[0]

    @property
    def contrasts(self) -> list[tuple[str, str]]:
        """The study's extra pairs ``(A, B)`` to compare as B − A (``study.json``'s ``contrasts``), those whose
        two variants the run holds; empty for a run that is not a study or names none."""
        pairs = (self.study or {}).get("contrasts") or []
        return [(str(a), str(b)) for a, b in pairs if a in self.variants and b in self.variants]

    def check(self, variant: str) -> str:
        """Return ``variant`` if the run has it, else raise :class:`RunDirError` naming the known ones."""
        if variant not in self.variants:
            raise RunDirError(f"{self.path}: no variant {variant!r} (has: {', '.join(self.variants)})")
        return variant

    def _repr_html_(self) -> str:
        """A notebook's view of the run: one row per variant (baseline marked) with its hands (from the
        manifest: planned, and whether complete), seed, rules digest and seating; nothing is read from the logs."""
        from html import escape

        cells = ("variant", "hands", "seed", "rules digest", "seats")
        rows = []
        for v in self.variants:
            man = self.manifests[v]
            hands = f"{man.get('hands', '?'):,}" + ("" if man.get("complete", True) else " (incomplete)")
            row = (f"{v} (baseline)" if v == self.baseline else v, hands, man.get("seed", "?"),
                   self.digest(v)[:12], ", ".join(self.seat_labels(v)))
            rows.append("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>")
        kind = f"study {escape(str(self.study.get('name')))}" if self.study else "run"
        return (f"<p><b>xuezhan {kind}</b> at <code>{escape(str(self.path))}</code>"
                f"{' (duplicate seating)' if self.duplicate else ''}</p><table><tr>"
                + "".join(f"<th>{c}</th>" for c in cells) + "</tr>" + "".join(rows) + "</table>")

    # -- data ---------------------------------------------------------------------------------------------
    def scan(self, table: str, variants: str | list[str] | tuple[str, ...] | None = None) -> pl.LazyFrame:
        """Lazy frame of one log table over the given variants (all by default), ``variant`` as a string; in a
        run with sessions, with the unit column ``unit_id`` (:attr:`cluster`) appended."""
        if table not in TABLE_NAMES:
            raise ValueError(f"unknown table {table!r}; expected one of {TABLE_NAMES}")
        names = self.variants if variants is None else (variants,) if isinstance(variants, str) else variants
        target = _polars_schema(table, self.has_sessions)
        scaled = table == "players" and any(self.money_scale(v) != 1 for v in self.variants)
        if scaled:  # money units back to base units: fractions of a base unit, Float64 for every variant alike
            target = {c: pl.Float64 if c in MONEY_COLUMNS else t for c, t in target.items()}
        frames = []
        for name in names:
            parts = self.parts(name, table)
            if self.hand_range is not None:
                first, stop = self.hand_range
                chunks = self.manifests[name]["chunks"]
                parts = [p for p, c in zip(parts, chunks, strict=True) if c["first"] < stop and c["last"] >= first]
            if parts:
                lf = pl.scan_parquet(parts, hive_partitioning=False, missing_columns="insert",
                                     extra_columns="ignore")
                have = set(lf.collect_schema().names())  # a variant without sessions lacks their columns
                lf = lf.with_columns(pl.lit(name).alias("variant")).select(
                    [(pl.col(c) if c in have or c == "variant" else pl.lit(None)).cast(t).alias(c)
                     for c, t in target.items()])
            else:
                lf = pl.LazyFrame(schema=target).with_columns(pl.lit(name).alias("variant"))
            if scaled and self.money_scale(name) != 1:
                lf = lf.with_columns(pl.col(c) / self.money_scale(name) for c in MONEY_COLUMNS)
            frames.append(lf)
        out = pl.concat(frames, how="vertical") if frames else pl.LazyFrame(schema=target)
        if self.hand_range is not None:  # a chunk may straddle the range's ends (chunk sizes that differ)
            out = out.filter(pl.col("hand_id").is_between(*self.hand_range, closed="left"))
        if not self.has_sessions:
            return out
        if "session_id" not in target:  # wins: the session of each win's hand
            sess = self.scan("hands", names).select("variant", "hand_id", "session_id")
            return (out.join(sess, on=["variant", "hand_id"], how="left", maintain_order="left")
                    .with_columns(self._unit_id()).drop("session_id"))
        return out.with_columns(self._unit_id())

    def _unit_id(self) -> pl.Expr:
        """``unit_id`` of a run with sessions: the session (under duplicate seating the four seatings of one
        session's walls, ``session_id // 4``, are one unit), as a non-negative number; a variant without sessions
        keeps its hand (or wall) as the unit, numbered negative so the two never collide."""
        per = 4 if self.duplicate else 1
        hand = pl.col("deal_id") if self.duplicate else pl.col("hand_id")
        return (pl.when(pl.col("session_id").is_not_null()).then(pl.col("session_id") // per)
                .otherwise(-hand - 1).cast(pl.Int64).alias("unit_id"))

    def restrict(self, first: int, stop: int) -> Run:
        """This run reading only hands ``first <= hand_id < stop`` (manifests and metadata unchanged); the
        range should hold whole units (:attr:`cluster`), as :func:`analysis.pieces.pieces` makes them."""
        return dataclasses.replace(self, hand_range=(int(first), int(stop)))

    def parts(self, variant: str, table: str) -> list[Path]:
        """Part files of one table of a variant, as the (verified) manifest lists them, in hand-id order."""
        tdir = layout.table_dir(layout.control_dir(self.path, self.check(variant)), table)
        return [tdir / c["file"] for c in self.manifests[variant]["chunks"]]

    def file_metadata(self, variant: str, table: str = "hands") -> dict[str, str]:
        """The key-value metadata xuezhan writes into each Parquet file of ``table`` (``{}`` before the first
        chunk): ``table``, ``variant``, ``digest`` (of the rules), ``seed``, ``duplicate`` and ``version`` (of
        xuezhan), as strings; read from the first file, every file of the variant's table carries the same."""
        parts = self.parts(variant, table)
        return layout.read_file_metadata(parts[0]) if parts else {}

    def hands(self, variants: str | list[str] | None = None) -> pl.LazyFrame:
        """The ``hands`` table (one row per hand). ``n_wins`` of logs written before it existed (血战 and 标准打法
        only, where every winner wins once) is ``n_winners``."""
        return self.scan("hands", variants).with_columns(
            pl.coalesce("n_wins", pl.col("n_winners").cast(pl.Int16)).alias("n_wins"))

    def players(self, variants: str | list[str] | None = None) -> pl.LazyFrame:
        """The ``players`` table (one row per player per hand)."""
        return self.scan("players", variants)

    def wins(self, variants: str | list[str] | None = None) -> pl.LazyFrame:
        """The ``wins`` table (one row per win)."""
        return self.scan("wins", variants)

    def hand_counts(self) -> pl.DataFrame:
        """``variant, n_hands`` counted from the logs (not from the manifests), in variant order."""
        counts = self.hands().group_by("variant").agg(pl.len().cast(pl.Int64).alias("n_hands")).collect()
        order = pl.DataFrame({"variant": list(self.variants)})
        return order.join(counts, on="variant", how="left").with_columns(pl.col("n_hands").fill_null(0))


def _verified_manifest(vdir: Path, check: str, partial: bool = False) -> dict[str, Any]:
    """A variant's manifest (checksum, fields, rule set and digest, name against its directory) after checking
    its files (``check``: "full" or "sizes"). ``partial``: a writer holds the directory, so part files it has
    written but not yet listed are expected (only listed files are read)."""
    try:
        if not partial:
            return mf.verified(vdir, check)
        manifest = mf.read(vdir)
        bad = [p for lines in mf.bad_chunks(vdir, manifest, check).values() for p in lines]
        if bad:
            raise mf.ManifestError(f"{layout.run_of(vdir)}: {bad[0]}; run `xuezhan verify` for the full list")
        return manifest
    except mf.ManifestError as exc:
        raise RunDirError(str(exc)) from None


def open_run(run_dir: str | Path, check: str = "full", partial: bool = False) -> Run:
    """Open a run directory and verify it; raise :class:`RunDirError` (one line) if it is missing, holds no
    variant, a variant's manifest or files are damaged (naming the files), ``study.json`` is damaged or
    disagrees with the variant directories (a missing, extra, swapped or renamed one), or a xuezhan run is
    writing there (unless ``partial``: then the chunks finished so far are read).

    ``check``: "full" (default) checks the size, SHA-256 and row count of every listed file; "sizes" checks
    sizes only (fast; catches truncated, missing and stray files, not flipped bits).
    Variant order: ``study.json``'s ``variants`` (names, or mappings with a ``name``) when present, followed by
    any other variant (``_variants/variant=*``) in name order. A run of the earlier variant-first layout is
    refused (one line: re-simulate it).
    """
    if check not in mf.CHECKS:
        raise ValueError(f"check must be one of {mf.CHECKS}, got {check!r}")
    path = Path(run_dir)
    if not path.is_dir():
        raise RunDirError(f"{path}: run directory not found")
    old = layout.old_layout(path)
    if old:
        raise RunDirError(old)
    found = [layout.name_of(p) for p in layout.control_dirs(path)]
    if not found:
        raise RunDirError(f"{path}: not a run directory (no {layout.CONTROL}/variant=<name>/ subdirectories)")
    busy = rundir.in_progress(path)
    if busy and not partial:
        raise RunDirError(busy)
    linked = rundir.link_lines(path)  # never read through a link (docs/logs.md, "Links")
    if linked:
        raise RunDirError(layout.shown(linked[0] + (f" (+{len(linked) - 1} more)" if len(linked) > 1 else "")))
    try:
        study = rundir.read_study(path)
    except mf.ManifestError as exc:
        raise RunDirError(str(exc)) from None
    listed = [name for name, _ in rundir.study_arms(study or {}) if name in found]
    variants = tuple(dict.fromkeys(listed + [v for v in found if v not in listed]))
    manifests = {v: _verified_manifest(layout.control_dir(path, v), check, bool(busy)) for v in variants}
    clash = rundir.study_problems(path, study, found, manifests)
    if not busy:  # while a run writes, its new partition directories may precede their manifest
        entries, what = rundir.run_strays(path)
        clash += [f"{p}: {what}" for p in entries]
    if clash:
        raise RunDirError(f"{clash[0]}{f' (+{len(clash) - 1} more)' if len(clash) > 1 else ''}; "
                          f"`xuezhan verify {path}` lists every problem")
    return Run(path=path, variants=variants, manifests=manifests, study=study)


def as_run(run: Run | str | Path) -> Run:
    """Accept an opened :class:`Run` or a path."""
    return run if isinstance(run, Run) else open_run(run)
