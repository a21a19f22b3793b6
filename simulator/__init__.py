"""xuezhan simulator: tiles, rules, hand evaluation and scoring, engine, bots, batch runner, CLI."""

__version__ = "0.1.0"
