"""wavelab: transport protocols on hybrid networks.

A sans-IO TCP core in Rust with pluggable congestion control, a deterministic
packet-level simulator that drives it, and this Python layer: scenario files,
runs, results as pandas DataFrames, plots and a CLI.

>>> import wavelab
>>> sc = wavelab.load_scenario("scenarios/newreno.toml")    # doctest: +SKIP
>>> res = wavelab.run(sc)                                     # doctest: +SKIP
>>> res.summary()                                             # doctest: +SKIP

Submodules load on first use, so ``import wavelab._native`` (the benchmark's
child processes) does not pull in pandas.

The package is laid out by stage, data flowing one way:

* ``scenario/``: TOML in, validated by the Rust schema, changed by field path;
* ``runner/``: one scenario run in the simulator, stepped, with captures;
* ``results/``: the run's tables as DataFrames and files, its summary;
* ``analysis/``: figures from the tables (recovery time, rates, RTT CDF,
  capacity, the per-run metrics, confidence intervals over seeds);
* ``sweep/``: many runs on a backend into a resumable store;
* ``dataset/``: a run's, a sweep's or a study's results as one dataset
  (:func:`load_results`);
* ``comparison/``: several runs side by side (:func:`compare`);
* ``plot/``, ``report/``: figures and the HTML report;
* ``emulator/``: the same scenarios on real packets, compared with the
  simulation; the BPF TCP Wave's loader;
* ``experiments/``: the reproductions of published studies;
* ``cli/``, ``bench/``: the command line and the benchmarks;
* ``errors``, ``custom_cc``: the errors every stage raises, congestion
  controls written in Python; ``_util/``: private helpers.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from wavelab._native import __version__, algorithms

if TYPE_CHECKING:
    from wavelab.comparison import Comparison, compare
    from wavelab.custom_cc import congestion_control, register_cc
    from wavelab.dataset import LoadedResults, load_results
    from wavelab.errors import ArgumentError, ScenarioFileError, WavelabError
    from wavelab.results import Results
    from wavelab.runner import run
    from wavelab.scenario import PathError, Scenario, demo_scenario, from_dict, from_toml
    from wavelab.scenario.builtin import load_scenario_or_builtin as load_scenario
    from wavelab.sweep import load_sweep
    from wavelab.sweep.backends import LocalPool
    from wavelab.sweep.runner import run_sweep

_LAZY = {  # name -> module, or module:attribute
    "ArgumentError": "wavelab.errors",
    "Comparison": "wavelab.comparison",
    "compare": "wavelab.comparison",
    "congestion_control": "wavelab.custom_cc",
    "register_cc": "wavelab.custom_cc",
    "PathError": "wavelab.scenario",
    "ScenarioFileError": "wavelab.errors",
    "WavelabError": "wavelab.errors",
    "Results": "wavelab.results",
    "run": "wavelab.runner",
    "Scenario": "wavelab.scenario",
    "demo_scenario": "wavelab.scenario",
    "from_dict": "wavelab.scenario",
    "from_toml": "wavelab.scenario",
    "load_scenario": "wavelab.scenario.builtin:load_scenario_or_builtin",
    "load_sweep": "wavelab.sweep",
    "LoadedResults": "wavelab.dataset",
    "load_results": "wavelab.dataset",
    "LocalPool": "wavelab.sweep.backends",
    "run_sweep": "wavelab.sweep.runner",
}


def __getattr__(name: str) -> Any:
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module 'wavelab' has no attribute {name!r}")
    module, _, attr = where.partition(":")
    return getattr(importlib.import_module(module), attr or name)


def __dir__() -> list[str]:
    """The module's names with the lazily loaded API (``dir(wavelab)``,
    a notebook's completion), without importing it."""
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "ArgumentError",
    "Comparison",
    "LoadedResults",
    "LocalPool",
    "PathError",
    "Results",
    "Scenario",
    "ScenarioFileError",
    "WavelabError",
    "__version__",
    "algorithms",
    "compare",
    "congestion_control",
    "demo_scenario",
    "from_dict",
    "from_toml",
    "load_results",
    "load_scenario",
    "load_sweep",
    "register_cc",
    "run",
    "run_sweep",
]
