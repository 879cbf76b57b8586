"""Whose store a sweep's or a study's output directory is: a sweep resumes
in its own store (the same base scenario; the axes may differ, so a grid
can grow), a study in the store of the same study (its ``--quick`` and full
forms share one), and anything else is refused (a sweep: unless ``force``;
see :mod:`wavelab.results.ownership`, which does the same for runs)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from wavelab.errors import WavelabError, read_text_file
from wavelab.results.ownership import (
    MixedResultsError,
    clear,
    describe_difference,
    refuse,
    refuse_foreign,
    scenario_digest,
    wavelab_files,
)
from wavelab.scenario.toml_text import MAX_TOML_BYTES, parse_toml
from wavelab.sweep.grid import from_sweep_dict
from wavelab.sweep.store import check_not_busy

STUDY = "study.json"
"""The file that says which study a store holds (``{"study": NAME, ...}``)."""


def _stored_sweep_base(out: Path) -> dict[str, Any] | None:
    try:
        text = read_text_file(out / "sweep.toml", WavelabError, MAX_TOML_BYTES)
        folder = None
        with contextlib.suppress(OSError, ValueError, AttributeError, TypeError):
            # where its relative trace paths were read from
            stored = json.loads((out / "sweep.json").read_text(encoding="utf-8")).get("folder")
            folder = Path(stored) if isinstance(stored, str) else None
        data = parse_toml(text, "", WavelabError)
        return from_sweep_dict(data, folder=folder).base.normalized
    except (OSError, ValueError, WavelabError):
        return None


def _store_files(out: Path) -> list[Path]:
    """wavelab's files in ``out``, a directory no other process is writing
    to (nothing if it does not exist); an error if ``out`` is a file."""
    if not out.is_dir():
        if out.exists():
            raise MixedResultsError(f"{out} is a file, not a directory; choose another --out")
        return []
    check_not_busy(out)
    refuse_foreign(out)
    return wavelab_files(out)


def claim_sweep_dir(out: Path, base: dict[str, Any], force: bool = False) -> None:
    """Makes sure ``out`` may be the store of a sweep whose base scenario is
    ``base`` (see the module description); with ``force``, clears wavelab's
    files from it first. Raises :class:`MixedResultsError` otherwise, and
    the store's own error if another sweep is writing there."""
    files = _store_files(out)
    if not files:
        return
    if (out / "sweep.toml").exists():
        old = _stored_sweep_base(out)
        if old is not None and scenario_digest(old) == scenario_digest(base):
            return
        if old is None:
            whose = "a sweep whose sweep.toml this version cannot read"
        else:
            whose = f"a sweep of another scenario ({describe_difference(old, base)})"
    elif (out / "run.json").exists():
        whose = "the results of a single run (wavelab run)"
    else:
        whose = f"results that do not say whose they are ({files[0].name}, no sweep.toml)"
    if not force:
        raise refuse(out, whose, "remove them and start this sweep there")
    clear(out, files)


def _stored_study(out: Path) -> str | None:
    try:
        name = json.loads((out / STUDY).read_text(encoding="utf-8"))["study"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return name if isinstance(name, str) else None


def claim_study_dir(out: Path, name: str) -> None:
    """Makes sure ``out`` may be the store of study ``name``: empty, missing,
    or that study's store. Raises :class:`MixedResultsError` otherwise, and
    the store's own error if another process is writing there."""
    files = _store_files(out)
    if not files:
        return
    old = _stored_study(out)
    if old == name:
        return
    if old is not None:
        whose = f"the store of another study ({old})"
    elif (out / "sweep.toml").exists():
        whose = "a sweep's store"
    elif (out / "run.json").exists():
        whose = "the results of a single run (wavelab run)"
    else:
        whose = f"results that do not say whose they are ({files[0].name}, no {STUDY})"
    raise MixedResultsError(f"{out} holds {whose}; choose another --out, or remove them")
