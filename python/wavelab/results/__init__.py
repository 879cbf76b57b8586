"""Results of runs: the tables, as DataFrames and as Parquet files, the
run's summary, and whose results a directory holds.

* :mod:`~wavelab.results.tables`: the tables of a run, the per-flow counters,
  native tables as DataFrames or columns;
* :mod:`~wavelab.results.frames`: :class:`Results`, what a run produced,
  with Parquet and CSV export;
* :mod:`~wavelab.results.summary`: ``summary.csv`` and ``run.json``;
* :mod:`~wavelab.results.native_files`: a run's files straight from the
  native columns (a sweep's worker), byte-identical to :class:`Results`';
* :mod:`~wavelab.results.ownership`: a run claims its output directory, so
  results are never silently mixed.
"""

from wavelab.results.frames import Results
from wavelab.results.summary import RUN_COLUMNS, meta_files, run_json, summary_frame
from wavelab.results.tables import (
    COUNTERS,
    EMULATION_TABLES,
    OPTIONAL_TABLES,
    TABLES,
    NativeTable,
    direction_labels,
    table_columns,
    table_to_frame,
)

__all__ = [
    "COUNTERS",
    "EMULATION_TABLES",
    "OPTIONAL_TABLES",
    "RUN_COLUMNS",
    "TABLES",
    "NativeTable",
    "Results",
    "direction_labels",
    "meta_files",
    "run_json",
    "summary_frame",
    "table_columns",
    "table_to_frame",
]
