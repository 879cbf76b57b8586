"""What ``wavelab compare`` is given, as entries: each argument is a run
folder (``wavelab run --out``, ``wavelab emulate --out``), or a sweep's or
study's store (or a reproduction's folder holding one), optionally with a
selector ``DIR:key=value[,key=value]`` naming parameters of its runs (the
short names or paths of :func:`wavelab.load_results`). Selected runs that
differ in their congestion control become one entry per algorithm; each
entry holds every run it selects (a sweep's seeds)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wavelab.dataset import load_results
from wavelab.errors import WavelabError
from wavelab.plot.spec import is_algorithm_path
from wavelab.results.frames import Results


@dataclass(frozen=True)
class Entry:
    """One compared item: its label and its runs (one for a run folder,
    the selected runs of a store: one per seed)."""

    label: str
    runs: tuple[Results, ...]
    source: str
    """The argument it came from."""


def _value(text: str) -> Any:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _selector(arg: str, text: str) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for part in text.split(","):
        key, eq, value = part.partition("=")
        if not eq or not key.strip() or not value.strip():
            raise WavelabError(
                f"{arg}: the selector {part!r} is not key=value (e.g. DIR:cc=cubic,seed=1)"
            )
        params[key.strip()] = _value(value.strip())
    return params


def _split(arg: str) -> tuple[Path, dict[str, Any]]:
    """The folder and the selector of an argument; a folder whose own name
    holds a colon is taken whole when it exists."""
    if Path(arg).exists() or ":" not in arg:
        return Path(arg), {}
    folder, _, sel = arg.rpartition(":")
    return Path(folder), _selector(arg, sel)


def _entries(arg: str) -> list[Entry]:
    folder, params = _split(arg)
    if not folder.is_dir():
        raise WavelabError(f"{arg}: no such folder")
    if (folder / "run.json").is_file() and not params:
        try:
            res = Results.read_parquet(folder)
        except WavelabError as e:
            raise WavelabError(f"{arg}: not a complete run folder ({e})") from None
        return [Entry(folder.resolve().name, (res,), arg)]
    try:
        loaded = load_results(folder)
    except WavelabError as e:
        raise WavelabError(
            f"{arg}: not a run folder (no run.json) nor a sweep's or study's store ({e})"
        ) from None
    name = folder.resolve().name
    shown = ",".join(f"{k}={v}" for k, v in params.items())
    base = f"{name}:{shown}" if params else name
    try:
        chosen = loaded.select(**params)
    except WavelabError as e:
        why = str(e).removeprefix(f"{loaded.path}: ")
        raise WavelabError(f"{arg}: {why}") from None
    groups: list[tuple[str, dict[str, Any]]] = [(base, params)]
    # runs of several algorithms: one entry each, in the sweep's order
    algo = next((p for p in loaded.params if is_algorithm_path(p)), None)
    if algo is not None:
        values = list(dict.fromkeys(chosen[algo].astype(str)))
        if len(values) > 1:
            sep = "," if params else ":"
            groups = [(f"{base}{sep}{algo}={v}", {**params, algo: v}) for v in values]
    out = []
    for label, sel in groups:
        try:
            rows = loaded.select(**sel)
            runs = tuple(loaded.results(rows))
        except WavelabError as e:
            why = str(e).removeprefix(f"{loaded.path}: ")
            raise WavelabError(f"{arg}: {why}") from None
        if not runs:
            raise WavelabError(f"{arg}: no stored run with tables matches {label}")
        out.append(Entry(label, runs, arg))
    return out


def resolve(args: Sequence[str | Path], labels: Sequence[str] | None = None) -> list[Entry]:
    """The entries of ``args`` (see the module description), labelled by
    their folders' names or by ``labels`` (one per entry)."""
    if not args:
        raise WavelabError("compare needs at least one run folder")
    return labelled([e for a in args for e in _entries(str(a))], labels)


def labelled(
    entries: Sequence[Entry], labels: Sequence[str] | None = None, option: str = "--label"
) -> list[Entry]:
    """``entries`` with ``labels`` (one per entry, if given; ``option``
    names them in the error), a label given twice numbered from its second."""
    if labels:
        if len(labels) != len(entries):
            raise WavelabError(
                f"{option}: {len(labels)} labels for {len(entries)} compared entries "
                f"({', '.join(e.label for e in entries)})"
            )
        entries = [Entry(lab, e.runs, e.source) for lab, e in zip(labels, entries, strict=True)]
    seen: dict[str, int] = {}
    unique = []
    for e in entries:  # two runs of folders of one name stay apart
        seen[e.label] = seen.get(e.label, 0) + 1
        label = e.label if seen[e.label] == 1 else f"{e.label} ({seen[e.label]})"
        unique.append(Entry(label, e.runs, e.source))
    return unique
