"""docs/tutorial.ipynb runs from its first cell to its last in a Jupyter
kernel (nbclient), and shows what it says it shows: the scenario and the
results as HTML, a progress bar, the sweep's runs, the comparison figure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

from conftest import ROOT

TUTORIAL = ROOT / "docs" / "tutorial.ipynb"


def outputs(nb: Any, starts: str) -> list[Any]:
    """The outputs of the code cell whose source starts with ``starts``."""
    (cell,) = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith(starts)]
    return list(cell.outputs)


def text(outs: list[Any], name: str) -> str:
    return "".join(o.text for o in outs if o.output_type == "stream" and o.name == name)


def test_the_tutorial_notebook_runs_and_shows_its_results(tmp_path: Path) -> None:
    nb = nbformat.read(TUTORIAL, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
        "the notebook is kept without outputs (they would go stale)"
    )
    # raises CellExecutionError, with the cell and its traceback, if a cell fails
    NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()

    (shown,) = outputs(nb, 'sc = wavelab.load_scenario("demo")')
    assert "<b>Scenario demo</b>" in shown.data["text/html"]
    ran = outputs(nb, "res = wavelab.run(short, progress=True)")
    assert "sim s" in text(ran, "stderr"), "the progress bar shows in the notebook"
    assert "Warning" not in text(ran, "stderr")
    assert ran[-1].data["text/plain"] == "Results('demo', complete, 2 flows, 12 s simulated)"
    swept = outputs(nb, "done = wavelab.run_sweep(")
    assert text(swept, "stdout") == "18 runs, 0 reused, 0 failed\n"
    assert "18/18" in text(swept, "stderr")
    (loaded,) = outputs(nb, "results = wavelab.load_results(")
    assert "<b>sweep compare</b>: 18 runs" in loaded.data["text/html"]
    figure = outputs(nb, "import matplotlib.pyplot as plt")
    assert any("image/png" in o.get("data", {}) for o in figure)
    assert (tmp_path / "tutorial-results" / "compare" / "runs.parquet").is_file()
