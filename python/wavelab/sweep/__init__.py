"""Sweeps: many runs of one scenario with parameters varied, run on all
local cores or a Dask cluster into a resumable results store.

* :mod:`~wavelab.sweep.grid`: sweep files, the grid of points;
* :mod:`~wavelab.sweep.plan`: the distinct runs the points need;
* :mod:`~wavelab.sweep.worker`: one run executed where a backend puts it;
* :mod:`~wavelab.sweep.backends`: a local process pool or a Dask cluster;
* :mod:`~wavelab.sweep.store`: the results store (atomic, verified, resumable);
* :mod:`~wavelab.sweep.ownership`: a sweep claims its output directory;
* :mod:`~wavelab.sweep.runs_table`: the runs table and its units;
* :mod:`~wavelab.sweep.progress`: runs done, rate and ETA;
* :mod:`~wavelab.sweep.runner`: :func:`~wavelab.sweep.runner.run_sweep`,
  all of the above in order.
"""

from wavelab.scenario.field_paths import parse_path, set_path
from wavelab.sweep.grid import (
    MAX_POINTS,
    Axis,
    Point,
    Sweep,
    SweepError,
    builtin_sweep_names,
    expand_range,
    from_sweep_dict,
    load_sweep,
)

__all__ = [
    "MAX_POINTS",
    "Axis",
    "Point",
    "Sweep",
    "SweepError",
    "builtin_sweep_names",
    "expand_range",
    "from_sweep_dict",
    "load_sweep",
    "parse_path",
    "set_path",
]
