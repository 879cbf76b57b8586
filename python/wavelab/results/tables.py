"""The tables of a run: their names, the per-flow counters, and a table as
the native module returns it (columns of little-endian buffers) turned into
a DataFrame or into columns by name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from wavelab import _native

TABLES = (
    "series",
    "flows",
    "links",
    "queues",
    "packets",
    "handovers",
    "handoffs",
    "notifications",
    "subflows",
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
    "ecn_echoes",
    "ecn_reductions",
    "ce_received",
)
"""The per-flow counters: nullable integers (``UInt64``) in every run; a
counter the driver cannot know (one the kernel does not keep, in an
emulation) is missing (``<NA>``)."""


def _column(kind: str, data: Any, labels: list[str] | None, valid: bytes | None = None) -> Any:
    if kind == "str":
        return pd.array(data, dtype="string")
    if kind == "bool":
        return np.frombuffer(data, dtype=np.uint8).astype(bool)
    if kind == "category":
        codes = np.frombuffer(data, dtype=np.uint8).astype(np.int16)
        return pd.Categorical.from_codes(codes, categories=pd.Index(labels or []))
    values = np.frombuffer(data, dtype=np.dtype(kind)).copy()
    if valid is not None and values.dtype.kind in "iu":
        # a nullable integer column (a null of a float column holds NaN)
        return pd.arrays.IntegerArray(values, np.frombuffer(valid, dtype=np.uint8) == 0)
    return values


NativeTable = list[tuple[str, str, Any, list[str] | None, bytes | None]]
"""A table as the native module returns it: (name, kind, buffer, labels,
validity) per column; the validity (one byte per row, 0 for a null) is
given for a nullable column, None for another."""


def table_to_frame(columns: NativeTable) -> pd.DataFrame:
    """Turns a native table (columns of little-endian buffers) into a DataFrame."""
    return pd.DataFrame(
        {name: _column(kind, data, labels, valid) for name, kind, data, labels, valid in columns}
    )


def with_units(arrow: pa.Table, unit_of: Callable[[str], str | None]) -> pa.Table:
    """``arrow`` with each field's unit, ``unit_of(name)``, as ``unit`` in
    its metadata (a run's tables and a sweep's carry their units so)."""
    fields = []
    for f in arrow.schema:
        u = unit_of(f.name)
        fields.append(f.with_metadata({"unit": u}) if u is not None else f)
    return pa.Table.from_arrays(
        arrow.columns, schema=pa.schema(fields, metadata=arrow.schema.metadata)
    )


def run_unit(table: str) -> Callable[[str], str | None]:
    """The units of a run's table ``table``, by column name, from the schema
    of the native module."""
    return lambda column: _native.column_unit(table, column)


def table_columns(columns: NativeTable) -> dict[str, Any]:
    """A native table's columns without building a DataFrame (pandas takes
    about a millisecond to build a frame of a few rows, longer than a short
    run of a sweep takes to simulate): numbers as numpy arrays, strings as
    the native module's list of ``str``, categories as categoricals."""
    return {
        name: data if kind == "str" else _column(kind, data, labels, valid)
        for name, kind, data, labels, valid in columns
    }


def direction_labels(links: list[str], directions: list[str]) -> tuple[list[str], np.ndarray]:
    """The ``link:direction`` labels of the link directions, sorted (as pandas
    orders the categories it infers from strings), and each direction's code
    among them."""
    names = [f"{a}:{b}" for a, b in zip(links, directions, strict=True)]
    labels = sorted(set(names))
    code = {n: i for i, n in enumerate(labels)}
    return labels, np.array([code[n] for n in names], dtype=np.int64)
