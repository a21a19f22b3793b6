"""The compiled kernel: tiles, suit tables and hand shapes, hand evaluation and scoring, the state
record, seeds, settlement. Imports only the rule vocabulary (``simulator.rules.vocab``,
``simulator.rules.keys``) and the numba-free base modules (docs/internals.md, "Packages")."""
