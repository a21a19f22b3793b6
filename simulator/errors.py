"""The one exception type users see: a :class:`UserError` is printed by the CLI as ``error: <message>``.

Library code raises a subclass (``TileError``, ``RulesError``, ``HandError``, ``RunError`` ...) with a one-line
message naming the problem (file, key, position, ...); anything else escaping is a bug.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class UserError(ValueError):
    """Bad input from the user: one line, no traceback, exit status 2."""


class IllegalActionError(UserError):
    """A Python bot chose an action outside the legal set; the hand's state is unchanged."""


def did_you_mean(word: object, choices: Iterable[str]) -> str:
    """``" (did you mean 'cap'?)"`` for the closest of ``choices`` to a misspelt name (difflib), else ``""``."""
    close = difflib.get_close_matches(str(word), list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
