"""``xuezhan play``: a person takes one seat in the terminal against compiled bots (for sanity-checking bots and
rules). The person is a Python bot (:class:`Human`) whose ``act`` shows the observation and reads a line."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from simulator import agents
from simulator.errors import UserError
from simulator.hands import game
from simulator.kernel.state import A_DANCE, A_DECLARE, A_KONG, A_PASS, A_PUNG, A_VOID0, A_WIN, BatchResult
from simulator.kernel.tiles import SUITS, format_counts, parse_tile, tile_str
from simulator.rules import RuleSet

WORDS = {"pass": A_PASS, "p": A_PASS, "pung": A_PUNG, "kong": A_KONG, "win": A_WIN, "hu": A_WIN, "declare": A_DECLARE,
         "dance": A_DANCE}


def action_name(a: int) -> str:
    if a < A_VOID0:
        return tile_str(a)
    if a < A_PASS:
        return f"void {SUITS[a - A_VOID0]}"
    return {A_PASS: "pass", A_PUNG: "pung", A_KONG: "kong", A_WIN: "win", A_DECLARE: "declare", A_DANCE: "dance"}[a]


def parse_action(text: str, obs: agents.Observation) -> int | None:
    """A typed answer (``5m``, ``pass``, ``pung``, ``kong``, ``win``, ``declare``, ``dance``, a suit letter at 定缺, or
    nothing = the first legal action) as an action, or None if it is not legal here."""
    text = text.strip().lower()
    if not text:
        return obs.legal_actions[0]
    if obs.decision == "void" and text in SUITS:
        a = A_VOID0 + SUITS.index(text)
    elif text in WORDS:
        a = WORDS[text]
    else:
        try:
            a = parse_tile(text)
        except ValueError:
            return None
    return a if a in obs.legal_actions else None


def describe(obs: agents.Observation) -> list[str]:
    """What the person sees before deciding."""
    out = [f"seat {obs.seat} — {obs.decision}; wall {obs.tiles_left}, scores {obs.scores.tolist()}"]
    for q in range(4):
        melds = " ".join(f"{k}:{tile_str(t) if t >= 0 else '??'}" for k, t in obs.melds[q])
        disc = "".join(tile_str(t) for s, t in obs.discards if s == q)
        void = SUITS[obs.voids[q]] if obs.voids[q] >= 0 else "-"
        won = " (won)" if obs.won[q] >= 0 else ""
        won += ("", " (sings)", " (dances: " + " ".join(tile_str(k) for k in obs.shown[q]) + ")")[obs.declared[q]]
        out.append(f"  seat {q}{' (you)' if q == obs.seat else ''}{won} void {void} melds [{melds}] discards {disc}")
    out.append(f"  your hand: {format_counts(np.asarray(obs.hand))}")
    if obs.tile >= 0:
        source = "your draw" if obs.from_seat < 0 else f"seat {obs.from_seat}"
        out.append(f"  tile: {tile_str(obs.tile)} from {source}" + (f", worth {obs.fan} fan" if obs.fan else ""))
    out.append("  legal: " + ", ".join(action_name(a) for a in obs.legal_actions))
    return out


class Human(agents.Bot):
    """A person at the terminal: ``ask`` reads a line (``input``), ``say`` prints one. A person may think as long
    as they like: no per-decision time limit (``--bot-timeout`` is for bots)."""

    time_limit = 0.0

    def __init__(self, ask: Callable[[str], str] = input, say: Callable[[str], None] = print):
        self.ask, self.say = ask, say

    def act(self, obs: agents.Observation) -> int:
        for line in describe(obs):
            self.say(line)
        while True:
            try:
                line = self.ask("> ")
            except EOFError:
                raise UserError("play: the input ended before the hand was over") from None
            a = parse_action(line, obs)
            if a is not None:
                return a
            self.say("  not legal here; choose one of: " + ", ".join(action_name(x) for x in obs.legal_actions))


def play(rules: RuleSet, seed: int, hand_id: int, seat: int, human: Human) -> BatchResult:
    """Play one hand with the person at ``seat`` (the seat's spec is replaced; the others are as in ``rules``).
    Returns the raw arrays of the hand (as :func:`hands.run_batch`)."""
    return game.play_hands(rules, np.array([hand_id], np.int64), seed, {seat: human}, record=True)


def final_lines(raw: BatchResult) -> list[str]:
    p = raw.p
    net = p[:, -6:].sum(axis=1)
    return [f"hand over: net scores {net.tolist()} (seat order)"]

