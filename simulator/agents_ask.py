"""Calling a Python bot: its answer checked, its errors and silences turned into one line naming it
(:func:`ask`), and a seat's bot built the same way (:func:`build`).
"""

from __future__ import annotations

import os
import signal
import threading
import traceback

import numpy as np

from simulator.agents_observation import Observation
from simulator.errors import IllegalActionError, UserError

TIMEOUT_ENV = "XUEZHAN_BOT_TIMEOUT"  # seconds per decision (float; 0 = no limit); set by --bot-timeout
DEFAULT_TIMEOUT = 60.0


class BotError(UserError):
    """A Python bot raised (or tried to exit), or did not answer in time. ``bot_traceback``: the bot's own
    traceback as text (printed under ``xuezhan --debug``)."""

    bot_traceback: str = ""


class _NoAnswer(Exception):
    pass


def _on_alarm(signum, frame):
    raise _NoAnswer


def bot_name(agent) -> str:
    cls = type(agent)
    return f"{cls.__module__}:{cls.__qualname__}"


def decision_timeout() -> float:
    """The per-decision time limit in seconds (``$XUEZHAN_BOT_TIMEOUT``, default 60; 0 = none)."""
    raw = os.environ.get(TIMEOUT_ENV, "")
    try:
        value = float(raw) if raw else DEFAULT_TIMEOUT
    except ValueError:
        value = DEFAULT_TIMEOUT
    return value if 0 <= value < float("inf") else DEFAULT_TIMEOUT


def ask(agent, obs: Observation, hand_label: str) -> int:
    """``agent.act(obs)`` checked: an integer action (a bool, a string, a float, None... is the documented
    illegal-action error); an exception, ``sys.exit`` or no answer within :func:`decision_timeout` is a
    :class:`BotError` naming the bot, hand, seat and decision."""
    where = f"hand {hand_label or '?'}, seat {obs.seat}, decision {obs.decision}"
    limit = decision_timeout()
    timed = limit > 0 and threading.current_thread() is threading.main_thread()
    if timed:
        old = signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        action = agent.act(obs)
    except _NoAnswer:
        raise BotError(f"bot {bot_name(agent)}: no answer within {limit:g} s ({where}); raise the limit with "
                       "--bot-timeout") from None
    except (KeyboardInterrupt, UserError):  # a UserError is already one line (xuezhan play's input, say)
        raise
    except BaseException as exc:  # SystemExit too: a bot never ends the run
        err = BotError(f"bot {bot_name(agent)}: {type(exc).__name__}: {str(exc)[:160]} ({where}); "
                       "`xuezhan --debug ...` shows its traceback")
        err.bot_traceback = "".join(traceback.format_exception(exc))
        raise err from None
    finally:
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
    if isinstance(action, bool | np.bool_) or not isinstance(action, int | np.integer):
        raise IllegalActionError(f"hand {hand_label or '?'}: seat {obs.seat} answered {obs.decision} with illegal "
                                 f"action {str(repr(action))[:40]} ({type(action).__name__}, not an action "
                                 f"number); legal: {list(obs.legal_actions)}")
    return int(action)


def build(spec, seat: int):
    """A new instance of a seat's Python bot (``rules.BotSpec.build``); a :class:`BotError` naming it when its
    constructor raises or exits."""
    try:
        return spec.build()
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        err = BotError(f"bot {spec.bot}: its constructor raised {type(exc).__name__}: {str(exc)[:160]} (seat "
                       f"{seat}); `xuezhan --debug ...` shows its traceback")
        err.bot_traceback = "".join(traceback.format_exception(exc))
        raise err from None
