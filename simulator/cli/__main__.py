"""``python -m simulator.cli``: the ``xuezhan`` command."""

from simulator.cli import main

main()
