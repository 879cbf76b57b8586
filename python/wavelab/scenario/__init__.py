"""Scenarios: TOML files read, validated through the Rust schema, changed by
field path, and the ones shipped with the package.

* :mod:`~wavelab.scenario.loading`: the :class:`Scenario` type, and
  :func:`from_dict`, :func:`from_toml`, :func:`load_scenario`;
* :mod:`~wavelab.scenario.toml_text`: TOML text parsed, too deep or
  non-finite input refused;
* :mod:`~wavelab.scenario.field_paths`: ``links[1].handovers[0].at``
  addresses one field (``--set``, :meth:`Scenario.with_changes`, a sweep's
  axes);
* :mod:`~wavelab.scenario.traces`: the trace files a scenario names;
* :mod:`~wavelab.scenario.builtin`: the shipped scenarios by name.
"""

from wavelab.scenario.builtin import (
    builtin_names,
    builtin_scenario,
    builtin_toml,
    demo_scenario,
    demo_toml,
    load_scenario_or_builtin,
)
from wavelab.scenario.field_paths import PathError, parse_path, set_path
from wavelab.scenario.loading import (
    Scenario,
    from_dict,
    from_toml,
    load_scenario,
    stored_scenario,
)
from wavelab.scenario.toml_text import MAX_DEPTH, parse_toml, toml_depth
from wavelab.scenario.traces import TRACE_FIELDS, trace_paths

__all__ = [
    "MAX_DEPTH",
    "TRACE_FIELDS",
    "PathError",
    "Scenario",
    "builtin_names",
    "builtin_scenario",
    "builtin_toml",
    "demo_scenario",
    "demo_toml",
    "from_dict",
    "from_toml",
    "load_scenario",
    "load_scenario_or_builtin",
    "parse_path",
    "parse_toml",
    "set_path",
    "stored_scenario",
    "toml_depth",
    "trace_paths",
]
