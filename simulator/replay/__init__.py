"""``xuezhan replay``: one hand as a human would follow it, from the event log of the compiled engine.

The engine records events only when asked (``play_hands(..., record=True)``); :mod:`simulator.replay.log` records
a hand, :mod:`simulator.replay.audit` replays its events on plain Python hands (:class:`ReplayedHand`), checking as it
goes that every event is possible, and :mod:`simulator.replay.text` prints them with Chinese tile names. This module
replays a hand of a logged run exactly as it was played, verified against its logged rows, and shows a hand; it
re-exports the names of those modules, where callers import them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

from simulator.logs.schema import SCORE_COMPONENTS
from simulator.replay.audit import ReplayedHand as ReplayedHand
from simulator.replay.audit import audit as audit
from simulator.replay.log import EventLogError as EventLogError
from simulator.replay.log import HandLog, ReplayError, record_hand
from simulator.replay.log import split_logs as split_logs
from simulator.replay.text import COMP_EN as COMP_EN
from simulator.replay.text import COMP_ZH as COMP_ZH
from simulator.replay.text import EXCHANGE_ZH as EXCHANGE_ZH
from simulator.replay.text import KONG_EN as KONG_EN
from simulator.replay.text import KONG_ZH as KONG_ZH
from simulator.replay.text import LANGS as LANGS
from simulator.replay.text import REASON_EN as REASON_EN
from simulator.replay.text import REASON_ZH as REASON_ZH
from simulator.replay.text import SUIT_NAMES_EN as SUIT_NAMES_EN
from simulator.replay.text import TEXT as TEXT
from simulator.replay.text import WIN_EN as WIN_EN
from simulator.replay.text import WIN_ZH as WIN_ZH
from simulator.replay.text import describe as describe
from simulator.replay.text import language, lines
from simulator.rules import load_rules, validate

# ---------------------------------------------------------------------------------------------------------
# Hands of a logged run: the rules, seed and seating recorded in the manifest, checked against the logged rows.

# Columns a replayed hand must reproduce exactly: the deal, who won, how, and every amount.
VERIFIED_HAND_COLUMNS = ("deal_id", "rotation", "dealer", "exchange", "n_winners", "n_wins", "exhaustive_draw",
                         "tiles_left", "n_kongs", "turns")
VERIFIED_PLAYER_COLUMNS = ("bot", "dealt", "won", "win_kind", "hand_type", "n_kongs", "huazhu", "declined_wins",
                           *SCORE_COMPONENTS, "score_total")


def _run_variant(run_dir: Path, variant: str | None) -> str:
    """The variant to replay: the one named, else the study's baseline, else the run's only variant."""
    if not run_dir.is_dir():
        raise ReplayError(f"--run {run_dir}: directory not found")
    from simulator.logs import layout

    old = layout.old_layout(run_dir)
    if old:
        raise ReplayError(f"--run {old}")
    found = [layout.name_of(p) for p in layout.control_dirs(run_dir)]
    if not found:
        raise ReplayError(f"--run {run_dir}: not a run directory (no {layout.CONTROL}/variant=<name>/ subdirectories)")
    if variant is not None:
        if variant not in found:
            raise ReplayError(f"--variant {variant!r}: not in {run_dir} (has: {', '.join(found)})")
        return variant
    study = run_dir / "study.json"
    if study.is_file():
        try:
            baseline = json.loads(study.read_text(encoding="utf-8")).get("baseline")
        except (OSError, ValueError, AttributeError):
            baseline = None
        if baseline in found:
            return baseline
    if len(found) == 1:
        return found[0]
    raise ReplayError(f"--run {run_dir} holds {len(found)} variants ({', '.join(found)}): choose one with --variant")


def _logged_rows(vdir: Path, manifest: dict, table: str, hand_id: int) -> list[dict]:
    """The rows of ``hand_id`` in its chunk of ``table`` (``[]`` when the chunk is not finished: the manifest lists
    finished chunks only). The file is checked against the manifest's size and SHA-256 before it is read."""
    from simulator.logs.layout import run_of, table_dir
    from simulator.logs.manifest import sha256_file

    for chunk in manifest["chunks"]:
        if chunk["first"] <= hand_id <= chunk["last"]:
            path = table_dir(vdir, table) / chunk["file"]
            if not path.is_file() or sha256_file(path) != chunk["sha256"][table]:
                raise ReplayError(f"{path}: missing or damaged (run `xuezhan verify {run_of(vdir)}`)")
            return pq.read_table(path, filters=[("hand_id", "==", hand_id)]).to_pylist()
    return []


def verify(log: HandLog, hand_row: dict, player_rows: list[dict]) -> None:
    """Raise :class:`ReplayError` unless the replayed hand reproduces the logged rows (see ``VERIFIED_*``)."""
    mismatches = [f"{c}: logged {hand_row[c]!r}, replayed {log.hand[c]!r}"
                  for c in VERIFIED_HAND_COLUMNS if c in hand_row and hand_row[c] != log.hand[c]]
    for row in sorted(player_rows, key=lambda r: r["seat"]):
        mine = log.players[row["seat"]]
        mismatches += [f"seat {row['seat']} {c}: logged {row[c]!r}, replayed {mine[c]!r}"
                       for c in VERIFIED_PLAYER_COLUMNS if c in row and row[c] != mine[c]]
    if len(player_rows) != len(log.players):
        mismatches.append(f"{len(player_rows)} logged player rows, {len(log.players)} replayed")
    if mismatches:
        raise ReplayError(f"hand {log.hand_id} does not replay to its logged result ({mismatches[0]}"
                          f"{f'; +{len(mismatches) - 1} more' if len(mismatches) > 1 else ''}): the run was made "
                          "by another version of the engine")


def record_logged_hand(run_dir: str | Path, variant: str | None, hand_id: int) -> HandLog:
    """Replay hand ``hand_id`` of a run directory exactly as it was played — the variant's resolved rules
    (overrides included), seed and seating (rotated under duplicate seating) from its manifest — and verify it
    against the logged rows."""
    from simulator.run.runner import read_manifest, variant_dir

    run_dir = Path(run_dir)
    name = _run_variant(run_dir, variant)
    vdir = variant_dir(run_dir, name)
    manifest = read_manifest(vdir)
    if not 0 <= hand_id < int(manifest["hands"]):
        raise ReplayError(f"--hand {hand_id}: {vdir} logged hands 0..{int(manifest['hands']) - 1}")
    hands = _logged_rows(vdir, manifest, "hands", hand_id)
    if not hands and any(c["first"] <= hand_id <= c["last"] for c in manifest["chunks"]):
        raise ReplayError(f"--hand {hand_id}: not played in {vdir} (its session stopped earlier, a player broke)")
    if not hands:
        raise ReplayError(f"--hand {hand_id}: its chunk in {vdir} is not finished (rerun the simulation with --resume)")
    rules = validate({**manifest["rules"], "name": name}, f"{vdir} manifest")  # the name is not part of the game
    dealer = int(hands[0]["dealer"]) if rules.session is not None else None  # chained from the previous hand
    log = record_hand(rules, hand_id, int(manifest["seed"]), duplicate=bool(manifest["duplicate"]), dealer=dealer)
    verify(log, hands[0], _logged_rows(vdir, manifest, "players", hand_id))
    return log


def show(log: HandLog, lang: str = "zh") -> None:
    """Print a hand's lines on the terminal."""
    from rich.console import Console

    language(lang)
    console = Console(highlight=False, soft_wrap=True)
    for line in lines(log, lang):
        console.print(line)


def replay(config: str, seed: int, hand_id: int = 0, overrides: list[str] | None = None, *,
           duplicate: bool = False, lang: str = "zh") -> None:
    """Print hand ``hand_id`` of ``seed`` under rule set ``config`` (name or path); ``duplicate``: the seating
    of duplicate play (hand_id = 4·deal_id + rotation)."""
    language(lang)
    show(record_hand(load_rules(config, overrides), hand_id, seed, duplicate=duplicate), lang)
