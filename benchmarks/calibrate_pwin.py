"""How well the expert's P(win) table predicts what its hands go on to do (a diagnostic, not a fit it ships).

    python benchmarks/calibrate_pwin.py                   # 6,000 hands, expert/greedy/expert/greedy, seed 3
    python benchmarks/calibrate_pwin.py --hands 2000 --seats 'expert, expert, expert, expert' --refit

After every discard of an expert seat (replayed from the event log: :mod:`table_states`) the 13 tiles left are
valued as the expert values them — plain shanten, acceptance (or a ready hand's weighted waits), unseen tiles,
own draws left, opponents still in — and :func:`simulator.bots.expert_pwin.p_win` is set against the outcome:
did this seat win later in the hand. Printed by plain shanten × own draws left, with the acceptance in thirds:

- **plain**: the table against "won later, any hand";
- **shapes pursued**: discards the expert made for a big shape (reason *aiming for a big hand*), the shape worth
  most by the expert's own value (P × income), the table against "won later with that shape".

``--refit`` fits a Markov model of the same family (per-step rates by distance, the first step's rate as a
linear function of the acceptance ratio, a per-draw chance that the hand ends first, by opponents in)
to the plain rows by log-loss (coordinate descent), starting from the shipped table (which it reproduces with
its own constants), and prints the constants and the log-loss of each.
"""

from __future__ import annotations

import argparse

import numpy as np
from table_states import discards, recorded_hands

from simulator.bots import expert_pwin as pw
from simulator.bots import expert_value as ev
from simulator.bots.common import acceptance, draw_candidates
from simulator.bots.expert import R_SHAPE
from simulator.bots.expert_hand import table_context, unseen_total
from simulator.bots.expert_turn import Outlook
from simulator.kernel import state as S
from simulator.kernel.shape import HandTiles, shanten
from simulator.kernel.tables import suit_table
from simulator.rules import load_rules

SHAPES = (("对对胡", "duiduihu"), ("七对", "qidui"), ("清一色", "qingyise"))
COLS = ("seat", "sh", "acc", "unseen", "draws", "n_in", "p_plain", "reason", "won", *(
    f"{c}_{f}" for _, f in SHAPES for c in ("d", "p", "value", "won")))


def state_row(params, table, st, d, tempo) -> list[float]:
    """The expert's view of seat ``d``'s 13 tiles after its discard (``st``: the state with the tile removed)."""
    c, mk, mt, nm = st.conc[d], st.mk[d], st.mt[d], st.nm[d]
    vis = st.seen_by(d)
    void = int(st.ps[d, S.PS_VOID])
    sh = shanten(table, c, mk, mt, nm, void)
    n_in, n_draws = table_context(st.ps, d, st.left)
    u = unseen_total(c, vis)
    hand = HandTiles(c, mk, mt, int(nm), void)
    if sh == 0:
        ronw = np.empty(3)
        ev.ron_weights(params, st.ps, d, ronw)
        look = Outlook(table, params, vis, u, n_draws, n_in, np.zeros(ev.N_SHAPES), 0.0, np.full(6, -1.0),
                       ronw)  # wait_income reads the table, rules, visible, n_in, ronw
        acc = ev.wait_income(look, hand)[0]
    else:
        acc = float(acceptance(table, hand, sh, vis, draw_candidates(c, void)))
    inc = np.empty(ev.N_SHAPES, np.float64)
    ev.shape_incomes(params, mk, nm, ev.held4(c, mk, mt, nm), n_in, n_draws, tempo, inc)
    dd, acc_dd, qd, acc_qd = ev.kept_counts(c, nm, void, vis)
    qys = min((ev.qys_reach(table, c, mt, nm, vis, s) for s in range(3) if s != void), key=lambda r: (r[0], -r[1]))
    shapes = []
    for dist, a, factor, slot in ((dd, acc_dd, 1.0, ev.S_DDH), (qd, acc_qd, 0.3, ev.S_QIDUI),
                                  (qys[0], qys[1], 1.0, ev.S_QDUI if dd <= qys[0] else ev.S_QYS)):
        p = pw.p_win(dist, a * factor, u, n_draws, n_in) if 0 <= dist < pw.MAX_D else 0.0
        shapes += [dist, p, p * inc[slot], 0.0]
    p_plain = pw.p_win(sh, acc, u, n_draws, n_in) if sh < pw.MAX_D else 0.0
    return [d, sh, acc, u, n_draws, n_in, p_plain, 0.0, 0.0, *shapes]


def collect(hands: int, seed: int, seats: str) -> dict[str, np.ndarray]:
    rules = load_rules("chengdu", [f"seats=[{seats}]"])
    params = rules.to_arrays()
    table = suit_table()
    experts = [i for i, b in enumerate(seats.split(",")) if b.strip() == "expert"]
    tempo = next(b.tempo for b in rules.seats if b.bot == "expert")
    rows = []
    for _h, dealt, events, players in recorded_hands(rules, hands, seed):
        start = len(rows)
        at = {}
        for i, (_typ, seat, tile, _amount, reason, _b), st in discards(params, dealt, events):
            if seat in experts:
                st.conc[seat, tile] -= 1
                rows.append([*state_row(params, table, st, seat, tempo), i])
                rows[-1][COLS.index("reason")] = reason
                st.conc[seat, tile] += 1
        for i, (typ, seat, *_) in enumerate(events):
            if typ == S.EV_WIN:
                at.setdefault(seat, i)
        for r in rows[start:]:
            d = int(r[0])
            r[COLS.index("won")] = won = float(d in at and at[d] > r[-1])
            for _, f in SHAPES:
                r[COLS.index(f"won_{f}")] = won * float(players[f][d])
    a = np.array(rows, np.float64)[:, :len(COLS)]
    return {c: a[:, i] for i, c in enumerate(COLS)}


def bins(draws: np.ndarray) -> list[tuple[int, int]]:
    return [(lo, hi) for lo, hi in ((1, 3), (3, 6), (6, 9), (9, 12), (12, 16), (16, 28)) if ((draws >= lo) &
                                                                                            (draws < hi)).any()]


def plain_report(r: dict[str, np.ndarray]) -> None:
    print(f"plain: {len(r['sh']):,} states; P(win later) observed {r['won'].mean():.3f}, table "
          f"{r['p_plain'].mean():.3f}; log-loss table {logloss(r['p_plain'], r['won']):.4f}, constant "
          f"{logloss(np.full(len(r['won']), r['won'].mean()), r['won']):.4f}")
    for s in range(pw.MAX_D):
        for lo, hi in bins(r["draws"]):
            m = (r["sh"] == s) & (r["draws"] >= lo) & (r["draws"] < hi)
            if m.sum() < 200:
                continue
            edges = np.quantile(r["acc"][m], [0, 1 / 3, 2 / 3, 1])
            thirds = []
            for j in range(3):
                mm = m & (r["acc"] >= edges[j]) & ((r["acc"] < edges[j + 1]) | (j == 2))
                if mm.sum() >= 30:
                    thirds.append(f"acc {r['acc'][mm].mean():4.1f}: {r['p_plain'][mm].mean():.3f} / "
                                  f"{r['won'][mm].mean():.3f}")
            print(f"  shanten {s}, {lo:2d}-{hi - 1:2d} draws left (n = {m.sum():6,}): table "
                  f"{r['p_plain'][m].mean():.3f}, observed {r['won'][m].mean():.3f}  |  " + "  ".join(thirds))


def shape_report(r: dict[str, np.ndarray]) -> None:
    value = np.stack([r[f"value_{f}"] for _, f in SHAPES], 1)
    target = value.argmax(1)
    shaped = r["reason"] == R_SHAPE
    print(f"shapes pursued: {shaped.sum():,} discards made for a big shape (table / observed: won with it)")
    for t, (name, f) in enumerate(SHAPES):
        for dist in range(pw.MAX_D):
            m = shaped & (target == t) & (r[f"d_{f}"] == dist)
            if m.sum() >= 30:
                se = np.sqrt(r[f"won_{f}"][m].mean() * (1 - r[f"won_{f}"][m].mean()) / m.sum())
                print(f"  {name} at distance {dist} (n = {m.sum():5,}): table {r[f'p_{f}'][m].mean():.3f}, "
                      f"observed {r[f'won_{f}'][m].mean():.3f} ± {se:.3f}; won with any hand {r['won'][m].mean():.3f}")


def logloss(p: np.ndarray, y: np.ndarray) -> float:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).mean())


SHIPPED = {**pw.ChainRates()._asdict(), "end1": pw.END_RATE[1], "end2": pw.END_RATE[2], "end3": pw.END_RATE[3]}


def markov_table(end1: float, end2: float, end3: float, **rates: float) -> np.ndarray:
    """The table's Markov chain (:func:`~simulator.bots.expert_pwin.markov_table`) with free rates
    (:class:`~simulator.bots.expert_pwin.ChainRates`) and ``end<m>``, the chance per draw that the hand ends first
    with m opponents in: the 血战 columns. :data:`SHIPPED` rebuilds them of :data:`~simulator.bots.expert_pwin.PWIN`."""
    ends = (0.0, end1, end2, end3)
    return pw.markov_table(pw.ChainRates(**rates), [pw.Column(m, ends[m]) for m in range(pw.N_PLAYERS_IN)])


def lookup(t: np.ndarray, r: dict[str, np.ndarray]) -> np.ndarray:
    """:func:`~simulator.bots.expert_pwin.p_win` read from table ``t`` for every row (numpy)."""
    sh = np.minimum(r["sh"].astype(int), pw.MAX_D - 1)
    n = np.minimum(r["draws"].astype(int), pw.MAX_N - 1)
    m = np.minimum(r["n_in"].astype(int), pw.N_PLAYERS_IN - 1)
    x = np.minimum(128.0 * r["acc"] / np.maximum(r["unseen"], 1), pw.Q_STEPS - 1)
    qi = np.minimum(x.astype(int), pw.Q_STEPS - 2)
    lo, hi = t[sh, qi, n, m], t[sh, qi + 1, n, m]
    return np.where((r["sh"] < pw.MAX_D) & (r["draws"] > 0), lo + (x - qi) * (hi - lo), 0.0)


def refit(r: dict[str, np.ndarray]) -> None:
    assert np.abs(markov_table(**SHIPPED) - pw.PWIN[..., :pw.N_PLAYERS_IN]).max() < 1e-6, \
        "markov_table no longer rebuilds PWIN"
    x = dict(SHIPPED)
    cur = logloss(lookup(markov_table(**x), r), r["won"])
    print(f"refit: shipped table log-loss {cur:.4f}")
    for _sweep in range(8):
        before = cur
        for k in x:
            for sign in (1.0, -1.0):
                while True:
                    trial = dict(x, **{k: max(0.0, x[k] + sign * 0.01 * (10 if "scale" in k else 1))})
                    v = logloss(lookup(markov_table(**trial), r), r["won"])
                    if v >= cur - 1e-6:
                        break
                    x, cur = trial, v
        if cur > before - 1e-5:
            break
    print(f"  fitted log-loss {cur:.4f}: " + ", ".join(f"{k} {v:.2f}" for k, v in x.items()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hands", type=int, default=6000)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--seats", default="expert, greedy, expert, greedy")
    ap.add_argument("--refit", action="store_true", help="fit the Markov model's rates to the plain rows")
    args = ap.parse_args()
    r = collect(args.hands, args.seed, args.seats)
    plain_report(r)
    shape_report(r)
    if args.refit:
        refit(r)


if __name__ == "__main__":
    main()
