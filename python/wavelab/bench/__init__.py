"""Speed and memory benchmarks that print figures (``wavelab bench``).

* :mod:`~wavelab.bench.engine`: the engine cases, each run in a fresh
  process that imports only the native module (``python -m wavelab.bench -``);
* :mod:`~wavelab.bench.python_layer`: the cases of the layer above the
  engine (stepped runs and DataFrames, sweeps, a congestion control in
  Python, the memory of a reproduction);
* :mod:`~wavelab.bench.scaling`: how the engine's wall time grows with
  flows, link rate and simulated time (``wavelab bench --scaling DIR``).

Nothing here imports more than the standard library when the package is
imported, so the engine's child process stays lean.
"""

from wavelab.bench.engine import CASES, Figures, format_table, run_case, run_here, run_in_child
from wavelab.bench.python_layer import (
    PYTHON_CASES,
    custom_cc,
    format_layer_table,
    python_overhead,
    reproduce_memory,
    sweep,
)

__all__ = [
    "CASES",
    "PYTHON_CASES",
    "Figures",
    "custom_cc",
    "format_layer_table",
    "format_table",
    "python_overhead",
    "reproduce_memory",
    "run_case",
    "run_here",
    "run_in_child",
    "sweep",
]
