"""Short names of a sweep's parameters: the ``[sweep.names]`` table, and
the column each parameter gets when a sweep's results are loaded
(:func:`wavelab.load_results`).

::

    [sweep]
    "flows[0].cc" = ["newreno", "cubic"]
    seeds = 2

    [sweep.names]
    cc = "flows[0].cc"

A name is a Python identifier (so ``results.run(cc="cubic")`` and
``itertuples`` take it) for one of the paths the sweep varies. A parameter
the table does not name is called by the last field of its path
(``links[1].handovers[0].at`` -> ``at``) when no other parameter ends so and
the word is not one of the runs table's own columns, else by its path.
"""

from __future__ import annotations

import json
import keyword
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from wavelab.errors import WavelabError

NAMES = "names"
"""The key of the ``[sweep]`` table that holds the short names."""

FIXED_COLUMNS = frozenset(
    {"point", "run", "status", "error", "baseline_run", "flows", "name", "events"}
)
"""Columns of a loaded runs table that a parameter's name may not take."""

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_LAST_FIELD = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[\d+\])*$")


def parse_names(where: str, spec: Any, paths: Sequence[str]) -> dict[str, str]:
    """The ``[sweep.names]`` table ``spec`` checked against the varied
    ``paths``: short name -> path. Raises :class:`WavelabError` naming the
    entry and its value (``where`` starts the message)."""
    if not isinstance(spec, dict):
        raise WavelabError(
            f"{where}: must be a table of short names, e.g. "
            f'[sweep.names] cc = "flows[0].cc", not {json.dumps(spec, default=str)}'
        )
    out: dict[str, str] = {}
    named: dict[str, str] = {}
    for name, path in spec.items():
        at = f"{where}.{name}" if _IDENTIFIER.match(name) else f'{where}."{name}"'
        if not _IDENTIFIER.match(name) or keyword.iskeyword(name):
            raise WavelabError(
                f"{at}: {name!r} is not usable as a name; use letters, digits and _ "
                "(not first a digit, not a Python keyword), e.g. cc"
            )
        if name in FIXED_COLUMNS:
            raise WavelabError(
                f"{at}: {name!r} is a column of the runs table already; choose another name"
            )
        if not isinstance(path, str):
            raise WavelabError(
                f"{at} = {json.dumps(path, default=str)}: the value must be the path of a "
                'parameter of the sweep as a string, e.g. "flows[0].cc"'
            )
        if path not in paths:
            raise WavelabError(
                f'{at} = "{path}": not a parameter of this sweep; it varies ' + ", ".join(paths)
            )
        if path in named:
            raise WavelabError(f'{at}: "{path}" is named {named[path]!r} already')
        if name in paths and name != path:
            raise WavelabError(f"{at}: {name!r} is another parameter of this sweep")
        out[name] = path
        named[path] = name
    return out


def column_names(
    paths: Sequence[str], names: Mapping[str, str], taken: Collection[str] = ()
) -> dict[str, str]:
    """Path -> column name of each parameter (see the module description);
    a last field among ``taken`` (the runs table's other columns) is not used."""
    given = {path: name for name, path in names.items()}
    ends: dict[str, list[str]] = {}
    for p in paths:
        m = _LAST_FIELD.search(p)
        if m is not None:
            ends.setdefault(m.group(1), []).append(p)
    taken = set(given.values()) | FIXED_COLUMNS | set(taken)
    out: dict[str, str] = {}
    for p in paths:
        if p in given:
            out[p] = given[p]
            continue
        m = _LAST_FIELD.search(p)
        short = m.group(1) if m is not None else p
        unique = len(ends.get(short, [])) == 1 and short not in taken
        out[p] = short if unique and (short == p or short not in paths) else p
    return out
