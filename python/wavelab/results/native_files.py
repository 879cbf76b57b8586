"""A run's Parquet files written straight from the native module's columns.

:meth:`wavelab.results.Results.to_files` builds the DataFrames and lets
pandas convert them to Arrow; for the many short runs of a sweep that costs
more than simulating. Here each table becomes an Arrow table directly from
the little-endian buffers, with the schema (types and pandas metadata) that
pandas would have written for the same DataFrame, so the files are
byte-identical to the pandas path's (``tests/test_native_files.py``) and read
back as the same DataFrames. The schema of each table shape is derived once,
from an empty DataFrame of that shape, and cached.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from wavelab.results.summary import meta_files
from wavelab.results.tables import (
    OPTIONAL_TABLES,
    TABLES,
    NativeTable,
    direction_labels,
    run_unit,
    table_columns,
    table_to_frame,
    with_units,
)
from wavelab.scenario.loading import Scenario

_SHAPE = tuple[tuple[str, str, tuple[str, ...] | None, bool], ...]


def _empty(kind: str) -> Any:
    return [] if kind == "str" else b""


@lru_cache(maxsize=256)
def _schema(table: str, shape: _SHAPE) -> pa.Schema:
    """The schema pandas writes for a frame of this shape (names, kinds,
    category labels and which columns are nullable), with the units."""
    cols: NativeTable = [
        (
            name,
            kind,
            _empty(kind),
            list(labels) if labels is not None else None,
            b"" if null else None,
        )
        for name, kind, labels, null in shape
    ]
    frame = table_to_frame(cols)
    return with_units(pa.Table.from_pandas(frame, preserve_index=False), run_unit(table)).schema


def _shape(cols: NativeTable) -> _SHAPE:
    return tuple(
        (name, kind, tuple(labels) if labels is not None else None, valid is not None)
        for name, kind, _, labels, valid in cols
    )


def _array(
    kind: str, data: Any, labels: list[str] | None, valid: bytes | None, t: pa.DataType
) -> pa.Array:
    if kind == "str":
        return pa.array(data, type=t)
    if kind == "bool":
        return pa.array(np.frombuffer(data, dtype=np.uint8).astype(bool), type=t)
    if kind == "category":
        assert isinstance(t, pa.DictionaryType)
        raw = data if isinstance(data, np.ndarray) else np.frombuffer(data, dtype=np.uint8)
        codes = raw.astype(t.index_type.to_pandas_dtype())
        return pa.DictionaryArray.from_arrays(
            pa.array(codes, type=t.index_type), pa.array(labels or [], type=t.value_type)
        )
    values = np.frombuffer(data, dtype=np.dtype(kind))
    if valid is not None and values.dtype.kind in "iu":
        return pa.array(values, type=t, mask=np.frombuffer(valid, dtype=np.uint8) == 0)
    # as pandas converts: a float NaN (a float null holds NaN) becomes a null
    return pa.array(values, type=t, from_pandas=True)


def arrow_table(table: str, cols: NativeTable) -> pa.Table:
    """One native table, the run's table ``table``, as an Arrow table with
    pandas' schema for it and the units."""
    schema = _schema(table, _shape(cols))
    arrays = [
        _array(kind, data, labels, valid, field.type)
        for (_, kind, data, labels, valid), field in zip(cols, schema, strict=True)
    ]
    return pa.Table.from_arrays(arrays, schema=schema)


def queues_with_link(tables: dict[str, NativeTable]) -> NativeTable:
    """The ``queues`` table with the ``link`` column :meth:`Results.from_native`
    inserts (``link:direction`` of each row's direction, as a category)."""
    queues = tables["queues"]
    links = {name: data for name, _, data, _, _ in tables["links"]}
    labels, dir_code = direction_labels(links["link"], links["direction"])
    cols = {name: (kind, data) for name, kind, data, _, _ in queues}
    dirs = np.frombuffer(cols["dir"][1], dtype=np.dtype(cols["dir"][0]))
    # the codes as an array (there may be more than 256 link directions)
    link = ("link", "category", dir_code[dirs], labels, None)
    out = list(queues)
    out.insert(2, link)
    return out


def _parquet(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    # pandas' DataFrame.to_parquet defaults: snappy compression
    pq.write_table(table, buf, compression="snappy")
    return buf.getvalue()


def parquet_files(tables: dict[str, NativeTable]) -> dict[str, bytes]:
    """The Parquet files of :meth:`Results.to_files` (those of
    ``OPTIONAL_TABLES`` only when not empty), from the native tables."""
    files: dict[str, bytes] = {}
    for name in TABLES:
        cols = (
            queues_with_link(tables)
            if name == "queues" and _rows(tables["queues"])
            else tables.get(name, [])
        )
        if name in OPTIONAL_TABLES and _rows(cols) == 0:
            continue
        files[f"{name}.parquet"] = _parquet(arrow_table(name, cols))
    return files


def _rows(cols: NativeTable) -> int:
    if not cols:
        return 0
    _, kind, data, _, _ = cols[0]
    if kind in ("str", "category", "bool"):
        return len(data)  # a list, or one byte (or array item) per row
    return len(data) // np.dtype(kind).itemsize


def run_files(
    scenario: Scenario,
    tables: dict[str, NativeTable],
    run: dict[str, Any],
    complete: bool,
    metrics: Mapping[str, Any] | None = None,
) -> tuple[dict[str, bytes], pd.DataFrame]:
    """Every file :meth:`Results.to_files` writes for this run, straight from
    its native tables, and the ``flows`` DataFrame (the only one built);
    ``metrics``, the run's :func:`wavelab.analysis.metrics.flow_metrics` if the caller
    has them (a sweep's worker), saves computing them again for the summary."""
    flows = table_to_frame(tables["flows"])
    out = parquet_files(tables)

    def columns(name: str) -> dict[str, Any] | None:
        return table_columns(tables[name]) if name in tables else None

    meta = meta_files(
        scenario,
        flows,
        run,
        complete,
        columns("links"),
        columns("handovers"),
        columns("handoffs"),
        metrics,
        columns("subflows"),
    )
    return {**out, **meta}, flows
