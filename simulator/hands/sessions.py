"""Sessions: hands chained into evenings (rule set ``session:``, docs/rules.md "Sessions").

A session is ``K = session.hands`` hand slots. Its hand ids are the ordinary ones, so every hand keeps the
wall and bot streams of ``SeedSequence(seed, spawn_key=(deal_id,))`` and the same (session, hand) index sees
the same wall under every variant (common random numbers); only the dealer now comes from the previous hand:

- without duplicate seating, session ``s`` is hand ids ``s·K … s·K + K − 1`` (hand ``k`` = ``hand_id % K``);
- with duplicate seating (hand_id = 4·deal_id + rotation), session ``4·S + r`` is deals ``S·K … S·K + K − 1``
  played in seating rotation ``r``: every wall of the session is played in the four seatings, each seating
  for a whole session, so each bot meets each wall in each seat and sits in one seat all evening.

The sessions of a batch are played layer by layer: hand 0 of every session in one engine batch, then hand 1
with the dealers that hand 0 chose, and so on, so the engine's batch speed is kept. The first dealer of a
session, and every dealer under ``dealer: dice``, is a die thrown from ``SeedSequence(seed,
spawn_key=(deal_id, DICE_KEY))``, independent of the wall and bots and equal across variants and seatings.
"""

from __future__ import annotations

import numpy as np

from simulator import engine, hands
from simulator.kernel import state as S
from simulator.kernel.state import BatchResult
from simulator.rules import RuleSet, SessionRules

DICE_KEY = 1  # second spawn-key word of a hand's die: (deal_id,) alone seeds its wall and bots
N_SEATS = 4


def layout(hand_ids: np.ndarray, hands: int, duplicate: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(session_id, hand_in_session)``, int64[n] each, of hand ids (see the module docstring)."""
    ids = np.asarray(hand_ids, dtype=np.int64)
    if not duplicate:
        return ids // hands, ids % hands
    deal, rot = ids // 4, ids % 4
    return 4 * (deal // hands) + rot, deal % hands


def dice(seed: int, deal_ids: np.ndarray) -> np.ndarray:
    """int64[n]: the seat a die gives as dealer of each deal (same for every variant and seating)."""
    out = np.empty(len(deal_ids), np.int64)
    for i, d in enumerate(np.asarray(deal_ids, dtype=np.int64).tolist()):
        word = np.random.SeedSequence(seed, spawn_key=(d, DICE_KEY)).generate_state(1, np.uint64)[0]
        out[i] = int(word) % N_SEATS
    return out


def first_win(w: np.ndarray, w_hand: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Of each of ``n`` hands, from its win records (``w: int64[m, W_N]``, ``w_hand: int64[m]`` its hand row):
    ``(winner, feeder, count)`` of the first win event. ``winner``: of several winners on one discard
    (一炮多响), the first after the discarder in turn order; −1 when nobody won. ``feeder``: the discarder (or
    the robbed player), −1 for a self-draw or no win — read from the win's kind, not its payer: a 杠上花 paid in
    full by the feeder of the kong (``kong_bloom_payer: feeder``) is still its winner's self-draw.
    ``count``: winners of that event (0 = nobody won)."""
    winner = np.full(n, -1, np.int64)
    feeder = np.full(n, -1, np.int64)
    count = np.zeros(n, np.int64)
    first = np.flatnonzero(w[:, S.W_ORDER] == 1)
    rows, who = w_hand[first], w[first, S.W_WINNER]
    fed = np.where(w[first, S.W_KIND] == S.WK_SELF_DRAW, -1, w[first, S.W_PAYER])
    np.add.at(count, rows, 1)
    # nearest after the discarder wins the seat: visit far ones first so that nearer ones overwrite them
    distance = np.where(fed >= 0, (who - fed) % N_SEATS, 0)
    order = np.argsort(-distance, kind="stable")
    winner[rows[order]] = who[order]
    feeder[rows] = fed
    return winner, feeder, count


def multi_ron_feeder(w: np.ndarray, w_hand: np.ndarray, n: int) -> np.ndarray:
    """int64[n]: of each of ``n`` hands (win records as in :func:`first_win`), the discarder (or robbed player) of
    its first win event with two or more winners (一炮多响, at any point of the hand); −1 when there was none."""
    out = np.full(n, -1, np.int64)
    if not len(w):
        return out
    events, inv, size = np.unique(np.stack([w_hand, w[:, S.W_ORDER]], axis=1), axis=0, return_inverse=True,
                                  return_counts=True)
    multi = np.flatnonzero(size[inv.reshape(-1)] > 1)
    multi = multi[np.argsort(-w[multi, S.W_ORDER], kind="stable")]  # the earliest event of a hand written last
    out[w_hand[multi]] = w[multi, S.W_PAYER]
    return out


def next_dealers(rule: str, dealers: np.ndarray, winner: np.ndarray, feeder: np.ndarray, count: np.ndarray,
                 die: np.ndarray | None, multi: np.ndarray | None = None) -> np.ndarray:
    """int64[n]: the dealer of each session's next hand under ``session.dealer`` = ``rule``, from this hand's
    ``dealers`` and :func:`first_win` (``die``: the next hands' dice, used by ``dice`` only; ``multi``:
    :func:`multi_ron_feeder`, used by ``feeder_on_multi_ron`` only)."""
    nobody = count == 0
    if rule == "rotate":
        return (dealers + 1) % N_SEATS
    if rule == "dice":
        return die.astype(np.int64)
    if rule == "first_winner":
        return np.where(nobody, dealers, winner)
    if rule == "feeder_on_multi_ron":
        if multi is None:
            raise ValueError("session.dealer feeder_on_multi_ron needs multi (sessions.multi_ron_feeder)")
        return np.where(multi >= 0, multi, np.where(nobody, dealers, winner))
    if rule == "feeder_keeps_on_draw":
        return np.where(nobody, dealers, np.where(feeder >= 0, feeder, winner))
    raise ValueError(f"session.dealer: unknown rule {rule!r}")


def money(rules: RuleSet, score_total: np.ndarray) -> np.ndarray:
    """float64[n, 4]: each seat's balance change in a hand from its net score (money units, int[n, 4], divided
    by ``settlement.money_scale`` into base units): the score itself, or under ``money: coins``
    ``room_factor · base · score − rake`` (analysis.economy's rule)."""
    score = np.asarray(rules.base_units(score_total), dtype=np.float64)
    if rules.session is None or rules.session.money == "points":
        return score
    eco = rules.economy
    return eco.room_factor * rules.scoring.base * score - eco.rake


def _grid(hand_ids: np.ndarray, sess: SessionRules, duplicate: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(session ids int64[m], hand ids int64[m, K])`` of a batch of whole sessions; ValueError otherwise."""
    sid, k = layout(hand_ids, sess.hands, duplicate)
    order = np.lexsort((k, sid))
    n_sess = len(hand_ids) // sess.hands
    if len(hand_ids) % sess.hands or not np.array_equal(k[order], np.tile(np.arange(sess.hands), n_sess)):
        raise ValueError(f"hand ids {hand_ids[:1]}... are not whole sessions of {sess.hands} hands")
    grid = hand_ids[order].reshape(n_sess, sess.hands)
    return sid[order][::sess.hands], grid


def run_sessions(rules: RuleSet, hand_ids, seed: int, *, duplicate: bool = False, record: bool = False) -> dict:
    """Play whole sessions and return :func:`hands.run_batch`'s raw arrays for the hands played, in hand-id
    order, plus ``session_id``, ``hand_in_session`` (int64[n]) and ``bankroll`` (float64[4n], seat order: each
    seat's balance after the hand). With ``stop_when_broke`` the hands after a session's stop are not played
    (absent from the output)."""
    sess = rules.session
    if sess is None:
        raise ValueError("run_sessions needs a rule set with a session block")
    hand_ids = np.ascontiguousarray(hand_ids, dtype=np.int64)
    sids, grid = _grid(hand_ids, sess, duplicate)
    n_sess = len(sids)
    start = 0.0 if sess.bankroll is None else float(sess.bankroll)
    balance = np.full((n_sess, N_SEATS), start)
    live = np.ones(n_sess, bool)
    dealers = dice(seed, engine.split_ids(grid[:, 0], duplicate)[0])
    layers = []
    for k in range(sess.hands):
        idx = np.flatnonzero(live)
        if not len(idx):
            break
        ids = grid[idx, k]
        raw = hands.run_batch(rules, ids, seed, duplicate=duplicate, record=record, dealers=dealers[idx])
        n = len(ids)
        scores = raw.p[:, S.PL_SCORE:S.PL_SCORE + S.N_COMP].sum(axis=1).reshape(n, N_SEATS)
        balance[idx] += money(rules, scores)
        raw.session_id = sids[idx]
        raw.hand_in_session = np.full(n, k, np.int64)
        raw.bankroll = balance[idx].reshape(-1).copy()
        layers.append(raw)
        if k + 1 < sess.hands:
            winner, feeder, count = first_win(raw.w, raw.w_hand, n)
            die = dice(seed, engine.split_ids(grid[idx, k + 1], duplicate)[0]) if sess.dealer == "dice" else None
            multi = multi_ron_feeder(raw.w, raw.w_hand, n) if sess.dealer == "feeder_on_multi_ron" else None
            dealers[idx] = next_dealers(sess.dealer, dealers[idx], winner, feeder, count, die, multi)
        if sess.stop_when_broke:
            live[idx] &= ~(balance[idx] <= 0).any(axis=1)
    return _merge(layers, record)


def _merge(layers: list[BatchResult], record: bool) -> BatchResult:
    """Concatenate the layers' arrays and put them in hand-id order (win and event rows follow their hand, in
    their original order)."""
    def cat(key: str) -> np.ndarray:
        return np.concatenate([getattr(r, key) for r in layers])

    hand_ids = cat("hand_ids")
    perm = np.argsort(hand_ids, kind="stable")
    new_row = np.empty_like(perm)
    new_row[perm] = np.arange(len(perm))
    offsets = np.cumsum([0] + [len(r.hand_ids) for r in layers[:-1]])
    out = {key: cat(key)[perm] for key in ("hand_ids", "deal_ids", "rotations", "h", "session_id", "hand_in_session")}
    for key in ("p", "dealt", "bankroll"):  # four rows per hand, moved with their hand
        rows = cat(key)
        out[key] = rows.reshape(len(perm), N_SEATS, -1)[perm].reshape(rows.shape)
    w_hand = new_row[np.concatenate([r.w_hand + o for r, o in zip(layers, offsets, strict=True)])]
    worder = np.argsort(w_hand, kind="stable")
    out["w_hand"] = w_hand[worder]
    for key in ("w", "wconc", "wmk", "wmt"):
        out[key] = cat(key)[worder]
    ev = cat("events") if layers else np.zeros((0, 1 + S.EV_W), np.int32)
    if record and len(ev):
        rows = np.concatenate([r.events[:, 0].astype(np.int64) + o for r, o in zip(layers, offsets, strict=True)])
        rows = new_row[rows]
        eorder = np.argsort(rows, kind="stable")
        ev = ev[eorder]
        ev[:, 0] = rows[eorder]
    # Python bots' names (simulator.hands.game): the same rules in every layer
    return BatchResult(**out, events=ev, bot_labels=layers[0].bot_labels)
