"""A rule set turned once into what the compiled engine takes: :class:`CompiledTable`.

Every Python entry to the engine — the batch (:func:`simulator.hands.run_batch`), the step path
(:class:`simulator.game.Hand`, :func:`simulator.game.play_hands`), the RL environment and the warm-up's choice of
compiled copy — starts from one of these instead of converting the :class:`~simulator.rules.RuleSet` itself.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simulator import engine, state
from simulator.bots import simple_lineup
from simulator.rules import RuleSet
from simulator.tables import suit_table


@dataclass(frozen=True, eq=False)
class CompiledTable:
    """``rules`` as arrays: ``params: int64[N_PARAMS]`` (``RuleSet.to_arrays``), ``bot_ids: int64[4]`` and
    ``bot_par: int64[4, N_BOT_PARAMS]`` (each seat spec's bot id and parameter row, ``RuleSet.bot_arrays``), and
    ``simple``: no seat needs a parameter row (random and greedy only), so the engine's simple copy runs it. Treat
    the arrays as read-only; :meth:`game` gives each caller its own mutable :class:`~simulator.state.Game`."""

    rules: RuleSet
    params: np.ndarray
    bot_ids: np.ndarray
    bot_par: np.ndarray
    simple: bool

    @classmethod
    def of(cls, rules: RuleSet) -> CompiledTable:
        bot_ids, bot_par = rules.bot_arrays()
        return cls(rules, rules.to_arrays(), bot_ids, bot_par, bool(simple_lineup(bot_ids)))

    @property
    def win_slots(self) -> int:
        """Win records one hand's state holds (3, more under 血流)."""
        return engine.win_slots(self.params)

    @property
    def rows_per_hand(self) -> int:
        """Win rows per hand a batch's outputs start with (they grow when a 血流 batch needs more)."""
        return engine.win_rows_per_hand(self.rules)

    def game(self, bots: np.ndarray | None = None) -> state.Game:
        """A fresh ``Game(table, params, bots, io)``: ``bots`` (int64[4], copied) the bot id of each seat, by
        default unset (the batch writes it per hand); no seat external."""
        ids = np.empty(state.N_SEATS, np.int64) if bots is None else np.array(bots, dtype=np.int64)
        return state.Game(suit_table(), self.params, ids, engine.alloc_io())

    def lineup(self):
        """``(bot_par, bpar)`` for :func:`simulator.engine.play`'s batch (see :func:`simulator.engine.lineup_params`):
        ``(None, (None,) * 4)`` for a simple line-up."""
        return engine.lineup_params(self.bot_ids, self.bot_par)
