"""Calling a Python bot: its answer checked, its errors and silences turned into one line naming it
(:func:`ask`), and a seat's bot built the same way (:func:`build`).
"""

from __future__ import annotations

import os
import signal
import threading
import time
import traceback
from collections.abc import Callable

import numpy as np

from simulator.errors import IllegalActionError, UserError
from simulator.hands.observation import Observation

TIMEOUT_ENV = "XUEZHAN_BOT_TIMEOUT"  # seconds per decision (float; 0 = no limit); set by --bot-timeout
DEFAULT_TIMEOUT = 60.0


class BotError(UserError):
    """A Python bot raised (or tried to exit), or did not answer in time. ``bot_traceback``: the bot's own
    traceback as text (printed under ``xuezhan --debug``)."""

    bot_traceback: str = ""


class _NoAnswer(BaseException):
    """Raised in the bot by SIGALRM at the time limit: not an ``Exception``, so the usual ``except Exception``
    fallback of a bot does not swallow it (a bare ``except:`` still can: then the answer comes late, or never, and
    the checks below end the run)."""


def _on_alarm(signum, frame):
    raise _NoAnswer


WATCH_GRACE = 1.0  # s: a bot that swallowed the time-out is stopped at 2 x the limit + this (see Watchdog)
_POLL = 0.25


class Watchdog(threading.Thread):
    """Ends the worker process of a bot that keeps running after its time-out (one that caught it, or sits in
    code no signal interrupts): no exception has to reach the engine. Armed around each decision by :func:`ask`
    once a runner worker enabled it (:func:`watch_bots`); past the deadline it writes the one-line error to
    ``report_dir/<pid>.txt``, where the runner finds it when it sees the worker gone, and exits the process."""

    def __init__(self, report_dir: str | None) -> None:
        super().__init__(name="xuezhan-bot-watchdog", daemon=True)
        self.report_dir = report_dir
        self._lock = threading.Lock()
        self._token = 0
        self._deadline: float | None = None
        self._message: Callable[[], str] = str

    def arm(self, deadline: float, message: Callable[[], str]) -> int:
        """Watch a decision until ``deadline`` (``time.monotonic``); ``message``: the error line, made if it fires.
        Returns the token that :meth:`disarm` takes."""
        with self._lock:
            self._token += 1
            self._deadline, self._message = deadline, message
            return self._token

    def disarm(self, token: int) -> None:
        with self._lock:
            if self._token == token:
                self._deadline = None

    def run(self) -> None:
        while True:
            with self._lock:
                token, deadline, message = self._token, self._deadline, self._message
            now = time.monotonic()
            if deadline is None or now < deadline:
                time.sleep(_POLL if deadline is None else min(_POLL, deadline - now))
                continue
            with self._lock:
                if self._token != token or self._deadline is None:
                    continue  # answered meanwhile
            self._fire(message())

    def _fire(self, message: str) -> None:
        try:
            if self.report_dir is not None:
                path = os.path.join(self.report_dir, f"{os.getpid()}.txt")
                with open(path + ".tmp", "w", encoding="utf-8") as fh:
                    fh.write(message)
                os.replace(path + ".tmp", path)
            else:
                os.write(2, f"error: {message}\n".encode())
        finally:
            os._exit(3)


_WATCHDOG: Watchdog | None = None


def watch_bots(report_dir: str | None) -> None:
    """Enable the :class:`Watchdog` in this (worker) process; the runner's workers call it before a chunk with
    Python bots. Never in an interactive process (a notebook's bot is stopped by the exception alone)."""
    global _WATCHDOG
    if _WATCHDOG is None:
        _WATCHDOG = Watchdog(report_dir)
        _WATCHDOG.start()
    _WATCHDOG.report_dir = report_dir


def overrun(agent, limit: float, where: str, elapsed: float | None = None) -> BotError:
    """The error of a bot that did not answer within ``limit`` seconds (``elapsed``: it answered, that late)."""
    late = f"answered after {elapsed:.3g} s, over the limit of {limit:g} s" if elapsed is not None else \
        f"no answer within {limit:g} s"
    return BotError(f"bot {bot_name(agent)}: {late} ({where}); raise the limit with --bot-timeout")


def bot_name(agent) -> str:
    cls = type(agent)
    return f"{cls.__module__}:{cls.__qualname__}"


def decision_timeout(agent=None) -> float:
    """The per-decision time limit in seconds: the agent's own ``time_limit`` if its class sets one (a person at
    the terminal, :class:`simulator.agents.play.Human`: 0), else ``$XUEZHAN_BOT_TIMEOUT`` (default 60); 0 = none."""
    own = getattr(agent, "time_limit", None)
    if own is not None:
        return float(own)
    raw = os.environ.get(TIMEOUT_ENV, "")
    try:
        value = float(raw) if raw else DEFAULT_TIMEOUT
    except ValueError:
        value = DEFAULT_TIMEOUT
    return value if 0 <= value < float("inf") else DEFAULT_TIMEOUT


def ask(agent, obs: Observation, hand_label: str) -> int:
    """``agent.act(obs)`` checked: an integer action (a bool, a string, a float, None... is the documented
    illegal-action error); an exception, ``sys.exit``, no answer within :func:`decision_timeout` or an answer
    after it (a bot that caught the time-out) is a :class:`BotError` naming the bot, hand, seat and decision; in a
    runner worker, a bot still running well past it ends the worker (:class:`Watchdog`)."""
    where = f"hand {hand_label or '?'}, seat {obs.seat}, decision {obs.decision}"
    limit = decision_timeout(agent)
    timed = limit > 0 and threading.current_thread() is threading.main_thread()
    if timed:
        old = signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, limit)
    start = time.monotonic()
    watch = _WATCHDOG if limit > 0 else None
    token = 0 if watch is None else watch.arm(start + 2 * limit + WATCH_GRACE, lambda: (
        f"bot {bot_name(agent)}: no answer within {limit:g} s ({where}), and it kept running after the time-out "
        "(a bare `except:` in the bot?), so its worker was stopped; raise the limit with --bot-timeout"))
    try:
        action = agent.act(obs)
    except _NoAnswer:
        raise overrun(agent, limit, where) from None
    except (KeyboardInterrupt, UserError):  # a UserError is already one line (xuezhan play's input, say)
        raise
    except BaseException as exc:  # SystemExit too: a bot never ends the run
        if limit > 0 and time.monotonic() - start > limit:  # it caught the time-out and raised something else
            raise overrun(agent, limit, where) from None
        err = BotError(f"bot {bot_name(agent)}: {type(exc).__name__}: {str(exc)[:160]} ({where}); "
                       "`xuezhan --debug ...` shows its traceback")
        err.bot_traceback = "".join(traceback.format_exception(exc))
        raise err from None
    finally:
        if timed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
        if watch is not None:
            watch.disarm(token)
    elapsed = time.monotonic() - start
    if limit > 0 and elapsed > limit:  # late, or a fallback after swallowing the time-out: never accepted
        raise overrun(agent, limit, where, elapsed)
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
