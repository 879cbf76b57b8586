"""The tables of a run: their names, the per-flow counters, and a table as
the native module returns it (columns of little-endian buffers) turned into
a DataFrame or into columns by name."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

TABLES = (
    "series",
    "flows",
    "links",
    "queues",
    "packets",
    "handovers",
    "handoffs",
    "notifications",
    "rtt_distribution",
    "releases",
    "bursts",
)
"""The tables of a run; ``releases`` and ``bursts`` only an emulation has."""

EMULATION_TABLES = ("releases", "bursts")
"""The tables only an emulation has."""

OPTIONAL_TABLES = tuple(t for t in TABLES if t not in ("series", "flows", "links", "queues"))
"""Tables written to files only when they have rows."""

COUNTERS = (
    "bytes_sent",
    "bytes_retransmitted",
    "bytes_acked",
    "bytes_delivered",
    "segments_sent",
    "retransmissions",
    "fast_retransmits",
    "rto_expiries",
    "loss_probes",
    "tlp_recoveries",
    "spurious_retransmissions",
    "dsacks_received",
    "dupacks_received",
    "acks_received",
    "acks_sent",
    "duplicate_segments",
    "out_of_order_segments",
)
"""The per-flow counters; an emulation reports those the kernel does not
keep as missing (``<NA>``)."""


def _column(kind: str, data: Any, labels: list[str] | None) -> Any:
    if kind == "str":
        return pd.array(data, dtype="string")
    if kind == "bool":
        return np.frombuffer(data, dtype=np.uint8).astype(bool)
    if kind == "category":
        codes = np.frombuffer(data, dtype=np.uint8).astype(np.int16)
        return pd.Categorical.from_codes(codes, categories=pd.Index(labels or []))
    return np.frombuffer(data, dtype=np.dtype(kind)).copy()


NativeTable = list[tuple[str, str, Any, list[str] | None]]
"""A table as the native module returns it: (name, kind, buffer, labels) per column."""


def table_to_frame(columns: NativeTable) -> pd.DataFrame:
    """Turns a native table (columns of little-endian buffers) into a DataFrame."""
    return pd.DataFrame({name: _column(kind, data, labels) for name, kind, data, labels in columns})


def table_columns(columns: NativeTable) -> dict[str, Any]:
    """A native table's columns without building a DataFrame (pandas takes
    about a millisecond to build a frame of a few rows, longer than a short
    run of a sweep takes to simulate): numbers as numpy arrays, strings as
    the native module's list of ``str``, categories as categoricals."""
    return {
        name: data if kind == "str" else _column(kind, data, labels)
        for name, kind, data, labels in columns
    }


def direction_labels(links: list[str], directions: list[str]) -> tuple[list[str], np.ndarray]:
    """The ``link:direction`` labels of the link directions, sorted (as pandas
    orders the categories it infers from strings), and each direction's code
    among them."""
    names = [f"{a}:{b}" for a, b in zip(links, directions, strict=True)]
    labels = sorted(set(names))
    code = {n: i for i, n in enumerate(labels)}
    return labels, np.array([code[n] for n in names], dtype=np.int64)
