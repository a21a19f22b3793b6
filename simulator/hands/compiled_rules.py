"""What the compiled engine takes from Python: a rule set turned into arrays once (:class:`CompiledTable`) and
the deal of each hand (:class:`DealPlan`).

Every Python entry to the engine — the batch (:func:`simulator.hands.run_batch`), the step path
(:class:`simulator.hands.game.Hand`, :func:`simulator.hands.game.play_hands`), sessions (through the batch), the RL
environments and the warm-up's choice of compiled copy — starts from these instead of converting the
:class:`~simulator.rules.RuleSet` or deriving seeds, dealers and seatings itself. ``CompiledTable.of`` keeps the
tables it built (by the rule set's content), so a run builds each variant's table once per process, not once per
chunk.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, replace

import numpy as np

from simulator import engine
from simulator.bots import simple_lineup
from simulator.kernel import state
from simulator.kernel.tables import suit_table
from simulator.rules import RuleSet


@dataclass(frozen=True, eq=False)
class CompiledTable:
    """``rules`` as arrays: ``params: int64[N_PARAMS]`` (``RuleSet.to_arrays``), ``bot_ids: int64[4]`` and
    ``bot_par: int64[4, N_BOT_PARAMS]`` (each seat spec's bot id and parameter row, ``RuleSet.bot_arrays``), and
    ``simple``: no seat needs a parameter row (random and greedy only), so the engine's simple copy runs it. Treat
    the arrays as read-only; :meth:`game` gives each caller its own mutable :class:`~simulator.kernel.state.Game`."""

    rules: RuleSet
    params: np.ndarray
    bot_ids: np.ndarray
    bot_par: np.ndarray
    simple: bool

    @classmethod
    def of(cls, rules: RuleSet) -> CompiledTable:
        """The table of ``rules``, built once per process for each rule set content (name included)."""
        key = rules.model_dump_json()
        table = _BUILT.get(key)
        if table is None:
            bot_ids, bot_par = rules.bot_arrays()
            table = cls(rules, rules.to_arrays(), bot_ids, bot_par, bool(simple_lineup(bot_ids)))
            _BUILT[key] = table
            while len(_BUILT) > _KEEP:
                _BUILT.popitem(last=False)
        # the arrays are shared; ``rules`` stays the caller's own object (observations hand it to Python bots)
        return table if table.rules is rules else replace(table, rules=rules)

    @property
    def win_slots(self) -> int:
        """Win records one hand's state holds (3, more under 血流)."""
        return engine.win_slots(self.params)

    @property
    def rows_per_hand(self) -> int:
        """Win rows per hand a batch's outputs start with (they grow when a 血流 batch needs more)."""
        return engine.win_rows_per_hand(self.win_slots)

    def game(self, bots: np.ndarray | None = None) -> state.Game:
        """A fresh ``Game(table, params, bots, io)``: ``bots`` (int64[4], copied) the bot id of each seat, by
        default unset (the batch writes it per hand); no seat external."""
        ids = np.empty(state.N_SEATS, np.int64) if bots is None else np.array(bots, dtype=np.int64)
        return state.Game(suit_table(), self.params, ids, engine.alloc_io())

    def lineup(self):
        """``(bot_par, bpar)`` for :func:`simulator.engine.play`'s batch (see :func:`simulator.engine.lineup_params`):
        ``(None, (None,) * 4)`` for a simple line-up."""
        return engine.lineup_params(self.bot_ids, self.bot_par)


_KEEP = 32  # tables kept per process (a study has a handful of variants)
_BUILT: OrderedDict[str, CompiledTable] = OrderedDict()


@dataclass(frozen=True)
class DealPlan:
    """The deal of each hand of a batch, decided in one place: ``hand_ids``; ``deal_ids`` and ``rotations``
    (hand_id = 4·deal_id + rotation under duplicate seating, else deal_id = hand_id and rotation 0); the wall and bot
    stream seeds (``SeedSequence(seed, spawn_key=(deal_id,))``, :func:`simulator.engine.deal_seeds`); the dealers
    (default deal_id % 4; sessions chain their own). All ``int64[n]`` (seeds ``uint64[n]``)."""

    hand_ids: np.ndarray
    deal_ids: np.ndarray
    rotations: np.ndarray
    wall_seeds: np.ndarray
    bot_seeds: np.ndarray
    dealers: np.ndarray

    @classmethod
    def of(cls, seed: int, hand_ids, *, duplicate: bool = False, dealers=None) -> DealPlan:
        ids = np.ascontiguousarray(hand_ids, dtype=np.int64)
        deal_ids, rotations = engine.split_ids(ids, duplicate)
        wall, bots = engine.deal_seeds(seed, deal_ids)
        dealt = deal_ids % state.N_SEATS if dealers is None else np.ascontiguousarray(dealers, dtype=np.int64)
        return cls(ids, deal_ids, rotations, wall, bots, dealt)

    def deals(self) -> state.Deals:
        """The plan as the compiled batch reads it."""
        return state.Deals(self.wall_seeds, self.bot_seeds, self.dealers, self.rotations)

    def empty_raw(self, rows_per_hand: int):
        """The batch's output arrays for these hands (:func:`simulator.engine.empty_raw`)."""
        return engine.empty_raw(self.hand_ids, self.deal_ids, self.rotations, rows_per_hand)
