"""Field paths: ``links[1].handovers[0].at`` addresses one field of a scenario.

One setter for every place that changes a scenario by path: ``wavelab run
--set``, :meth:`wavelab.Scenario.with_changes` and a sweep's axes. A path
that does not fit the scenario is a :class:`PathError` that names the path
and says what is there (``flows has 1 entry, no [1] (index 0)``); what the
value must be is the schema's to say once the path is set.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

from wavelab.errors import WavelabError

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PIECE = re.compile(r"([^.\[\]]*)((?:\[[^\[\]]*\])*)")


class PathError(WavelabError, LookupError):
    """A field path that is malformed or does not fit the scenario. The
    message starts with the path, e.g. ``flows[1].cc: flows has 1 entry, no
    [1] (index 0)``. It is also a ``LookupError``."""


def _shown(value: Any) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def parse_path(path: str) -> list[str | int]:
    """Splits ``links[1].handovers[0].at`` into ``["links", 1, "handovers", 0,
    "at"]``; :class:`PathError` for anything else (an empty part, an index that
    is not a whole number, a stray bracket)."""
    if not isinstance(path, str):
        raise PathError(f"{path!r}: not a field path; {_EXAMPLE}")
    return list(_parsed(path))


_EXAMPLE = 'write field names and list indices, e.g. "flows[0].cc" or "links[1].rate"'


@functools.lru_cache(maxsize=1024)
def _parsed(path: str) -> tuple[str | int, ...]:
    """:func:`parse_path`, kept: a sweep sets the same few paths in every
    point (MobiWac's 48,000)."""
    example = _EXAMPLE
    if not path.strip():
        raise PathError(f"{path!r}: not a field path; {example}")
    parts: list[str | int] = []
    for piece in path.strip().split("."):
        m = _PIECE.fullmatch(piece)
        if m is None or not _NAME.fullmatch(m.group(1)):
            raise PathError(f"{path}: not a field path ({piece!r} is not a field name); {example}")
        parts.append(m.group(1))
        for index in re.findall(r"\[([^\[\]]*)\]", m.group(2)):
            if not index.strip().isdigit():
                raise PathError(
                    f"{path}: not a field path ([{index}] is not a list index: an index "
                    "is a whole number from 0, e.g. flows[0])"
                )
            parts.append(int(index))
    return tuple(parts)


def _entries(n: int) -> str:
    return f"{n} entry" if n == 1 else f"{n} entries"


def set_path(data: dict[str, Any], path: str, value: Any) -> None:
    """Sets ``path`` in ``data`` (a scenario as TOML gives it), creating
    missing tables but never missing list entries; :class:`PathError` naming
    the path for one that does not fit the data."""
    parts = parse_path(path)
    node: Any = data
    walked = ""
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(part, int):
            if not isinstance(node, list):
                raise PathError(f"{path}: {walked} is {_shown(node)}, not a list")
            if part >= len(node):
                indices = ""
                if len(node) == 1:
                    indices = " (index 0)"
                elif node:
                    indices = f" (indices 0 to {len(node) - 1})"
                raise PathError(f"{path}: {walked} has {_entries(len(node))}, no [{part}]{indices}")
            walked += f"[{part}]"
        else:
            if isinstance(node, list):
                raise PathError(
                    f"{path}: {walked} is a list of {_entries(len(node))}; "
                    f"choose one, e.g. {walked}[0].{part}"
                )
            if not isinstance(node, dict):
                raise PathError(f"{path}: {walked} is {_shown(node)}, not a table")
            walked += ("." if walked else "") + part
        if last:
            node[part] = value
            return
        if isinstance(part, str) and part not in node:
            following = parts[i + 1]
            if isinstance(following, int):
                raise PathError(
                    f"{path}: the scenario has no {walked}, so there is no {walked}[{following}]"
                )
            node[part] = {}
        node = node[part]


__all__ = ["PathError", "parse_path", "set_path"]
