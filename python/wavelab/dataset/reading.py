"""One table of many runs read in one call: the runs' Parquet files as one
``pyarrow.dataset``, the run key (the name of each run's folder) as the
column ``run``, and the schema unified over every file (runs of different
algorithms have different ``cc_*`` columns; a run without one has nulls)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
from pyarrow import fs

from wavelab.errors import WavelabError

RUN = "run"


def _dataset(files: list[Path], base: Path) -> ds.Dataset:
    factory = ds.FileSystemDatasetFactory(
        fs.LocalFileSystem(),
        [str(f) for f in files],
        ds.ParquetFileFormat(),
        ds.FileSystemFactoryOptions(
            partition_base_dir=str(base),
            # the folder's name as it is (a run folder may be named "a%20b")
            partitioning=ds.DirectoryPartitioning(
                pa.schema([(RUN, pa.string())]), segment_encoding="none"
            ),
        ),
    )
    schema = factory.inspect(promote_options="permissive", fragments=None)
    return factory.finish(schema)


def read_runs_table(
    dirs: Mapping[str, Path], table: str, columns: Sequence[str] | None = None
) -> pd.DataFrame | None:
    """Table ``table`` of the runs in ``dirs`` (run key -> its folder, whose
    name is the key), with ``run``; only ``columns`` if given. None when no
    run has the table (an optional one is written only when not empty)."""
    files = [d / f"{table}.parquet" for d in dirs.values()]
    files = [f for f in files if f.is_file()]
    if not files:
        return None
    parts = []
    by_base: dict[Path, list[Path]] = {}
    for f in files:
        by_base.setdefault(f.parent.parent, []).append(f)
    for base, group in by_base.items():
        dataset = _dataset(group, base)
        names = dataset.schema.names
        if columns is not None:
            unknown = [c for c in columns if c not in names]
            if unknown:
                raise WavelabError(
                    f"the {table} table has no column {unknown[0]!r}; it has "
                    + ", ".join(n for n in names if n != RUN)
                )
            wanted = [c for c in columns if c != RUN]
        else:
            wanted = [n for n in names if n != RUN]
        parts.append(dataset.to_table(columns=[RUN, *wanted]))
    arrow = parts[0] if len(parts) == 1 else pa.concat_tables(parts, promote_options="permissive")
    frame: pd.DataFrame = arrow.to_pandas()
    return frame
