"""The one exception type users see: a :class:`UserError` is printed by the CLI as ``error: <message>``.

Library code raises a subclass (``TileError``, ``RulesError``, ``HandError``, ``RunError`` ...) with a one-line
message naming the problem (file, key, position, ...); anything else escaping is a bug.
"""


class UserError(ValueError):
    """Bad input from the user: one line, no traceback, exit status 2."""


class IllegalActionError(UserError):
    """A Python bot chose an action outside the legal set; the hand's state is unchanged."""
