"""Whose results a directory holds: results are never silently mixed (the
claim of a sweep's store is :mod:`wavelab.sweep.ownership`).

``wavelab run X --set ...`` used to write into the same directory as
``wavelab run X``, so one run's tables ended up beside another's plots. Before
anything is written, a run or a sweep *claims* its output directory:

* an empty or missing directory (hidden files aside) is free;
* a directory that holds files but none wavelab writes (a folder of
  scenario files, a paper's sources) is refused, ``force`` or not: it is not
  wavelab's, so a fresh folder is asked for (:func:`refuse_foreign`);
* a run's directory (``run.json``) is the same run's when its normalised
  scenario, ``--set`` changes included, equals the new one (running it again
  replaces it: runs are deterministic);
* a sweep's store (``sweep.toml``) is the same sweep's when its base scenario
  (the file without the ``[sweep]`` table, normalised by this version) equals
  the new one; the axes may differ, so a grid can grow and resume;
* anything else, another scenario's run, a store where a run should go or the
  reverse, or wavelab's files without the ``run.json`` that says whose they
  are, is refused with what differs, unless ``force``, which first removes
  the files wavelab writes (and only those: other files stay).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from wavelab.errors import WavelabError
from wavelab.results.tables import TABLES

PLOTS = (
    "sequence",
    "rate",
    "cwnd",
    "rtt",
    "queue",
    "queue-delay",
    "algorithm",
    "jain",
    "rtt-cdf",
)
"""The plots of a run (:func:`wavelab.plot.run_plots.plot_all`), without their extension."""

PLOT_FORMATS = ("png", "pdf", "svg")

RUN_FILES = frozenset(
    [f"{t}.parquet" for t in TABLES]
    + [f"{p}.{ext}" for p in PLOTS for ext in PLOT_FORMATS]
    + ["summary.csv", "run.json", "report.html"]
)
"""Every file name ``wavelab run`` and ``wavelab report`` write in a run's
directory (captures, ``*.pcap``, come on top)."""

STORE_FILES = frozenset(
    {"runs", "index.jsonl", ".lock", "sweep.json", "sweep.toml", "runs.parquet", "runs.csv"}
    | {"study.json"}
    | {"seeds.parquet", "seeds.csv", "report.html"}
    | {f"throughput-delay.{ext}" for ext in PLOT_FORMATS}
)
"""Every name a sweep or a study writes at the top of its store."""


class MixedResultsError(WavelabError):
    """The output directory holds other results; the message says whose and
    how to go on (another ``--out``, or ``--force``)."""


def scenario_digest(normalized: dict[str, Any]) -> str:
    """SHA-256 of a normalised scenario as canonical JSON."""
    text = json.dumps(normalized, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _differences(old: Any, new: Any, path: str = "") -> Iterator[str]:
    """The field paths where two scenarios differ, with both values."""
    if isinstance(old, dict) and isinstance(new, dict):
        if "algorithm" in old and "algorithm" in new and old["algorithm"] != new["algorithm"]:
            # another congestion control: its parameters differ too, which says nothing
            yield from _differences(old["algorithm"], new["algorithm"], f"{path}.algorithm")
            return
        for key in sorted(set(old) | set(new), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in old:
                yield f"{where}: not there, {json.dumps(new[key])} here"
            elif key not in new:
                yield f"{where}: {json.dumps(old[key])} there, not here"
            else:
                yield from _differences(old[key], new[key], where)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            yield from _differences(a, b, f"{path}[{i}]")
    elif old != new:
        shown = [json.dumps(v) if len(json.dumps(v)) <= 40 else "..." for v in (old, new)]
        yield f"{path or 'the scenario'}: {shown[0]} there, {shown[1]} here"


def describe_difference(old: dict[str, Any], new: dict[str, Any]) -> str:
    """The first three differences between two normalised scenarios."""
    diffs = list(_differences(old, new))
    text = "; ".join(diffs[:3])
    return text + (f"; and {len(diffs) - 3} more" if len(diffs) > 3 else "")


def wavelab_files(out: Path) -> list[Path]:
    """wavelab's files in ``out``; a lock, hidden files and an empty ``runs/``
    (a sweep killed at its start) hold no results and do not count."""
    names = (RUN_FILES | STORE_FILES) - {".lock"}
    found = [
        p
        for p in out.iterdir()
        # hidden names are a writer's own: its lock, its temporary files,
        # results set aside while it replaces them
        if not p.name.startswith(".") and (p.name in names or p.suffix == ".pcap")
    ]
    return sorted(p for p in found if not (p.name == "runs" and p.is_dir() and _empty(p)))


def _empty(d: Path) -> bool:
    return next(d.iterdir(), None) is None


def refuse_foreign(out: Path, own: Iterable[str] = ()) -> None:
    """Raises :class:`MixedResultsError` if ``out`` is a folder that holds
    files (other than hidden ones) but none that wavelab writes: a mistyped
    ``--out`` (the folder of the scenario files, a home directory) would
    otherwise fill someone else's folder with tables and plots. ``own`` are
    further names that mark a folder as wavelab's (a reproduction's store,
    a benchmark's files). A missing or empty folder, or one where wavelab's
    files are (beside a user's notes), passes."""
    if not out.is_dir():
        return
    marks = RUN_FILES | STORE_FILES | set(own)
    names = [p.name for p in out.iterdir()]
    if any(n.startswith(ASIDE) for n in names):
        return  # wavelab's results, set aside while new ones are written
    entries = sorted(n for n in names if not n.startswith("."))
    if not entries or any(n in marks or n.endswith(".pcap") for n in entries):
        return
    shown = ", ".join(entries[:3]) + (f" and {len(entries) - 3} more" if len(entries) > 3 else "")
    raise MixedResultsError(
        f"{out} is not empty and holds nothing of wavelab's ({shown}); "
        "choose a new or empty folder for --out"
    )


def refuse(out: Path, whose: str, force_hint: str) -> MixedResultsError:
    """The error for ``out`` holding ``whose`` results, with the way out."""
    return MixedResultsError(
        f"{out} holds {whose}; choose another --out, or add --force to {force_hint}"
    )


def clear(out: Path, files: list[Path]) -> None:
    """Removes ``files`` (wavelab's, from :func:`wavelab_files`) from ``out``."""
    for p in files:
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        else:
            p.unlink(missing_ok=True)


def _stored_run(out: Path) -> dict[str, Any] | None:
    try:
        meta = json.loads((out / "run.json").read_text(encoding="utf-8"))
        scenario = meta["scenario"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return scenario if isinstance(scenario, dict) else None


def foreign_files(out: Path, normalized: dict[str, Any], force: bool = False) -> list[Path]:
    """Checks that ``out`` may take the results of the run of ``normalized``
    (see the module description) and returns the files of other results
    that must go first (only with ``force``; an empty list when ``out`` is
    free or holds this run's results). Raises :class:`MixedResultsError`
    otherwise. Removes nothing."""
    if not out.is_dir():
        if out.exists():
            raise MixedResultsError(f"{out} is a file, not a directory; choose another --out")
        return []
    refuse_foreign(out)
    files = wavelab_files(out)
    if not files:
        return []
    if (out / "sweep.toml").exists() or (out / "index.jsonl").exists():
        whose, hint = "a sweep's store", "remove it and write this run there"
    elif (old := _stored_run(out)) is None:
        whose = f"results that do not say whose they are ({files[0].name}, no readable run.json)"
        hint = "remove them"
    elif scenario_digest(old) == scenario_digest(normalized):
        return []
    else:
        whose = f"the results of another scenario ({describe_difference(old, normalized)})"
        hint = "replace them"
    if not force:
        raise refuse(out, whose, hint)
    return files


def claim_run_dir(out: Path, normalized: dict[str, Any], force: bool = False) -> None:
    """Makes sure ``out`` may take the results of the run of ``normalized``
    (see the module description); with ``force``, clears wavelab's files
    from it first. Raises :class:`MixedResultsError` otherwise."""
    clear(out, foreign_files(out, normalized, force))


ASIDE = ".replaced-"
"""Prefix of the names :func:`replacing` moves results to while new ones are written."""


@contextlib.contextmanager
def replacing(out: Path, files: list[Path]) -> Iterator[None]:
    """Replaces ``files`` (other results in ``out``, from
    :func:`foreign_files`) by what the block writes, all or nothing: they
    are renamed aside first (a rename needs no space, so a full disk cannot
    stop it half-way), removed once the block ends, and put back if it
    raises, after wavelab's files the block wrote are removed (with no
    ``files``, the block's own atomic writes are all there is). Leftovers of
    a writer killed in between are removed on the next replacement.

    Raises ``OSError`` if they cannot be moved aside (a read-only folder);
    then nothing was changed."""
    for left in out.glob(f"{ASIDE}*") if out.is_dir() else ():
        _remove(left)
    tag = f"{ASIDE}{uuid.uuid4().hex[:8]}-"
    aside: list[tuple[Path, Path]] = []
    try:
        for p in files:
            moved = p.with_name(tag + p.name)
            os.rename(p, moved)
            aside.append((p, moved))
    except OSError:
        _put_back(aside)
        raise
    try:
        yield
    except BaseException:
        if aside:  # what is there now is the block's: the others are aside
            for p in wavelab_files(out) if out.is_dir() else []:
                with contextlib.suppress(OSError):
                    _remove(p)
            _put_back(aside)
        raise
    for _, moved in aside:
        with contextlib.suppress(OSError):
            _remove(moved)


def _put_back(aside: list[tuple[Path, Path]]) -> None:
    for p, moved in reversed(aside):
        with contextlib.suppress(OSError):
            os.rename(moved, p)


def _remove(p: Path) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p, ignore_errors=True)
    else:
        p.unlink(missing_ok=True)


__all__ = [
    "RUN_FILES",
    "STORE_FILES",
    "MixedResultsError",
    "claim_run_dir",
    "describe_difference",
    "foreign_files",
    "refuse_foreign",
    "replacing",
    "scenario_digest",
]
