"""Late kongs that leave a ready hand not ready (issue 54), and the strength they cost, per bot.

    python benchmarks/late_kongs.py --walls 12500                 # expert + 3 greedy, chengdu, seed 7
    python benchmarks/late_kongs.py --walls 2000 --seats expert expert expert expert

Duplicate seating (each wall played four times, the line-up rotated). For each kong (暗杠, 加杠 or 直杠) made with
fewer than ``--wall`` tiles left (default 16, the expert's ``LATE_KONG_WALL``) the hand is replayed from the event
log: the kong is *breaking* when the hand was ready before it (one discard from a ready hand on the seat's own
turn; a ready 13-tile hand for a 直杠 of a discard) and is not ready after it (before the replacement draw). Prints,
per bot of the line-up, breaking late kongs per player-hand and the mean final score of the player-hands that made
one, then the first line-up spec's mean score per player-hand with its SE clustered by wall (``--save`` writes the
per-wall means for ``--paired`` against another code version on the same walls).
"""

from __future__ import annotations

import argparse

import numpy as np

from simulator.hands import run_batch
from simulator.kernel import state as S
from simulator.kernel.shape import shanten
from simulator.kernel.tables import suit_table
from simulator.rules import load_rules


def breaking_late_kongs(raw, wall: int) -> np.ndarray:
    """Per player row (``raw.p`` order, 4·hand row + seat): the number of kongs made with fewer than ``wall`` tiles
    left that left a ready hand not ready."""
    table = suit_table()
    ev = raw.events
    out = np.zeros(raw.p.shape[0], np.int64)
    starts = np.searchsorted(ev[:, 0], np.arange(raw.h.shape[0] + 1))
    draws = np.cumsum(ev[:, 1] == S.EV_DRAW)
    left = (S.N_TILES - 53) - (draws - np.concatenate([[0], draws])[starts[ev[:, 0]]])
    late = (ev[:, 1] == S.EV_KONG) & (left < wall)
    for i in np.unique(ev[late, 0]):  # only the hands with a late kong are replayed
        conc = raw.dealt[4 * i:4 * i + 4].astype(np.uint8).copy()
        mk = np.zeros((4, 4), np.int8)
        mt = np.zeros((4, 4), np.int8)
        nm = np.zeros(4, np.int64)
        void = np.full(4, -1, np.int64)
        left = S.N_TILES - 53
        for typ, seat, tile, _amount, a, _b in ev[starts[i]:starts[i + 1], 1:]:
            if typ == S.EV_EXCHANGE:
                conc[seat, tile] -= 1
                conc[a, tile] += 1
            elif typ == S.EV_VOID:
                void[seat] = a
            elif typ == S.EV_DRAW:
                conc[seat, tile] += 1
                left -= 1
            elif typ in (S.EV_DISCARD, S.EV_ROBBED):
                conc[seat, tile] -= 1
            elif typ == S.EV_PUNG:
                conc[seat, tile] -= 2
                mk[seat, nm[seat]], mt[seat, nm[seat]] = 1, tile
                nm[seat] += 1
            elif typ == S.EV_KONG:
                c, m_k, m_t, n = conc[seat], mk[seat], mt[seat], nm[seat]
                before = shanten(table, c, m_k, m_t, n, void[seat])
                ready = before <= 0  # own turn: 3k+2 tiles; a 直杠 is judged on its 13 (3k+1) tiles: shanten 0
                if a == 1:
                    c[tile] -= 3
                    m_k[n], m_t[n] = 2, tile
                    nm[seat] += 1
                elif a == 2:
                    c[tile] -= 1
                    m_k[list(m_t[:n]).index(tile)] = 2
                else:
                    c[tile] -= 4
                    m_k[n], m_t[n] = 3, tile
                    nm[seat] += 1
                if left < wall and ready and shanten(table, c, m_k, m_t, nm[seat], void[seat]) > 0:
                    out[4 * i + seat] += 1
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="chengdu")
    ap.add_argument("--seats", nargs=4, default=["expert", "greedy", "greedy", "greedy"])
    ap.add_argument("--walls", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--wall", type=int, default=16, help="a kong is late with fewer than this many tiles left")
    ap.add_argument("--save", help="write the first spec's per-wall mean score to this .npz")
    ap.add_argument("--paired", help="a --save file of another code version on the same walls and seed")
    args = ap.parse_args()
    rules = load_rules(args.config, [f"seats=[{', '.join(args.seats)}]"])
    ids = np.arange(4 * args.walls, dtype=np.int64)
    raw = run_batch(rules, ids, args.seed, duplicate=True, record=True)
    late = breaking_late_kongs(raw, args.wall)
    p = raw.p
    spec = (p[:, S.PL_SEAT] + np.repeat(raw.rotations, 4)) % 4
    score = p[:, S.PL_SCORE:S.PL_N].sum(axis=1).astype(np.float64)
    n_ph = p.shape[0] / 4
    print(f"{args.config}, seats {args.seats}, {args.walls:,} walls x 4 (duplicate), seed {args.seed}; "
          f"kongs with < {args.wall} tiles left that leave a ready hand not ready:")
    for bot in dict.fromkeys(args.seats):
        sel = np.isin(spec, [i for i, b in enumerate(args.seats) if b == bot])
        k = late[sel]
        n = sel.sum()
        hit = k > 0
        mean_hit = score[sel][hit].mean() if hit.any() else float("nan")
        print(f"  {bot:>10}: {k.sum() / n:.5f} ± {k.std(ddof=1) / np.sqrt(n):.5f} per player-hand "
              f"({int(k.sum())} in {int(n):,}); those player-hands end {mean_hit:+.2f} on average")
    first = spec == 0
    per_wall = np.bincount(raw.deal_ids[np.flatnonzero(first) // 4], weights=score[first],
                           minlength=args.walls) / 4.0
    print(f"  {args.seats[0]} (first spec): {per_wall.mean():+.4f} ± {per_wall.std(ddof=1) / np.sqrt(args.walls):.4f}"
          f" per player-hand ({n_ph:,.0f} hands)")
    if args.save:
        np.savez(args.save, score=per_wall)
    if args.paired:
        d = per_wall - np.load(args.paired)["score"]
        print(f"  paired on the same walls, this run minus {args.paired}: {d.mean():+.4f} ± "
              f"{d.std(ddof=1) / np.sqrt(args.walls):.4f}")


if __name__ == "__main__":
    main()
