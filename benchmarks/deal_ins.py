"""Where a bot's deal-ins come from, against three greedy: per discard, the discarder's shanten after it, early
or late in the wall, and whether the seat had declined a win earlier in the hand.

    python benchmarks/deal_ins.py                               # expert in seat 0, 6,000 hands, seed 11
    python benchmarks/deal_ins.py --bot "{bot: expert, defence: 1.0}" --hands 3000

Replays every discard of recorded hands (``table_states``) with the discarder's own tiles; a discard is a deal-in
when a discard win on it follows. Prints, for seat 0's bot and for the greedy seats, deal-ins and discards per
player-hand and the deal-in rate per discard in each state (docs/bots.md, "The expert's defence").
"""

from __future__ import annotations

import argparse
import collections

import numpy as np
from table_states import deal_ins, discards, recorded_hands

from simulator.kernel import state as S
from simulator.kernel.shape import shanten
from simulator.kernel.tables import suit_table
from simulator.rules import load_rules

LATE = 20  # tiles left at or below which a discard counts as late


def tally(config: str, bot: str, hands: int, seed: int) -> tuple[collections.Counter, collections.Counter, int]:
    """``(discards, deal-ins, hands)``, counted by ``(who, state, phase, after a decline)``."""
    rules = load_rules(config, [f"seats=[{bot}, greedy, greedy, greedy]"])
    params, table = rules.to_arrays(), suit_table()
    disc, deal = collections.Counter(), collections.Counter()
    n = 0
    for _hid, dealt, events, _players in recorded_hands(rules, hands, seed):
        n += 1
        hits = deal_ins(events)
        first_decline = {}
        for j, ev in enumerate(events):
            if ev[0] == S.EV_DECLINE:
                first_decline.setdefault(ev[1], j)
        for i, ev, st in discards(params, dealt, events):
            seat, tile = ev[1], ev[2]
            conc = st.conc[seat].copy()
            conc[tile] -= 1
            sh = shanten(table, conc, st.mk[seat], st.mt[seat], np.int64(st.nm[seat]), np.int64(st.evoid[seat]))
            key = ("bot" if seat == 0 else "greedy", "ready" if sh == 0 else "1 away" if sh == 1 else "2+ away",
                   "late" if st.left <= LATE else "early", first_decline.get(seat, len(events)) < i)
            disc[key] += 1
            deal[key] += i in hits
    return disc, deal, n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--config", default="chengdu")
    ap.add_argument("--bot", default="expert", help="seat 0's bot spec (YAML), against three greedy")
    ap.add_argument("--hands", type=int, default=6000)
    ap.add_argument("--seed", type=int, default=11)
    a = ap.parse_args()
    disc, deal, n = tally(a.config, a.bot, a.hands, a.seed)
    for who, per in (("bot", n), ("greedy", 3 * n)):
        mine = [k for k in disc if k[0] == who]
        print(f"{a.bot if who == 'bot' else 'greedy'}: deal-ins per player-hand "
              f"{sum(deal[k] for k in mine) / per:.3f}, discards {sum(disc[k] for k in mine) / per:.2f} "
              f"({per:,} player-hands, {a.config}, seed {a.seed})")
        for state in ("ready", "1 away", "2+ away"):
            for phase, after in (("early", False), ("late", False), ("early", True), ("late", True)):
                d, di = disc[(who, state, phase, after)], deal[(who, state, phase, after)]
                if d:
                    print(f"  {state:8s} {phase:5s}{' after a decline' if after else '':16s}: discards "
                          f"{d / per:6.3f}, deal-ins {di / per:.3f} per player-hand, {di / d:.4f} per discard")


if __name__ == "__main__":
    main()
