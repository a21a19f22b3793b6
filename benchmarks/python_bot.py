"""Step-path throughput: one Python bot (the first legal action) against three compiled greedy bots.

    python -P benchmarks/python_bot.py              # 2,000 hands on chengdu
    python -P benchmarks/python_bot.py --hands 5000 --config qq_sichuan

Prints hands/s (CPU time of this process, warm: compilation is done before timing) and the Python bot's decisions
per hand. The target is at least 500 hands/s on one core.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from simulator.agents import FirstLegalBot
from simulator.hands import game
from simulator.rules import load_rules


class CountingFirstLegal(FirstLegalBot):
    def __init__(self) -> None:
        self.calls = 0

    def act(self, obs):
        self.calls += 1
        return obs.legal_actions[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=2000)
    ap.add_argument("--config", default="chengdu")
    args = ap.parse_args()
    rules = load_rules(args.config, {"seats": ["greedy"] * 4})
    bot = CountingFirstLegal()
    game.play_hands(rules, np.arange(8), 0, {0: bot})  # compile / load the cache
    bot.calls = 0
    t0 = time.process_time()
    game.play_hands(rules, np.arange(args.hands), 1, {0: bot})
    dt = time.process_time() - t0
    print(f"{args.config} python-first-legal + greedy×3: {args.hands / dt:,.0f} hands/s"
          f" ({1e6 * dt / args.hands:.0f} µs/hand, {bot.calls / args.hands:.1f} Python decisions/hand)")


if __name__ == "__main__":
    main()
