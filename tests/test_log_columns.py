"""Each log column holds what its name says: the column table (``simulator.logs.schema.COLUMNS``) names the engine slot
each column is read from, and these tests check the table against the engine's own state constants and the
logged values against what they must mean — a win row re-scored from its own tiles, a winner's players row
against its first win, counts against the rows they count. A slot read into the wrong column (e.g. the
players' ``gen`` and ``fan`` sources swapped) fails here (``test_a_swapped_source_is_caught``)."""

from __future__ import annotations

import numpy as np
import pytest

from simulator.kernel import state as S
from simulator.logs import records, schema

TABLE_OF = {"H_": "hands", "PL_": "players", "W_": "wins"}
NOT_LOGGED = {"H_EV_OVERFLOW"}  # an engine diagnostic (event buffer full), checked by the replay, not a column
SIZES = {"H_N", "PL_N", "W_N"}


def _slots(prefix: str) -> dict[str, int]:
    return {n: v for n, v in vars(S).items() if n.startswith(prefix) and isinstance(v, int) and n not in SIZES}


def test_every_engine_slot_is_the_source_of_exactly_one_column():
    width = {"hands": S.H_N, "players": S.PL_N, "wins": S.W_N}
    for prefix, table in TABLE_OF.items():
        read: list[int] = []
        for c in schema.COLUMNS[table]:
            if c.source.startswith("="):
                continue
            slot, offset, bit = records.slot_of(c.source)
            assert slot.startswith(prefix), (table, c.name, c.source)
            read.append((getattr(S, slot) + offset) * 64 + max(bit, 0))
        assert len(read) == len(set(read)), f"{table}: two columns read the same slot"
        internal = {v for n, v in _slots(prefix).items() if n in NOT_LOGGED}
        assert {r // 64 for r in read} == set(range(width[table])) - internal, table  # every slot, once
    flags = [records.slot_of(c.source) for c in schema.COLUMNS["players"] if c.source.startswith("PL_FLAGS@")]
    assert [b for _, _, b in flags] == list(range(len(schema.FLAGS)))


def test_the_dictionaries_are_the_engine_names():
    from simulator.kernel.tiles import N_KINDS, SUITS, tile_str

    assert tuple(tile_str(k) for k in range(N_KINDS)) == schema.TILE_NAMES and schema.SUITS == SUITS


def test_derived_sources_and_dictionaries_exist():
    for cols in [*schema.COLUMNS.values(), *schema.SESSION_COLUMNS.values()]:
        for c in cols:
            if c.source.startswith("="):
                assert c.source[1:] in records.DERIVED, c.name
            assert bool(c.dictionary) == schema.pa.types.is_dictionary(c.type), c.name
            assert (c.null == schema.NO_WIN) <= schema.pa.types.is_integer(c.type), c.name


def _check_meanings(out: dict, rules) -> None:
    """What every slot-read column must mean, checked from other columns and by re-scoring each win."""
    from simulator.hands.score import score_hand

    h, p, w = out["hands"], out["players"], out["wins"]
    n = len(h["hand_id"])
    assert np.array_equal(p["seat"], np.tile(np.arange(4), n))
    assert np.array_equal(h["dealer"], h["deal_id"] % 4)
    hand_of = {hid: i for i, hid in enumerate(h["hand_id"])}
    hrow = np.array([hand_of[x] for x in w["hand_id"]], np.int64)
    assert np.array_equal(np.bincount(hrow, minlength=n), h["n_wins"])
    won = p["won"].reshape(n, 4)
    assert np.array_equal(won.sum(axis=1), h["n_winners"])
    assert np.array_equal(p["n_kongs"].reshape(n, 4).sum(axis=1), h["n_kongs"])
    assert not (h["exhaustive_draw"] & (h["tiles_left"] > 0)).any()
    assert (p["score_total"].reshape(n, 4).sum(axis=1) == 0).all()
    assert not (p["ready"] & p["won"]).any()
    assert (w["turn"] <= h["turns"][hrow]).all() and (w["capped_fan"] <= w["fan"]).all()
    self_draw = w["kind"] == "self_draw"
    assert ((w["payer"] == -1) == self_draw).all()
    assert np.array_equal(w["received"], w["points"] * w["n_payers"])
    first = {}
    for i in range(len(w["hand_id"])):
        key = (int(hrow[i]), int(w["winner"][i]))
        first.setdefault(key, i)
        void = p["void_suit"][4 * hrow[i] + w["winner"][i]]
        melds = [m for m in w["melds"][i].split(",") if m]
        got = score_hand(rules, w["hand"][i], melds, w["tile"][i], w["kind"][i],
                         [x for x in w["context"][i].split(",") if x], void=void)
        assert (got.hand_type, got.gen, got.fan, got.capped_fan) == (
            w["hand_type"][i], w["gen"][i], w["fan"][i], w["capped_fan"][i]), i
        assert got.patterns == [f for f in schema.FLAGS if w[f][i]], i
        assert (got.points_each if self_draw[i] else got.points) == w["points"][i] * rules.scoring.base, i
    pairs = {"win_order": "win_order", "win_kind": "kind", "win_turn": "turn", "hand_type": "hand_type",
             "gen": "gen", "fan": "fan", "capped_fan": "capped_fan", **{f: f for f in schema.FLAGS}}
    for (hi, seat), i in first.items():
        for pc, wc in pairs.items():
            assert p[pc][4 * hi + seat] == w[wc][i], (pc, hi, seat)
    losers = ~p["won"]
    for c in ("win_order", "win_turn", "gen", "fan", "capped_fan"):
        assert (p[c][losers] == -1).all() or np.isnan(np.asarray(p[c][losers], float)).all(), c


@pytest.fixture(scope="module")
def played():
    from simulator.hands import run_batch
    from simulator.rules import load_rules

    rules = load_rules("chengdu")
    raw = run_batch(rules, np.arange(300, dtype=np.int64), 11)
    return rules, raw


def test_every_column_means_what_its_name_says(played):
    rules, raw = played
    _check_meanings(records.to_columns(raw), rules)


def test_a_swapped_source_is_caught(played, monkeypatch):
    """The mutation: the players' ``gen`` and ``fan`` read each other's slot."""
    rules, raw = played
    cols = list(schema.COLUMNS["players"])
    i, j = (next(k for k, c in enumerate(cols) if c.name == name) for name in ("gen", "fan"))
    cols[i], cols[j] = cols[i]._replace(source=cols[j].source), cols[j]._replace(source=cols[i].source)
    monkeypatch.setitem(schema.COLUMNS, "players", cols)
    with pytest.raises(AssertionError):
        _check_meanings(records.to_columns(raw), rules)


@pytest.mark.parametrize(("config", "seats"), [("chengdu", "[greedy, value, defensive, expert]"),
                                               ("xueliu", "[expert, greedy, value, greedy]")])
def test_claims_are_the_pungs_and_exposed_kongs_of_the_event_log(config, seats):
    """``claims`` (players): per seat, the pungs and 直杠 of a discard the recorded event log shows it making (a
    加杠 upgrades a claimed pung: not a second claim), read through the column table. Mutation: the engine writing
    the seat's kong count into the ``claims`` slot (``p_out[row, PL_CLAIMS] = ps[s, PS_NKONGS]`` in
    ``simulator/engine/batch.py``) fails here."""
    from simulator.hands import run_batch
    from simulator.kernel.settlement import KK_DIRECT
    from simulator.rules import load_rules

    n = 200
    raw = run_batch(load_rules(config, [f"seats={seats}"]), np.arange(n, dtype=np.int64), 5, record=True)
    ev = raw.events
    typ, kind = ev[:, 1], ev[:, 5]
    claimed = (typ == S.EV_PUNG) | ((typ == S.EV_KONG) & (kind == KK_DIRECT))
    expect = np.bincount(4 * ev[claimed, 0].astype(np.int64) + ev[claimed, 2], minlength=4 * n)
    got = records.to_columns(raw)["players"]["claims"]
    assert got.dtype == np.int8 and expect.sum() > n // 4  # claims happen, and often
    assert np.array_equal(got, expect)
    assert (got == 0).any()  # and some players stay 门清
