"""The bot table (``simulator.rules.bot_table``): a compiled bot declared once — its log id, module, parameters — and
what follows from its row: the seat's fields (validation, defaults, JSON Schema, ``xuezhan tune``'s ranges), the seat's
parameter row, the engine's dispatch (generated from the rows) and the players log's append-only ``bot``
dictionary."""

from __future__ import annotations

import importlib
import inspect

import numpy as np
import pytest
from pydantic import ValidationError

from simulator import bots
from simulator.hands import run_batch
from simulator.kernel import state
from simulator.kernel.settlement import KK_DIRECT
from simulator.logs.encode import encode_tables
from simulator.logs.records import to_columns
from simulator.logs.schema import COLUMNS
from simulator.rules import TUNABLE, BotSpec, bot_table, load_rules
from simulator.rules.bot_table import BOT_LABELS, BOT_TABLE, BY_NAME, PYTHON_BOT, Bot, Param

# The ids of log format 1: never renumbered (files written since the first run carry them).
FORMAT_1 = ("random", "greedy", "value", "defensive", "expert", "python")


def test_log_ids_are_stable_and_appended():
    assert BOT_LABELS[:PYTHON_BOT + 1] == FORMAT_1
    ids = sorted(b.id for b in BOT_TABLE)
    assert len(set(ids)) == len(ids) and PYTHON_BOT not in ids
    assert ids == [i for i in range(len(BOT_LABELS)) if i != PYTHON_BOT]  # no gap: a new bot takes the next id
    bot = next(c for c in COLUMNS["players"] if c.name == "bot")
    assert bot.dictionary == FORMAT_1 and bot.code_names == BOT_LABELS  # codes by id; the format-1 dictionary


@pytest.mark.parametrize("bot", BOT_TABLE, ids=lambda b: b.name)
def test_each_parameter_is_a_validated_seat_field(bot: Bot):
    for p in bot.params:
        field = BotSpec.model_fields[p.name]
        assert field.default == p.default and field.description == p.doc
        schema = BotSpec.model_json_schema()["properties"][p.name]
        assert (schema["minimum"], schema["maximum"], schema["default"]) == (p.low, p.high, p.default)
        for bad in (p.low - 1, p.high + 1):
            with pytest.raises(ValidationError):
                BotSpec(bot=bot.name, **{p.name: bad})
    assert {p.name: p.tune for p in bot.params if p.tune} == {k: v for k, v in TUNABLE.items()
                                                              if k in {p.name for p in bot.params}}


@pytest.mark.parametrize("bot", BOT_TABLE, ids=lambda b: b.name)
def test_a_seat_row_holds_its_own_bots_parameters_at_their_slots(bot: Bot):
    values = {p.name: (p.high if p.kind == "int" else 1.234) for p in bot.params}
    row = load_rules("chengdu", {"seats": [{"bot": bot.name, **values}, "greedy", "greedy", "greedy"]}
                     ).bot_arrays()[1][0]
    assert row.shape == (bot_table.N_BOT_PARAMS,)
    for p in bot.params:
        assert row[bot_table.slot(bot.name, p.name)] == (p.high if p.kind == "int" else 1234)
    assert not row[len(bot.params):].any()


def test_a_python_bot_and_a_bot_without_parameters_get_a_zero_row():
    assert not BotSpec(bot="greedy", defence=3.0, decline_below=5).to_row().any()
    assert not BotSpec(bot="simulator.agents:RandomBot").to_row().any()


def test_the_flat_fields_stay_in_every_seats_rule_set():
    """The digests of rule sets written before the table: every seat writes the parameters it had then."""
    dumped = BotSpec(bot="greedy").model_dump()
    assert set(bot_table.FLAT_PARAMS) <= set(dumped)
    assert list(BotSpec.model_fields)[3:3 + len(bot_table.FLAT_PARAMS)] == list(bot_table.FLAT_PARAMS)


@pytest.mark.parametrize("decision", bot_table.DECISIONS)
def test_every_bot_is_dispatched_to_its_own_decision_or_its_bases(decision: str):
    seen: list[int] = []
    for name, ids, param in bots.groups(decision):
        owners = {bot_table.decision_bot(b.name, decision, bots._defines) for b in BOT_TABLE if b.id in ids}
        for owner in owners:
            assert bots._FUNCTIONS[name] is getattr(importlib.import_module(BY_NAME[owner].module), f"seat_{decision}")
        assert param == any(BY_NAME[o].params for o in owners)
        # a simple line-up's None rows prune the parameterised branches: no bot without parameters sits there
        assert not (param and set(ids) & set(bot_table.SIMPLE_BOTS)), (decision, ids)
        seen += ids
    assert sorted(seen) == sorted(b.id for b in BOT_TABLE)  # each id in exactly one branch
    assert f"def bot_{decision}(" in bots.dispatch_source()


def _run_dispatcher(name: str, bot_id: int, bpar, calls: list | None = None) -> str:
    """Run the generated dispatcher ``name`` as plain Python for a seat of bot ``bot_id``: every bot's decision and
    the view/hand builders are stand-ins, so the answer is the name of the decision function it reached (``calls``
    gets what it counted as seen around it, ``("own_ckongs", 1)`` …, and the decision, in order)."""
    calls = [] if calls is None else calls
    namespace = {"njit": lambda *a, **k: (lambda f: f), "view_of": lambda *a: "view", "planned_hand": lambda *a: "hand",
                 "hand_tiles": lambda *a: "hand", "PS_EVOID": 0,
                 "own_ckongs": lambda *a: calls.append(("own_ckongs", a[-1])),
                 "laid_down": lambda *a: calls.append(("laid_down", a[-1]))}
    for fn in bots._FUNCTIONS:
        namespace[fn] = lambda *a, _fn=fn: calls.append(_fn) or _fn
    namespace[name.replace("bot_", "param_", 1)] = lambda *a: "param"  # an inlined dispatcher's ordinary call
    exec(bots.dispatch_source(), namespace)  # noqa: S102
    params = list(inspect.signature(namespace[name]).parameters)

    class Game:
        bots = np.full(4, bot_id)

    class St:
        mk = mt = nm = conc = np.zeros(4)
        ps = np.zeros((4, 1))
        visible = None

    values = {"game": Game, "st": St, "bpar": bpar, "seat": 0, "opts": 1}
    return namespace[name](*(values.get(a, 0) for a in params))


@pytest.mark.parametrize("decision", bot_table.DECISIONS)
def test_the_generated_dispatchers_send_each_bot_to_its_decision(decision: str):
    """The text the engine compiles, run as Python: each bot id reaches the function ``groups`` assigns it, through
    ``bot_*`` for a bot without parameters and through ``param_*`` (or the parameter row's branch) otherwise."""
    for fn, ids, param in bots.groups(decision):
        for bot_id in ids:
            got = _run_dispatcher(f"bot_{decision}", bot_id, np.zeros(bot_table.N_BOT_PARAMS, np.int64))
            if got == "param":
                assert param
                got = _run_dispatcher(f"param_{decision}", bot_id, np.zeros(bot_table.N_BOT_PARAMS, np.int64))
            assert got == fn, (decision, bot_id)


@pytest.mark.parametrize("decision", ["discard", "claim", "self_kong"])
def test_the_dispatcher_counts_what_a_bot_sees_around_its_decision(decision: str):
    """A bot's ``sees`` (the expert: its own concealed kongs and the hands winners laid down) is added to ``visible``
    by the dispatcher just around that bot's call and taken out again in reverse order (the discard counts every
    bot's own concealed kongs anyway); a bot without ``sees`` gets only what every bot gets."""
    for fn, ids, param in bots.groups(decision):
        by_id = {b.id: b.name for b in BOT_TABLE}
        owner = BY_NAME[bot_table.decision_bot(by_id[ids[0]], decision, bots._defines)]
        for bot_id in ids if param else ():
            calls: list = []
            assert _run_dispatcher(f"param_{decision}", bot_id, np.zeros(bot_table.N_BOT_PARAMS, np.int64), calls) == fn
            around = [c for c in bot_table.SEES if c in owner.sees or (decision == "discard" and c == "own_ckongs")]
            assert calls == [*((c, 1) for c in around), fn, *((c, -1) for c in reversed(around))], (bot_id, calls)
    assert set(BY_NAME["expert"].sees) == {"own_ckongs", "laid_down"}


def test_a_parameter_declared_twice_differently_is_refused(monkeypatch):
    twice = (Bot("a", 0, "m", "d", (Param("x", "int", 1, 0, 2, "x"),)),
             Bot("b", 1, "m", "d", (Param("x", "int", 2, 0, 2, "x"),)))
    monkeypatch.setattr(bot_table, "BOT_TABLE", twice)
    monkeypatch.setattr(bot_table, "FLAT_PARAMS", ())
    with pytest.raises(ValueError, match="declared twice"):
        bot_table.all_params()


def test_a_files_bot_dictionary_is_the_labels_up_to_its_last_bot_then_python_names():
    assert bot_table.file_labels([1, 4]) == FORMAT_1
    assert bot_table.file_labels([1, len(FORMAT_1) + 3], ("my:Bot",)) == (*FORMAT_1, "my:Bot")  # a name's code
    if len(BOT_LABELS) > len(FORMAT_1):
        newest = len(BOT_LABELS) - 1
        assert bot_table.file_labels([1, newest]) == BOT_LABELS
    assert np.all(np.diff([len(bot_table.file_labels([i])) for i in range(len(BOT_LABELS))]) >= 0)


# ---- closed: the bot added the new way (its row in simulator/rules/bot_table.py and simulator/bots/closed.py) --------
def _play(seats, hands=80):
    return run_batch(load_rules("chengdu", {"seats": seats}), np.arange(hands, dtype=np.int64), 5, record=True)


def _claims(raw, seat: int) -> int:
    """Pungs and exposed kongs of a discard made by ``seat`` (events: hand row, type, seat, tile, amount, a, b)."""
    ev = raw.events
    pung = (ev[:, 1] == state.EV_PUNG) & (ev[:, 2] == seat)
    kong = (ev[:, 1] == state.EV_KONG) & (ev[:, 2] == seat) & (ev[:, 5] == KK_DIRECT)
    return int(pung.sum() + kong.sum())


def test_closed_claims_no_discard_where_greedy_does():
    assert _claims(_play([{"bot": "closed"}, "greedy", "greedy", "greedy"]), 0) == 0
    assert _claims(_play(["greedy"] * 4), 0) > 0  # in the same seat on the same walls greedy claims


def test_closed_that_opens_at_once_plays_greedys_hands():
    """``open_wall: 56`` claims as greedy throughout: every decision dispatched to greedy's, logged as ``closed``."""
    a, b = _play([{"bot": "closed", "open_wall": 56}, "greedy", "greedy", "greedy"]), _play(["greedy"] * 4)
    assert (a.p[0::4, state.PL_BOT] == BOT_LABELS.index("closed")).all()
    a.p[:, state.PL_BOT] = b.p[:, state.PL_BOT]
    for name, arr in b.arrays().items():
        assert np.array_equal(getattr(a, name), arr), name


def test_a_new_bot_changes_no_file_that_does_not_seat_it():
    def labels(raw):
        players = encode_tables(to_columns(raw, encoded=True))["players"]
        return tuple(players.column("bot").chunk(0).dictionary.to_pylist())

    assert labels(_play(["expert", "greedy", "value", "defensive"], hands=8)) == FORMAT_1
    assert labels(_play([{"bot": "closed"}, "greedy", "greedy", "greedy"], hands=8)) == (*FORMAT_1, "closed")
    chengdu = load_rules("chengdu", {"seats": ["expert", "greedy", "value", "defensive"]})
    assert all("open_wall" not in s for s in chengdu.resolved()["seats"])  # its digest as before the bot
    mine = load_rules("chengdu", {"seats": [{"bot": "closed", "open_wall": 9}, "greedy", "greedy", "greedy"]})
    assert mine.resolved()["seats"][0]["open_wall"] == 9 and mine.bot_arrays()[1][0][0] == 9


@pytest.mark.parametrize("second", ["greedy", "closed"])
def test_a_python_bots_code_follows_its_lineups_labels(second):
    """A named Python bot's code comes after the labels of the compiled bots seated with it, so the table's newer
    bots move no code (nor file) of a run that does not seat them."""
    from simulator.agents import RandomBot
    from simulator.hands.game import play_hands

    rules = load_rules("chengdu", {"seats": ["greedy", second, "greedy", "greedy"]})
    raw = play_hands(rules, np.arange(2, dtype=np.int64), 1, {0: RandomBot()})
    base = FORMAT_1 if second == "greedy" else (*FORMAT_1, "closed")
    assert raw.bot_labels == (*base, "simulator.agents:RandomBot")
    assert set(raw.p[0::4, state.PL_BOT].tolist()) == {len(base)}
    players = encode_tables(to_columns(raw, encoded=True))["players"]
    assert tuple(players.column("bot").chunk(0).dictionary.to_pylist()) == raw.bot_labels
