"""Engine invariants over every config, determinism, seeding and the output contract.

Each config is simulated once (20,000 hands, cached) and read by several tests; a few hundred hands per config
are also replayed event by event (simulator.replay.audit) and a few hundred wins re-scored through the Python
path (simulator.hands.score.score_hand) and by the independent reference scorer (tests/reference_scorer.py).
"""

from __future__ import annotations

import gc
import os

import numpy as np
import pyarrow as pa
import pytest
from engine_helpers import CONFIGS, differing, logs, per_hand, play, rules_of
from reference_scorer import check_wins

from simulator.hands import play_hands
from simulator.hands.score import score_hand
from simulator.kernel import state as S
from simulator.kernel.shape import is_complete
from simulator.kernel.tables import suit_table
from simulator.kernel.tiles import SUITS, format_counts, tile_str
from simulator.logs import records
from simulator.logs.schema import SCORE_COMPONENTS, TABLES
from simulator.replay import audit
from simulator.rules import FLAGS, HAND_TYPES, load_rules

N_BIG = 20_000
N_ONE_KEY = 5_000  # configs that change one key of chengdu: the invariants are the same code paths
FULL_SIZE = ("chengdu", "chengdu_points", "qq_sichuan", "xueliu")  # own scoring tables or modes


def n_big(name: str) -> int:
    return N_BIG if name in FULL_SIZE else N_ONE_KEY
SEED = 2024


@pytest.fixture(scope="module", params=CONFIGS)
def big(request):
    """``(config name, raw arrays, columns)`` of 20,000 hands (5,000 for a one-key variant of chengdu).
    Module-scoped and parametrized, so pytest runs every test of one config together and keeps only one config's
    batch in memory."""
    raw, cols = play(load_rules(request.param), n_big(request.param), SEED)
    return request.param, raw, cols


def test_money_is_zero_sum_and_components_add_up(big):
    _, _, cols = big
    p = cols["players"]
    comps = np.stack([p[c] for c in SCORE_COMPONENTS]).astype(np.int64)
    assert np.array_equal(comps.sum(axis=0), p["score_total"])
    assert (per_hand(p["score_total"]).sum(axis=1) == 0).all()
    for c in SCORE_COMPONENTS:  # every payment stays within its component
        assert (per_hand(p[c]).sum(axis=1) == 0).all(), c


def test_hand_player_and_win_rows_agree(big):
    name, _, cols = big
    rules = load_rules(name)
    h, p, w = cols["hands"], cols["players"], cols["wins"]
    won = per_hand(p["won"])
    assert np.array_equal(won.sum(axis=1), h["n_winners"])
    per_row = np.bincount(np.searchsorted(h["hand_id"], w["hand_id"]), minlength=n_big(name))
    assert np.array_equal(per_row, h["n_wins"])
    exh = h["exhaustive_draw"]
    assert (h["tiles_left"][exh] == 0).all()
    if rules.mode != "xueliu":
        assert np.array_equal(h["n_wins"], h["n_winners"])
    if rules.mode == "xuezhan":
        assert (h["n_winners"][~exh] == 3).all() and (h["n_winners"][exh] <= 2).all()
    elif rules.mode == "xueliu":  # only the wall ends a hand; winners win again
        assert exh.all() and (h["n_winners"] <= 4).all() and (h["n_wins"] >= h["n_winners"]).all()
        assert (h["n_wins"] > h["n_winners"]).mean() > 0.5
    else:
        assert (h["n_winners"][~exh] >= 1).all() and (h["n_winners"][exh] == 0).all()
        assert (w["win_order"] == 1).all()
    assert ((h["tiles_left"] >= 0) & (h["tiles_left"] <= 55)).all()
    assert np.array_equal(per_hand(p["n_kongs"]).sum(axis=1), h["n_kongs"])
    # a player's win columns are those of its wins row
    wrow = {}  # the first win of each winner (血流: the players table describes it)
    for i, (a, b) in enumerate(zip(w["hand_id"].tolist(), w["winner"].tolist(), strict=True)):
        wrow.setdefault((a, b), i)
    idx = np.array([wrow[(a, b)] for a, b in zip(p["hand_id"][p["won"]].tolist(), p["seat"][p["won"]].tolist(),
                                                 strict=True)])
    for c in ("fan", "capped_fan", "gen", "hand_type", "win_order", *FLAGS):
        assert np.array_equal(p[c][p["won"]], w[c][idx]), c
    assert np.array_equal(p["win_kind"][p["won"]], w["kind"][idx])
    for c in ("fan", "capped_fan", "gen", "win_order", "win_turn"):
        assert (p[c][~p["won"]] == -1).all(), c
    assert all(x is None for x in p["hand_type"][~p["won"]])
    assert not p["ready"][p["won"]].any()
    assert not (p["huazhu"] & ~np.repeat(exh, 4)).any()
    assert (p["score_huazhu"][~np.repeat(exh, 4)] == 0).all()
    assert (p["score_chadajiao"][~np.repeat(exh, 4)] == 0).all()
    # received = points × payer shares; self-draw payers = players still in
    assert np.array_equal(w["received"], w["points"] * w["n_payers"])
    assert ((w["payer"] == -1) == ((w["kind"] == "self_draw") & (w["payer"] < 0))).all()
    assert (w["n_payers"][w["kind"] != "self_draw"] == 1).all()
    if rules.mode == "xueliu":  # nobody leaves: every self-draw is paid by the three others
        assert (w["n_payers"][w["kind"] == "self_draw"] == 3).all()


def test_every_win_is_a_legal_two_suit_hand_without_void(big):
    name, raw, cols = big
    rules = load_rules(name)
    w, p = cols["wins"], cols["players"]
    table = suit_table()
    void = per_hand(raw.p[:, S.PL_VOID])[raw.w_hand, w["winner"]]
    for i in range(len(w["hand_id"])):
        assert is_complete(table, raw.wconc[i], raw.wmk[i], raw.wmt[i], int(raw.w[i, S.W_NMELDS]),
                           int(void[i])), i
    held = raw.wconc.reshape(-1, 3, 9).sum(axis=2).astype(np.int64)
    nm = raw.w[:, S.W_NMELDS]
    for j in range(4):
        has = j < nm
        np.add.at(held, (np.flatnonzero(has), raw.wmt[has, j] // 9), 3)
    assert ((held > 0).sum(axis=1) <= 2).all()
    if rules.void_suit != "none":
        assert (held[np.arange(len(void)), void] == 0).all()
        assert all(v in SUITS for v in p["void_suit"])
    else:
        assert all(v is None for v in p["void_suit"])
    assert (held.sum(axis=1) == 14).all()  # kongs counted as three


def test_win_scores_match_the_python_scorer_and_the_reference(big):
    """A sample of wins (every rare context but 天胡/地胡 included) scored by the Python path (``xuezhan score``:
    the same compiled evaluator, so this checks the path) and by the independent reference
    (tests/reference_scorer.py)."""
    name, _, cols = big
    rules = load_rules(name)
    w, p = cols["wins"], cols["players"]
    void = per_hand(np.array([SUITS.index(v) if v else -1 for v in p["void_suit"]]))
    rng = np.random.default_rng(0)
    # every rare context found (up to 20 each), plus a random sample
    rare = [np.flatnonzero(w[f])[:20] for f in ("tianhu", "dihu", "gangshanghua", "gangshangpao",
                                                  "qiangganghu", "haidilaoyue", "haidipao")]
    # the rare contexts are really in the sample (天胡/地胡 are not: too rare in 20,000 hands; tests/test_scoring.py
    # scores them on built hands)
    missing = [f for f, r in zip(("gangshanghua", "gangshangpao", "qiangganghu", "haidilaoyue", "haidipao"),
                                 rare[2:], strict=True) if not len(r)]
    assert not missing, f"{name}: no win with {missing} in the sample"
    sample = np.unique(np.concatenate([rng.choice(len(w["hand_id"]), 300, replace=False), *rare]))
    hand_row = np.searchsorted(cols["hands"]["hand_id"], w["hand_id"])
    for i in sample.tolist():
        v = int(void[hand_row[i], w["winner"][i]])
        res = score_hand(rules, w["hand"][i], [m for m in w["melds"][i].split(",") if m], w["tile"][i],
                         w["kind"][i], [c for c in w["context"][i].split(",") if c],
                         void=None if v < 0 else SUITS[v])
        assert res.fan == w["fan"][i] and res.capped_fan == w["capped_fan"][i], i
        assert res.hand_type == w["hand_type"][i] and res.gen == w["gen"][i], i
        assert set(res.patterns) == {f for f in FLAGS if w[f][i]}, i
        money = res.points if res.points is not None else res.points_each
        assert money == w["points"][i] * rules.scoring.base, i
    assert check_wins(rules, w, sample.tolist()) == len(sample)


@pytest.mark.parametrize("name", CONFIGS)
def test_event_log_audit(name):
    """Replay 300 hands event by event: tiles conserved, discards held, strict 定缺 order, won players inert,
    logged winning hands and melds equal to the replayed ones, kong income returned or transferred exactly."""
    rules = load_rules(name)
    _, cols = play(rules, 300, SEED, record=True)
    assert cols["hands"]["hand_id"].size != 0
    for log in logs(rules, cols, SEED):
        audit(log)
        check_kong_ledger(log)


def check_kong_ledger(log):
    """Per kong: what its payers paid; refunds give exactly that back to each payer; a transfer moves exactly
    the kong's income from its maker to the winners of the 杠上炮."""
    kongs = []
    pending = None  # kong payments are logged right after their EV_KONG
    for typ, seat, _tile, amount, a, b in log.events:
        if typ == S.EV_KONG:
            pending = {"maker": seat, "paid": np.zeros(4, np.int64)}
            kongs.append(pending)
        elif typ == S.EV_PAY and b == S.C_KONG:
            assert pending is not None and a == pending["maker"]
            pending["paid"][seat] += amount
        else:
            pending = None
    paid_to = np.zeros((4, 4), np.int64)   # paid_to[maker, payer]
    for k in kongs:
        paid_to[k["maker"]] += k["paid"]
    refunded = np.zeros((4, 4), np.int64)
    transferred = np.zeros(4, np.int64)
    for typ, seat, _tile, amount, a, b in log.events:
        if typ == S.EV_PAY and b == S.C_REFUND:
            refunded[seat, a] += amount
        elif typ == S.EV_PAY and b == S.C_TRANSFER:
            transferred[seat] += amount
    assert (refunded <= paid_to).all()
    assert (transferred + refunded.sum(axis=1) <= paid_to.sum(axis=1)).all()
    if log.hand["exhaustive_draw"] and log.rules.settlement.refund_kongs_if_not_ready:
        for p in log.players:  # 退税: a maker still in and not ready keeps none of its kong income
            m = p["seat"]
            if not p["won"] and not p["ready"]:
                assert transferred[m] + refunded[m].sum() == paid_to[m].sum()


def test_output_matches_the_schema():
    _, cols = play(rules_of("exchange_three"), 200)
    for table, schema in TABLES.items():
        names = [f.name for f in schema if f.name != "variant"]
        assert set(cols[table]) == set(names), table
        for f in schema:
            if f.name == "variant":
                continue
            values = cols[table][f.name]
            assert len(values) == len(cols[table]["hand_id"])
            if pa.types.is_dictionary(f.type) or pa.types.is_string(f.type):
                assert values.dtype == object
                assert all(v is None or isinstance(v, str) for v in values)
            else:
                assert values.dtype == f.type.to_pandas_dtype(), f.name
    p, w = cols["players"], cols["wins"]
    assert set(w["tile"]) <= {tile_str(k) for k in range(27)}
    assert set(w["hand_type"]) <= set(HAND_TYPES)
    assert set(cols["hands"]["exchange"]) <= {"clockwise", "counterclockwise", "opposite"}
    assert all(len(d.replace("m", "").replace("p", "").replace("s", "")) in (13, 14) for d in p["dealt"])


def test_strings_are_the_canonical_notation():
    raw, cols = play(rules_of(), 300)
    assert [format_counts(c) for c in raw.dealt] == list(cols["players"]["dealt"])
    assert [format_counts(c) for c in raw.wconc] == list(cols["wins"]["hand"])
    for i in range(len(cols["wins"]["hand_id"])):
        nm = raw.w[i, S.W_NMELDS]
        names = {1: "pung", 2: "kong", 3: "ckong"}
        want = ",".join(f"{names[raw.wmk[i, j]]}:{tile_str(raw.wmt[i, j])}" for j in range(nm))
        assert cols["wins"]["melds"][i] == want


def test_encoded_columns_are_the_same_values():
    """The runner's form (codes + Arrow text, no Python string per row) holds exactly the strings of play_hands'."""
    raw, cols = play(rules_of("exchange_three"), 300)
    enc = records.to_columns(raw, encoded=True)
    for table in cols:
        assert set(enc[table]) == set(cols[table])
        for name, values in cols[table].items():
            e = enc[table][name]
            if isinstance(e, records.Coded):
                assert list(e.strings()) == list(values), (table, name)
            elif isinstance(e, pa.Array):
                assert e.type == pa.string() and e.null_count == 0
                assert e.to_pylist() == list(values), (table, name)
            else:
                assert np.array_equal(e, values), (table, name)
    ctx = np.arange(-1, 2 * records._CTX_MASK + 3)
    assert records._contexts(ctx).to_pylist() == [records.context_string(int(c)) for c in ctx]
    counts = np.zeros((3, 27), np.uint8)
    counts[1, [0, 9, 26]] = (5, 1, 4)  # more than four of a kind takes the slow path
    counts[2, 13] = 255
    assert list(records.notation(counts)) == ["", "11111m1p9999s", "5" * 255 + "p"]


def test_same_seed_same_rows_and_chunking_does_not_matter():
    rules = rules_of()
    ids = np.arange(1000, 1600)
    a = play_hands(rules, ids, 5)
    b = play_hands(rules, ids, 5)
    assert differing(a, b) == {"hands": set(), "players": set(), "wins": set()}
    parts = [play_hands(rules, ids[:137], 5), play_hands(rules, ids[137:400], 5), play_hands(rules, ids[400:], 5)]
    for table in ("hands", "players", "wins"):
        for c in a[table]:
            joined = np.concatenate([pt[table][c] for pt in parts])
            assert np.array_equal(joined, a[table][c]), (table, c)
    c = play_hands(rules, ids, 6)
    assert not np.array_equal(c["players"]["dealt"], a["players"]["dealt"])


def test_walls_are_common_across_rule_variants():
    """The wall depends only on (seed, deal): the deal is identical under any rule set and any bots."""
    ids = np.arange(300)
    base = play_hands(rules_of(), ids, 9)
    for other in (rules_of("qq_sichuan"), rules_of("exchange_three"),
                  rules_of(seats=["random", "value", "defensive", "greedy"])):
        o = play_hands(other, ids, 9)
        assert np.array_equal(o["players"]["dealt"], base["players"]["dealt"])
        assert np.array_equal(o["hands"]["dealer"], base["hands"]["dealer"])


def test_duplicate_rotates_bots_over_the_same_deal():
    rules = rules_of(seats=["random", "greedy", "value", "defensive"])
    out = play_hands(rules, np.arange(40), 3, duplicate=True)
    h, p = out["hands"], out["players"]
    assert np.array_equal(h["deal_id"], np.arange(40) // 4) and np.array_equal(h["rotation"], np.arange(40) % 4)
    dealt = per_hand(p["dealt"])
    bots = per_hand(p["bot"])
    spec = np.array(["random", "greedy", "value", "defensive"], dtype=object)
    for i in range(40):
        assert (dealt[i] == dealt[i - i % 4]).all()
        assert list(bots[i]) == [spec[(s + i % 4) % 4] for s in range(4)]
    assert np.array_equal(h["dealer"], (np.arange(40) // 4) % 4)


def _resident_mb() -> float:
    """This process's resident memory now (not its peak), MB: /proc/self/statm's second field, in pages."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux /proc")
def test_memory_is_flat_in_the_number_of_hands():
    """Outputs are sized by the chunk; the compiled state is reused across hands (no growth per hand). Current
    resident memory (not the peak, which a leak hides under the first batches' high-water mark), measured after
    three batches (compiled code loaded, the allocators at their working size: ~30 MB) and after six more of
    1,000 hands whose results are dropped: anything kept per batch (one batch's tables and events are ~7 MB) or
    per hand shows as growth."""
    rules = rules_of()
    for k in range(3):
        play_hands(rules, np.arange(1000 * k, 1000 * (k + 1)), 1, record=True)
    gc.collect()
    before = _resident_mb()
    for k in range(3, 9):
        out = play_hands(rules, np.arange(1000 * k, 1000 * (k + 1)), 1, record=True)
        del out
    gc.collect()
    grown_mb = _resident_mb() - before
    assert grown_mb < 8, grown_mb


NRT_CHECK = """
import gc, importlib.util, sys
from numba.core.runtime import rtsys
spec = importlib.util.spec_from_file_location("same_play", sys.argv[1])
same_play = importlib.util.module_from_spec(spec)
spec.loader.exec_module(same_play)
def live():
    s = rtsys.get_allocation_stats()
    return s.mi_alloc, s.mi_alloc - s.mi_free
same_play.run(8, 3)  # load the engine copies (compiled code keeps no arrays between calls)
gc.collect()
first = live()
same_play.run(8, 4)
gc.collect()
print(first[0], live()[0], first[1], live()[1])
"""


def test_compiled_code_frees_every_array_it_allocates():
    """Most compiled functions run without numba's reference counting (``_nrt=False``, docs/internals.md): they
    allocate nothing and take no new array from a callee, so nothing they touch needs a count. A slip (an array
    returned into such a function is never released) leaks an NRT allocation per call. Counted by numba's own
    allocation statistics over every way hands are played (``benchmarks/same_play.py``'s cases: batches of each
    line-up, the step path with Python agents, sessions): the arrays alive after a second round of all of them are
    those alive after the first, while the round allocated (the counters run)."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", NRT_CHECK, str(root / "benchmarks" / "same_play.py")],
                         env={**os.environ, "NUMBA_NRT_STATS": "1"}, capture_output=True, text=True, check=True,
                         cwd=root)
    alloc_before, alloc_after, live_before, live_after = map(int, out.stdout.split()[-4:])
    assert alloc_after > alloc_before  # the second round allocated: the statistics are on
    assert live_after == live_before, (live_before, live_after)


def test_deal_seeds_are_numpys_seed_sequence():
    """The compiled SeedSequence gives numpy's per-deal states bit for bit (docs/internals.md contract)."""
    from simulator.engine import deal_seeds

    ids = np.array([0, 1, 7, 1000, 2**31, 2**32 - 1, 2**32, 2**40 + 3], dtype=np.int64)
    for seed in (0, 1, 2024, 2**32 - 1, 2**32, 2**63 + 5, 2**80 + 1):
        wall, bots = deal_seeds(seed, ids)
        for i, d in enumerate(ids.tolist()):
            ref = np.random.SeedSequence(seed, spawn_key=(d,)).generate_state(2, np.uint64)
            assert (wall[i], bots[i]) == (ref[0], ref[1]), (seed, d)


def test_bad_seed_is_an_error():
    with pytest.raises(ValueError, match="seed must be a non-negative integer, got -1"):
        play_hands(rules_of(), np.arange(3), -1)
    with pytest.raises(ValueError, match="hand ids must be non-negative"):
        play_hands(rules_of(), np.array([-4]), 1)
