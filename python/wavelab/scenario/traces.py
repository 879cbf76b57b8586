"""The trace files a scenario names (a link direction's ``trace``,
``rate_trace``, ``delay_trace``, ``loss_trace`` and CellReplay's
``cellreplay_train`` and ``cellreplay_size_delay``; a workload's arrivals
and size-CDF files), and their relative
paths resolved against the scenario's folder."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wavelab.scenario.field_paths import set_path

TRACE_FIELDS = (
    "trace",
    "rate_trace",
    "delay_trace",
    "loss_trace",
    "cellreplay_train",
    "cellreplay_size_delay",
)
"""A link direction's fields that name trace files."""

WORKLOAD_FILE_TABLES = ("arrivals", "sizes")
"""A workload's tables whose ``file`` names a data file (arrival times, a
size CDF), resolved as the traces are."""


def trace_paths(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The trace files a scenario names, as (field path, file), in order."""
    found: list[tuple[str, str]] = []
    workloads = data.get("workloads")
    for i, w in enumerate(workloads if isinstance(workloads, list) else []):
        for table in WORKLOAD_FILE_TABLES:
            t = w.get(table) if isinstance(w, Mapping) else None
            if isinstance(t, Mapping) and isinstance(t.get("file"), str):
                found.append((f"workloads[{i}].{table}.file", t["file"]))
    links = data.get("links")
    if not isinstance(links, list):
        return found
    for i, link in enumerate(links):
        for side in ("forward", "reverse"):
            d = link.get(side) if isinstance(link, Mapping) else None
            if not isinstance(d, Mapping):
                continue
            for f in TRACE_FIELDS:
                v = d.get(f)
                if isinstance(v, str):
                    found.append((f"links[{i}].{side}.{f}", v))
    return found


def resolve_traces(data: dict[str, Any], folder: Path) -> dict[str, str]:
    """Makes the relative trace paths of ``data`` (a copy) relative to
    ``folder``, made absolute; returns what each resolved path was written as."""
    written: dict[str, str] = {}
    for path, v in trace_paths(data):
        if v and not Path(v).is_absolute():
            resolved = str((folder / v).absolute())
            set_path(data, path, resolved)
            written[resolved] = v
    return written
