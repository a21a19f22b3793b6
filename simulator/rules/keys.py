"""The key table: a rule key declared once — its dotted path, type (integer range, boolean or choices), default,
documentation and slot in the compiled parameter vector — from which everything else follows:

- the field of :class:`simulator.rules.RuleSet` (``rules_blocks`` builds each block's table keys as pydantic
  fields: type, bounds, default, description), hence validation, ``xuezhan rules schema`` (the JSON Schema) and
  ``xuezhan rules show``;
- the slot of ``RuleSet.to_arrays()`` (:data:`SLOT`, after the vector of :mod:`simulator.rules.vocab`) and its
  value there: the integer, 0/1 for a boolean, the index in ``choices`` (the enum integer) for a choice;
- the money bound of the logs (``rules.log_bounds``: ``money`` base units per unit of the value);
- the digest and the manifest: a key at its default is left out of ``RuleSet.resolved()``, so adding a key
  changes no existing rule set's digest, manifest or log file;
- docs/rules.md's "Rule keys of the key table" (``tests/test_rule_keys.py`` checks it is :func:`reference`'s text).

Plain tuples and integers (no pydantic, no numpy, no numba): compiled modules read a key's slot from here
(``SLOT["settlement.dealer_compensation"]``), so editing the Python-only rule modules leaves numba's cache valid.
Adding a key: one row here, and the compiled code that reads it (see docs/internals.md, "Files to touch").
The keys of :mod:`simulator.rules.vocab`'s ``_SCALARS`` predate this table and are still declared there and in
``rules_blocks``/``rules.py``.
"""

from __future__ import annotations

from typing import NamedTuple

from simulator.rules.vocab import P_KEY_TABLE


class Key(NamedTuple):
    """One rule key. ``kind`` is ``int`` (``low``..``high``), ``bool`` or ``choice`` (one of ``choices``)."""

    path: str
    kind: str
    default: int | bool | str
    doc: str
    low: int = 0
    high: int = 0
    choices: tuple[str, ...] = ()
    money: int = 0  # base units one seat can pay or receive in a hand per unit of the value (the logs' int32 bound)

    @property
    def block(self) -> str:
        """The block the key sits in (``""`` = the top level of a rule file)."""
        return self.path.rpartition(".")[0]

    @property
    def name(self) -> str:
        return self.path.rpartition(".")[2]

    def encode(self, value: int | bool | str) -> int:
        """The key's value in the compiled parameter vector (a choice: its index, the enum integer)."""
        return self.choices.index(value) if self.kind == "choice" else int(value)


KEYS: tuple[Key, ...] = (
    Key("settlement.dealer_compensation", "int", 0,
        "money units (base units unless settlement.money_scale says otherwise) the dealer pays each other player "
        "at the start of every hand, booked as score_transfer; 0 = off", low=0, high=10_000, money=3),
    Key("settlement.money_scale", "int", 1,
        "money units per base unit: every payment of the rules is this many units per base unit in the engine "
        "and the logs' score columns (the analysis divides them back to base units), so dealer_compensation "
        "can be a fraction of a base unit; 1 = the logs count base units", low=1, high=1000),
)
BY_PATH = {k.path: k for k in KEYS}
SLOT = {k.path: P_KEY_TABLE + i for i, k in enumerate(KEYS)}  # after the slots of simulator.rules.vocab
N_PARAMS = P_KEY_TABLE + len(KEYS)  # length of RuleSet.to_arrays()


def value_of(rules: object, key: Key) -> int | bool | str:
    """The key's value in a rule set (``RuleSet`` or any object with the blocks as attributes)."""
    value = rules
    for part in key.path.split("."):
        value = getattr(value, part)
    return value  # type: ignore[return-value]


def in_block(block: str) -> tuple[Key, ...]:
    """The table's keys of one block, in table order."""
    return tuple(k for k in KEYS if k.block == block)


def _values(k: Key) -> str:
    if k.kind == "choice":
        return " / ".join(f"`{c}`" for c in k.choices)
    return "`true` / `false`" if k.kind == "bool" else f"integer {k.low}–{k.high:,}"


def reference() -> str:
    """docs/rules.md's table of the key table's keys (generated; a test compares)."""
    lines = ["| key | values | default | meaning |", "|---|---|---|---|"]
    for k in KEYS:
        default = str(k.default).lower() if k.kind == "bool" else k.default
        lines.append(f"| `{k.path}` | {_values(k)} | `{default}` | {k.doc} |")
    return "\n".join(lines) + "\n"
