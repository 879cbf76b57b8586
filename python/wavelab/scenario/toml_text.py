"""TOML text of scenario and sweep files: parsed, and refused before any
parser or walk recurses too deep, or when JSON (which carries a scenario to
the Rust schema) cannot hold a value."""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from typing import Any

from wavelab.errors import WavelabError, check_type

MAX_DEPTH = 32
"""How deep tables and arrays may nest in a scenario or sweep file (the
schema needs 6 levels). Deeper input is refused before any parser or walk
recurses into it, with an error instead of Python's recursion limit."""


def first_problem(value: Any) -> tuple[str, str] | None:
    """The first problem of a scenario's data that JSON or the schema cannot
    report well, as (field path, message): nesting deeper than
    :data:`MAX_DEPTH`, or a NaN or infinity (TOML allows ``nan`` and ``inf``;
    JSON, which carries the scenario to the Rust schema, does not, and its
    parser would only say "expected value"). Iterative, so any depth is safe."""
    stack: list[tuple[str, Any, int]] = [("", value, 0)]
    while stack:
        path, v, depth = stack.pop()
        if isinstance(v, float) and not math.isfinite(v):
            return path, "not a finite number"
        if isinstance(v, Mapping):
            items: list[tuple[str, Any]] = [
                (f"{path}.{k}" if path else str(k), x) for k, x in v.items()
            ]
        elif isinstance(v, list | tuple):
            items = [(f"{path}[{i}]", x) for i, x in enumerate(v)]
        else:
            continue
        if depth >= MAX_DEPTH:
            shown = path if len(path) <= 60 else path[:57] + "..."
            return shown, f"tables and arrays nest more than {MAX_DEPTH} deep"
        stack.extend((p, x, depth + 1) for p, x in reversed(items))
    return None


def toml_depth(text: str) -> int:
    """The deepest nesting of ``[`` and ``{`` outside strings and comments in
    TOML text (a table header counts its brackets too)."""
    depth = deepest = 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            triple = text.startswith(c * 3, i)
            quote = c * 3 if triple else c
            j = i + len(quote)
            while j < n:
                if c == '"' and text[j] == "\\":
                    j += 2
                    continue
                if text.startswith(quote, j):
                    break
                if not triple and text[j] == "\n":
                    break
                j += 1
            i = j + len(quote)
            continue
        elif c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth = max(depth - 1, 0)
        i += 1
    return deepest


def parse_toml(text: Any, where: str, error: type[WavelabError]) -> dict[str, Any]:
    """Parses TOML text (``str``, or UTF-8 ``bytes``) as a scenario or sweep
    file, raising ``error`` (its message starting with ``where``) for text
    that is not TOML, not UTF-8, or nests deeper than :data:`MAX_DEPTH`."""
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise error(f"{where}not UTF-8 text: {e}") from None
    check_type("the TOML text", text, str, "a str (or UTF-8 bytes)")
    if toml_depth(text) > MAX_DEPTH:
        raise error(f"{where}not valid here: tables and arrays nest more than {MAX_DEPTH} deep")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise error(f"{where}not valid TOML: {e}") from None
