"""Tiny synthetic run directories in the real log schema, for the analysis tests (hand-checkable numbers).

``write_run`` takes, per variant, a list of hands; each hand lists its four players as keyword dicts (a session
run's hands also give ``session_id`` and ``hand_in_session``, its players ``bankroll``: the session tables). Every
schema column gets a neutral default, ``score_total`` is the sum of the components, the ``hands`` row and the
``wins`` rows are derived from the players (a winning player's ``payer``/``n_payers``/``points`` go to its
wins row), so the three tables are consistent by construction.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from simulator.logs import layout
from simulator.logs import manifest as mf
from simulator.logs.schema import SCORE_COMPONENTS
from simulator.logs.schema import tables as schema_tables
from simulator.rules import FLAGS, load_rules

Z = 1.959963984540054  # the standard normal quantile of a two-sided 95% interval
SESSION_KEYS = ("session_id", "hand_in_session")  # of a hand of a session run (its players add ``bankroll``)


def player(seat: int, bot: str = "greedy", **kw: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"seat": seat, "bot": bot, "dealt": "", "start_shanten": 2, "void_suit": None,
                           "won": False, "win_order": -1, "win_kind": None, "win_turn": -1, "hand_type": None,
                           **{f: False for f in FLAGS}, "gen": -1, "fan": -1, "capped_fan": -1, "n_kongs": 0,
                           "huazhu": False, "ready": False, "declined_wins": 0, "declared": False,
                           **{c: 0 for c in SCORE_COMPONENTS}}
    flags = kw.pop("flags", ())
    extra = {k: kw.pop(k) for k in ("payer", "n_payers", "points") if k in kw}
    row.update(kw)
    for f in flags:
        row[f] = True
    if row["won"]:
        row["pinghu"] = True
        if "gen" not in kw:
            row["gen"] = 0
    row["score_total"] = sum(row[c] for c in SCORE_COMPONENTS)
    row["_extra"] = extra
    return row


def _rows(variant: str, hands: list[dict[str, Any]]) -> tuple[list, list, list]:
    hrows, prows, wrows = [], [], []
    for hand in hands:
        hid = hand["hand_id"]
        players = hand["players"]
        won = [p for p in players if p["won"]]
        hrows.append({"variant": variant, "hand_id": hid, "deal_id": hand.get("deal_id", hid),
                      "rotation": hand.get("rotation", 0), "dealer": hand.get("dealer", hid % 4), "exchange": "none",
                      "n_winners": len(won), "exhaustive_draw": hand["exhaustive_draw"],
                      "tiles_left": 0 if hand["exhaustive_draw"] else 10,
                      "n_kongs": sum(p["n_kongs"] for p in players), "turns": hand.get("turns", 40),
                      **{k: hand[k] for k in SESSION_KEYS if k in hand}})
        for p in players:
            extra = p["_extra"]
            prows.append({"variant": variant, "hand_id": hid, "deal_id": hand.get("deal_id", hid),
                          **{k: v for k, v in p.items() if k != "_extra"}})
            if p["won"]:
                n_payers = extra.get("n_payers", 1)
                wrows.append({"variant": variant, "hand_id": hid, "deal_id": hand.get("deal_id", hid),
                              "win_order": p["win_order"], "winner": p["seat"], "payer": extra.get("payer", -1),
                              "n_payers": n_payers, "kind": p["win_kind"], "tile": "5p", "hand": "", "melds": "",
                              "context": "", "hand_type": p["hand_type"], **{f: p[f] for f in FLAGS},
                              "gen": p["gen"], "fan": p["fan"], "capped_fan": p["capped_fan"],
                              "points": extra.get("points", 0), "received": extra.get("points", 0) * n_payers,
                              "turn": p["win_turn"]})
    return hrows, prows, wrows


def _parquet(rows: list[dict[str, Any]], sch: pa.Schema, meta: dict[bytes, bytes] | None = None) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pylist(rows, schema=sch if meta is None else sch.with_metadata(meta)), sink)
    return sink.getvalue().to_pybytes()


def write_run(root: Path, variants: dict[str, list[dict[str, Any]]], *, study: dict | None = None,
              overrides: dict[str, dict] | None = None, seed: int = 7, parts: int = 2) -> Path:
    """Write ``root/{hands,players,wins}/variant=<name>/part-*.parquet`` in ``parts`` chunks of hand ids, and
    a checksummed manifest (``root/_variants/variant=<name>/``)
    as the runner writes it (hand ids must be ``0 … n−1``); return ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    for name, hands in variants.items():
        vdir = layout.control_dir(root, name)
        vdir.mkdir(parents=True, exist_ok=True)
        tables = dict(zip(mf.TABLES, _rows(name, hands), strict=True))
        rules = load_rules("chengdu", (overrides or {}).get(name))
        # every file says which run it belongs to, as the runner writes it (the manifest's facts check it)
        facts = {"variant": name, "digest": rules.digest(), "seed": seed, "duplicate": False, "version": "0",
                 "log_format": 0}  # no log_format in the manifest below: 0
        size = max(1, -(-len(hands) // parts))
        chunks = []
        for first in range(0, len(hands), size):
            last = min(first + size, len(hands)) - 1
            blobs = {t: _parquet([r for r in tables[t] if first <= r["hand_id"] <= last], sch,
                                 layout.file_metadata(t, **facts))
                     for t, sch in schema_tables(any("session_id" in h for h in hands)).items()}
            for t, blob in blobs.items():
                layout.table_dir(vdir, t).mkdir(parents=True, exist_ok=True)
                (layout.table_dir(vdir, t) / mf.part_name(first, last)).write_bytes(blob)
            rows = {t: pq.read_metadata(layout.table_dir(vdir, t) / mf.part_name(first, last)).num_rows
                    for t in mf.TABLES}
            chunks.append(mf.chunk_entry(first, last, rows, {t: mf.file_info(b) for t, b in blobs.items()}))
        manifest = {"format": mf.FORMAT, "package": "xuezhan", "version": "0", "variant": name, "source": {},
                    "digest": rules.digest(), "rules": rules.resolved(), "seed": seed, "duplicate": False,
                    "hands": len(hands), "chunk_size": size, "chunks": chunks,
                    "economy": rules.economy.model_dump()}
        mf.refresh_totals(manifest)
        (vdir / mf.MANIFEST).write_bytes(mf.manifest_bytes(manifest))
    if study is not None:
        (root / "study.json").write_text(json.dumps(study))
    return root


# ---------------------------------------------------------------------------------------------------------
# The worked example used by the tests: four hands, seats 0-1 greedy and 2-3 value. Every number asserted in
# tests/test_analysis_*.py is derived by hand from these rows (see the comments there).

def _base_hands(huazhu: int = 16) -> list[dict[str, Any]]:
    g, v = "greedy", "value"
    return [
        # hand 0: seat 0 self-draw pinghu (2 from each), seat 1 ron duiduihu off seat 2 (2), exhaustive draw:
        # seat 3 (not ready) pays seat 2 (ready) 查大叫 4.
        {"hand_id": 0, "exhaustive_draw": True, "players": [
            player(0, g, won=True, win_order=1, win_kind="self_draw", win_turn=10, hand_type="pinghu",
                   flags=("zimo", "menqing"), fan=0, capped_fan=0, score_win=6, payer=-1, n_payers=3, points=2),
            player(1, g, won=True, win_order=2, win_kind="discard", win_turn=20, hand_type="duiduihu",
                   flags=("duiduihu",), fan=1, capped_fan=1, score_win=0, payer=2, points=2),
            player(2, v, score_win=-4, score_chadajiao=4, ready=True),
            player(3, v, score_win=-2, score_chadajiao=-4)]},
        # hand 1: seat 3 concealed kong (2 from each); seat 2 ron qingyise+1 gen off seat 0 (8); seat 1 self-draw
        # qidui (5 from seats 0 and 3); seat 3 ron pinghu off seat 0 (1).
        {"hand_id": 1, "exhaustive_draw": False, "players": [
            player(0, g, score_win=-14, score_kong=-2),
            player(1, g, won=True, win_order=2, win_kind="self_draw", win_turn=15, hand_type="qidui",
                   flags=("qidui", "zimo", "menqing"), fan=2, capped_fan=2, score_win=10, score_kong=-2,
                   payer=-1, n_payers=2, points=5),
            player(2, v, won=True, win_order=1, win_kind="discard", win_turn=5, hand_type="qingyise",
                   flags=("qingyise",), gen=1, fan=3, capped_fan=3, score_win=8, score_kong=-2, payer=0, points=8),
            player(3, v, won=True, win_order=3, win_kind="discard", win_turn=30, hand_type="pinghu", fan=0,
                   capped_fan=0, n_kongs=1, score_win=-4, score_kong=6, payer=0, points=1)]},
        # hand 2: exhaustive draw, no winner; seat 0 is 花猪 (pays `huazhu` to each of 3) and refunds its added
        # kong (1 from each); seats 1-3 ready.
        {"hand_id": 2, "exhaustive_draw": True, "players": [
            player(0, g, huazhu=True, n_kongs=1, score_kong=3, score_refund=-3, score_huazhu=-3 * huazhu),
            player(1, g, ready=True, score_kong=-1, score_refund=1, score_huazhu=huazhu),
            player(2, v, ready=True, score_kong=-1, score_refund=1, score_huazhu=huazhu),
            player(3, v, ready=True, score_kong=-1, score_refund=1, score_huazhu=huazhu)]},
        # hand 3: seat 1 (declined one win earlier) ron qingdui +2 gen = 5 fan capped at 4 off seat 3 (16); seat 0
        # robs seat 2's added kong, pinghu + qiangganghu (2); exhaustive: seat 3 pays seat 2 查大叫 2.
        {"hand_id": 3, "exhaustive_draw": True, "players": [
            player(0, g, won=True, win_order=2, win_kind="rob_kong", win_turn=35, hand_type="pinghu",
                   flags=("qiangganghu",), fan=1, capped_fan=1, score_win=2, payer=2, points=2),
            player(1, g, won=True, win_order=1, win_kind="discard", win_turn=25, hand_type="qingdui",
                   flags=("qingyise", "duiduihu"), gen=2, fan=5, capped_fan=4, declined_wins=1, score_win=16,
                   payer=3, points=16),
            player(2, v, ready=True, score_win=-2, score_chadajiao=2),
            player(3, v, score_win=-16, score_chadajiao=-2)]},
    ]


def example_run(root: Path, **kw: Any) -> Path:
    """Variants ``base`` (花猪 16, the study baseline) and ``alt`` (花猪 8, otherwise the same four hands);
    ``alt``'s manifest economy is N=2, A=1."""
    kw.setdefault("study", {"name": "example", "baseline": "base", "variants": ["base", "alt"], "hands": 4,
                            "seed": 7, "duplicate": False})
    return write_run(root, {"base": _base_hands(16), "alt": _base_hands(8)},
                     overrides={"base": {"void_suit": "none"},
                                "alt": {"void_suit": "none", "settlement": {"huazhu_penalty": 8},
                                        "economy": {"room_factor": 2, "rake": 1}}}, **kw)


def row(df: pl.DataFrame, **where) -> dict:
    """The one row of ``df`` matching ``where`` (column == value), as a dict; fails unless exactly one matches."""
    sub = df.filter(*[pl.col(k) == v for k, v in where.items()])
    assert sub.height == 1, (where, sub)
    return sub.row(0, named=True)
