"""The search player's re-deal audited against the true hidden tiles (issue 54): at each decision where the search
leaves the expert's choice, both actions are also played out on the real hand — the opponents' true concealed tiles,
only the wall still to draw reshuffled (this script only: the search player never reads them). Where the re-deal's
estimate of the gain and the true hands' disagree, the re-deal is wrong in a way that matters.

    python benchmarks/search_audit.py --walls 1000                        # the default's departures
    python benchmarks/search_audit.py --walls 300 --z 1 --confirm 0     # many departures, to read their kinds

Prints per departure kind (decision, how, tiles left) the count, the search's own gain estimate, the gain on the
true hands (mean ± SE over departures) and the mean final score of the expert's action in the re-deal and on the
true hands; then each score component of both actions, re-deal against true hands (a component the real table
never pays but the re-deal does shows here first).
"""

from __future__ import annotations

import argparse
from collections import defaultdict

import numpy as np
from numba import njit

from simulator.hands.game import play_hands
from simulator.kernel.rng import derive
from simulator.kernel.state import G_HEAD, G_TAIL, N_TILES, stack_empty
from simulator.logs.schema import SCORE_COMPONENTS
from simulator.rules import load_rules
from simulator.search import SearchBot, departure, own_draw, public_of
from simulator.search.rollout import (
    FAILED,
    J_ANS0,
    J_GIVER,
    J_NCAND,
    J_NPRIOR,
    J_ROLLS,
    J_SEAT,
    J_SEED,
    load,
    play_out,
    start,
)
from simulator.search.sample import Public, redeal, shuffle_prefix


@njit(cache=True, _nrt=False)
def wall_only(st, pin_at: int, seed) -> bool:
    """The true hand with only the wall still to draw reshuffled (the seat's own pinned draw kept)."""
    rng = stack_empty(1, np.uint64)
    rng[0] = seed
    tiles = stack_empty(N_TILES, np.int64)
    m = 0
    for w in range(st.g[G_HEAD], st.g[G_TAIL]):
        if w != pin_at:
            tiles[m] = st.wall[w]
            m += 1
    shuffle_prefix(tiles, m, rng)
    pos = 0
    for w in range(st.g[G_HEAD], st.g[G_TAIL]):
        if w != pin_at:
            st.wall[w] = tiles[pos]
            pos += 1
    return True


@njit(cache=True, _nrt=True)
def components(ro, src, wall, pc, pub, pin_at: int, true_hands: bool, job, out) -> None:
    """``out[i, c, k]``: score component k of the searching seat in sample i for candidate c, the sample a re-deal
    (``true_hands`` False) or the true hands with the wall reshuffled; a failed deal is ``FAILED`` in [i, :, 0]."""
    seat, n, n_prior, n_cand = job[J_SEAT], job[J_ROLLS], job[J_NPRIOR], job[J_NCAND]
    seed = np.uint64(job[J_SEED])
    for i in range(n):
        load(ro.dealt, src, wall, pc)
        ok = wall_only(ro.dealt, pin_at, derive(seed, i)) if true_hands else redeal(
            ro.game.table, ro.dealt, seat, pub, derive(seed, i))
        for c in range(n_cand):
            if not ok:
                out[i, c, 0] = FAILED
                continue
            cand = job[J_ANS0 + n_prior + c]
            start(ro, ro.dealt, ro.dealt.wall, pc, job, cand)
            play_out(ro, seat, job, cand)
            for k in range(ro.st.score.shape[1]):
                out[i, c, k] = ro.st.score[seat, k]


def public_of_nothing() -> Public:
    """A :class:`Public` of no tile (for the warm-up: no sample is drawn)."""
    return Public(np.zeros(27, np.int64), np.full(4, -1, np.int64), np.full(4, -1, np.int64), np.full(3, -1, np.int64),
                  np.ones((4, 27)), np.zeros(4), np.zeros(4, np.int64))


class Audited(SearchBot):
    """The search player; at each departure, both actions played on re-deals and on the true hands."""

    def __init__(self, samples: int, **params):
        super().__init__(**params)
        self.samples = samples
        self.rows: list[tuple] = []  # (kind, how, left, search's gain, true gain, expert's action re-dealt, true)
        self.comps: list[np.ndarray] = []  # [re-deal / true, expert / search, component]

    def _warm_up(self, hand) -> None:
        """Compile the audit's rollouts too, before the first decision (whose time limit a compile would exceed)."""
        super()._warm_up(hand)
        pub = public_of_nothing()
        job = np.zeros(J_ANS0 + 1, np.int64)
        job[J_GIVER] = -1
        for true_hands in (False, True):
            components(self._ro, hand.snap, hand.st.wall, hand.st.pc, pub, -1, true_hands, job,
                       np.zeros((0, 1, len(SCORE_COMPONENTS))))

    def _search(self, hand, obs, legal, policy):
        chosen = super()._search(hand, obs, legal, policy)
        if chosen == policy or obs.from_seat >= 0:  # own-turn departures only
            return chosen
        seat, pc, snap = obs.seat, hand.st.pc, hand.snap
        pin = own_draw(hand, seat)
        pub = public_of(obs, pin)
        prior = [a for _, _, a in hand.answers]
        job = np.zeros(J_ANS0 + len(prior) + 2, np.int64)
        job[J_SEAT], job[J_ROLLS], job[J_NPRIOR], job[J_NCAND] = seat, self.samples, len(prior), 2
        job[J_GIVER] = -1
        job[J_SEED] = (0x7A11 + self._seed * 1_000_003 + self._n) & (2**62 - 1)
        job[J_ANS0:J_ANS0 + len(prior)] = prior
        job[J_ANS0 + len(prior):] = (policy, chosen)
        means = np.zeros((2, 2, len(SCORE_COMPONENTS)))
        for true_hands in (0, 1):
            out = np.zeros((self.samples, 2, len(SCORE_COMPONENTS)))
            components(self._ro, snap, hand.st.wall, pc, pub, pin[0], bool(true_hands), job, out)
            means[true_hands] = out[out[:, 0, 0] > FAILED].mean(axis=0)
        tot = means.sum(axis=2)
        gain = self.decisions[-1][2]
        self.rows.append((obs.decision, departure(obs, policy, chosen), int(obs.tiles_left), gain,
                          tot[1, 1] - tot[1, 0], tot[0, 0], tot[1, 0]))
        self.comps.append(means)
        return chosen


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--walls", type=int, default=300)
    ap.add_argument("--seed", type=int, default=20)
    ap.add_argument("--opponents", default="expert")
    ap.add_argument("--samples", type=int, default=64, help="samples per action for the audit")
    ap.add_argument("--z", type=float, default=None, help="(default: the bot's)")
    ap.add_argument("--confirm", type=int, default=None, help="(default: the bot's)")
    ap.add_argument("--screen", type=float, default=None, help="(default: the bot's)")
    args = ap.parse_args()
    params = {k: v for k, v in (("z", args.z), ("confirm", args.confirm), ("screen", args.screen)) if v is not None}
    bot = Audited(args.samples, **params)
    rules = load_rules("chengdu", [f"seats=[search, {args.opponents}, {args.opponents}, {args.opponents}]"])
    ids = np.arange(4 * args.walls, dtype=np.int64)
    play_hands(rules, ids, args.seed, {0: bot}, duplicate=True)
    rows = bot.rows
    print(f"search (z {bot.z}, confirm {bot.confirm}) vs three {args.opponents}, {args.walls:,} walls × 4, seed "
          f"{args.seed}: {len(rows)} departures, each audited on {args.samples} samples per action")
    if not rows:
        return
    by = defaultdict(list)
    for r in rows:
        by[(r[0], r[1], "≤4" if r[2] <= 4 else ("5–8" if r[2] <= 8 else "9+"))].append(r)
    print("  decision    how  left     n  search's gain  true gain (± SE)  expert's action: re-dealt / true")
    for key, rs in sorted(by.items(), key=lambda kv: -len(kv[1])):
        a = np.array([r[3:] for r in rs])
        se = a[:, 1].std(ddof=1) / np.sqrt(len(a)) if len(a) > 1 else float("nan")
        print(f"  {key[0]:>9} {key[1]:>5} {key[2]:>4} {len(a):5d}  {a[:, 0].mean():+13.2f}  {a[:, 1].mean():+9.2f} "
              f"± {se:.2f}  {a[:, 2].mean():+7.2f} / {a[:, 3].mean():+.2f}")
    a = np.array([r[3:] for r in rows])
    print(f"  all: true gain per departure {a[:, 1].mean():+.3f} ± {a[:, 1].std(ddof=1) / np.sqrt(len(a)):.3f}")
    c = np.mean(bot.comps, axis=0)
    for i, label in enumerate(("re-dealt", "true hands")):
        for j, action in enumerate(("expert's", "search's")):
            parts = ", ".join(f"{name.removeprefix('score_')} {v:+.2f}" for name, v in zip(SCORE_COMPONENTS, c[i, j],
                                                                                          strict=True))
            print(f"  {label:>10}, {action} action: {parts}")


if __name__ == "__main__":
    main()
