"""The runs of a results folder as one dataset: :func:`load_results`.

* :mod:`~wavelab.dataset.sources`: what a folder holds (a run, a sweep's
  store, a study's store, a reproduction's folder), its runs and parameters;
* :mod:`~wavelab.dataset.columns`: the runs table, parameters typed, in the
  sweep's order, under their short names;
* :mod:`~wavelab.dataset.reading`: one table of many runs in one
  ``pyarrow.dataset`` call, the run key as a column;
* :mod:`~wavelab.dataset.loaded`: :class:`LoadedResults`.
"""

from wavelab.dataset.loaded import LoadedResults, load_results

__all__ = ["LoadedResults", "load_results"]
