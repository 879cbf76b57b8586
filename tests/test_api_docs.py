"""The API reference (docs/api/, Sphinx autodoc) builds from the docstrings
with every reference to wavelab's own objects resolved (``-n -W``: a
docstring naming a function, class or attribute that does not exist fails
here), and it covers every public module of the library. The build is
marked slow (``python -m pytest -m slow tests/test_api_docs.py``)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

API = ROOT / "docs" / "api"
NOT_IN_REFERENCE = ("wavelab.cli", "wavelab.bench", "wavelab.experiments", "wavelab.examples")
"""The command line, the benchmarks and the reproductions: programs, not a
library to call (their guides are in docs/)."""


def public_modules() -> set[str]:
    package = ROOT / "python"
    names = set()
    for f in (package / "wavelab").rglob("*.py"):
        parts = f.relative_to(package).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        name = ".".join(parts)
        if any(p.startswith("_") for p in parts) or name == "wavelab":
            continue
        if not name.startswith(NOT_IN_REFERENCE):
            names.add(name)
    return names


def test_every_public_module_is_in_the_reference() -> None:
    listed = set()
    for page in API.glob("*.rst"):
        listed |= set(re.findall(r"^\.\. automodule:: (\S+)$", page.read_text(), re.M))
    assert public_modules() - listed == set(), "add these modules to a page of docs/api/"
    assert listed - public_modules() == set(), "these modules are gone"


@pytest.mark.slow  # 10.5 s of CPU alone; 16-51 s on a machine at load 6-10
def test_the_api_reference_builds_with_every_reference_resolved(tmp_path: Path) -> None:
    # the dummy builder reads, resolves and checks everything but writes no
    # HTML (`sphinx-build -b html docs/api OUT` writes the pages)
    flags = ["-b", "dummy", "-E", "-n", "-W", "--keep-going", "-q"]
    res = subprocess.run(
        [sys.executable, "-m", "sphinx", *flags, str(API), str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-4000:]
    assert "WARNING" not in res.stderr, res.stderr[-4000:]
