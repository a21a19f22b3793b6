"""Tiles, the hand notation of docs/spec.md §1, and count vectors.

A tile *kind* is an integer 0–26: ``suit * 9 + (rank - 1)`` with suits m=0 (万), p=1 (筒), s=2 (条).
A hand is held in code as a count vector ``uint8[27]`` (how many of each kind); humans read and write the
notation ``123m456p789s11p``: runs of digits each closed by their suit letter, order free.
"""

from __future__ import annotations

import numpy as np

from simulator.errors import UserError

N_KINDS = 27
N_SUITS = 3
COPIES = 4
SUITS = "mps"
SUIT_NAMES_ZH = ("万", "筒", "条")
RANK_NAMES_ZH = ("一", "二", "三", "四", "五", "六", "七", "八", "九")


class TileError(UserError):
    """A tile string or count that cannot be a real set of tiles."""


def kind(suit: int, rank: int) -> int:
    """Kind index of ``rank`` (1–9) in ``suit`` (0=m, 1=p, 2=s)."""
    return suit * 9 + rank - 1


def parse_tiles(text: str) -> list[int]:
    """Parse notation such as ``123m456p11s`` into a list of kinds, in written order.

    Raises :class:`TileError` naming the offending character and its position (0-based).
    """
    kinds: list[int] = []
    pending: list[tuple[int, int]] = []  # (rank, position) waiting for their suit letter
    for pos, ch in enumerate(text.strip()):
        if ch in "123456789":
            pending.append((int(ch), pos))
        elif ch in SUITS:
            if not pending:
                raise TileError(f"suit letter {ch!r} at position {pos} has no digits before it")
            kinds.extend(kind(SUITS.index(ch), r) for r, _ in pending)
            pending.clear()
        elif ch == "0":
            raise TileError(f"rank 0 at position {pos}: ranks are 1-9")
        elif ch.isspace():
            continue
        else:
            raise TileError(f"unexpected character {ch!r} at position {pos}: expected digits 1-9 or m/p/s")
    if pending:
        raise TileError(f"digits at position {pending[0][1]} have no suit letter after them")
    return kinds


def parse_tile(text: str) -> int:
    """Parse exactly one tile, e.g. ``5p``."""
    kinds = parse_tiles(text)
    if len(kinds) != 1:
        raise TileError(f"expected one tile, got {len(kinds)} in {text!r}")
    return kinds[0]


def to_counts(kinds: list[int] | np.ndarray, *, limit: int = COPIES) -> np.ndarray:
    """Count vector ``uint8[27]`` of a list of kinds; more than ``limit`` copies of a kind is an error."""
    counts = np.bincount(np.asarray(kinds, dtype=np.int64), minlength=N_KINDS)
    if counts.size > N_KINDS:
        raise TileError("tile kind out of range 0-26")
    over = np.flatnonzero(counts > limit)
    if over.size:
        raise TileError(f"{format_tiles([int(over[0])])} appears {int(counts[over[0]])} times (at most {limit})")
    return counts.astype(np.uint8)


def counts_from_str(text: str) -> np.ndarray:
    """``uint8[27]`` count vector of a notation string."""
    return to_counts(parse_tiles(text))


def format_tiles(kinds) -> str:
    """Canonical notation of kinds (sorted, suits in m, p, s order), e.g. ``123m55p``."""
    ks = sorted(int(k) for k in kinds)
    out = []
    for s in range(N_SUITS):
        ranks = "".join(str(k - 9 * s + 1) for k in ks if k // 9 == s)
        if ranks:
            out.append(ranks + SUITS[s])
    return "".join(out)


def format_counts(counts: np.ndarray) -> str:
    """Canonical notation of a count vector."""
    return format_tiles(np.repeat(np.arange(N_KINDS), np.asarray(counts, dtype=np.int64)))


def tile_str(k: int) -> str:
    """Notation of one tile kind, e.g. ``5p``."""
    return f"{k % 9 + 1}{SUITS[k // 9]}"


def tile_name_zh(k: int) -> str:
    """Chinese display name of a tile kind, e.g. 五筒."""
    return RANK_NAMES_ZH[k % 9] + SUIT_NAMES_ZH[k // 9]


def names_zh(kinds) -> str:
    """Chinese names of kinds, space separated, sorted."""
    return " ".join(tile_name_zh(k) for k in sorted(int(k) for k in kinds))
