"""Execute the notebooks end to end (nbclient, the venv's python3 kernel) so they never rot.

Each notebook runs its own small study (a dict or a shipped study's name given to ``xuezhan.run_study``, in the
kernel: no YAML written, no CLI shelled out) in a temporary directory, and imports nothing of this project but
``xuezhan``. ``XUEZHAN_NB_HANDS`` lowers the number of hands to keep CI fast; the cells' outputs are
checked for errors and for the tables and figures they promise.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.slow

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
NAMES = ("01_quickstart", "02_rule_designer", "03_strategy_risk", "04_write_a_bot", "05_sessions")


def test_notebooks_are_stored_clean():
    for name in NAMES:
        book = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
        nbformat.validate(book)
        code = [c for c in book.cells if c.cell_type == "code"]
        assert code and all(not c.outputs and c.execution_count is None for c in code), name
        source = "\n".join(c.source for c in code)
        assert "import xuezhan" in source and "xuezhan.run_study(" in source, name
        imports = [line.split()[1] for line in source.splitlines() if line.startswith(("import ", "from "))]
        assert not {m.split(".")[0] for m in imports} & {"simulator", "analysis", "subprocess"}, (name, imports)
        assert not [line for line in source.splitlines() if line.startswith(("name:", "baseline:"))], name  # YAML


@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs(name, monkeypatch, tmp_path):
    monkeypatch.setenv("XUEZHAN_NB_HANDS", "400")
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the notebooks' temporary runs land here and are cleaned up
    book = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    NotebookClient(book, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in book.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    tables = [o for o in outputs if "text/html" in o.get("data", {})]
    assert len(images) >= 2 and len(tables) >= 3, name
