"""TOML text of scenario and sweep files: parsed, and refused before any
parser sees it when it exceeds a bound (its size, a key's length, nesting,
its number of values: :func:`first_bound_exceeded`), before any walk
recurses too deep, or when JSON (which carries a scenario to the Rust
schema) cannot hold a value."""

from __future__ import annotations

import math
import re
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


MAX_TOML_BYTES = 4 * 1024 * 1024
"""The largest scenario or sweep file (4 MiB), checked on the bytes read
before anything parses them: a scenario of 10,000 links written out is
about 1 MB."""

MAX_KEY_CHARS = 1024
"""The longest key (a dotted key or a table header, quotes included): field
names are short; a sweep's key of twenty field paths joined
(``"p1,p2,..."``) is about 800 characters."""

MAX_TOML_VALUES = 200_000
"""The most values (key/value pairs, array items, inline tables) in one
scenario or sweep file: 10,000 links written out have about 80,000."""

_TOKEN = re.compile(
    r"""[ \t\r]+|\n|\#[^\n]*|\"\"\"|'''|"(?:[^"\\\n]|\\.)*"?|'[^'\n]*'?"""
    r"""|[\[\]{}=,]|[^\s"'\#\[\]{}=,]+|[\s\S]"""
)
"""One token of TOML text: blanks, a line break, a comment, the opening of a
multi-line string, a one-line string, punctuation, a bare word (with its
dots: ``a.b`` as a key, ``1.5`` as a value), or any other character."""

_REST_OF = {
    '"': re.compile(r'(?:[^"\\]|\\[\s\S]|"(?!""))*"{3,5}'),
    "'": re.compile(r"[\s\S]*?'''(?:''?)?"),
}
"""The rest of a multi-line string after its opening quotes, to its end."""


def first_bound_exceeded(text: str) -> tuple[int, str] | None:
    """The first bound of a scenario or sweep file that ``text`` exceeds, as
    (line number, what): a key longer than :data:`MAX_KEY_CHARS`, tables
    and arrays nesting :data:`MAX_DEPTH` deep or more (the top level is 0;
    each part of a dotted key or a table header opens a level, as each
    array and inline table does: the levels :func:`first_problem` counts
    once the text is parsed), or more than :data:`MAX_TOML_VALUES` values;
    None if it exceeds none.

    One pass over the tokens, each looked at once, stopping at the first
    bound exceeded, so the time is linear in the text and bounded: a TOML
    parser's time and memory are quadratic in the parts of a dotted key (an
    80 KB key took 6 GB), and it takes seconds per megabyte of short
    values. What is not valid TOML is left to the parser to report."""
    line, pos, n = 1, 0, len(text)
    stack: list[tuple[str, int]] = []  # open arrays and inline tables: (bracket, level)
    table_level = 0  # levels of the table the last header opened
    expect_key = True
    header = 0  # inside a table header: 1 ([a]) or 2 ([[a]])
    parts, chars = 1, 0  # of the key being read
    next_level = 0  # the level of an array or inline table opened now
    values = 0

    def too_deep(what: str = "") -> tuple[int, str]:
        return line, f"tables and arrays nest more than {MAX_DEPTH} deep{what}"

    while pos < n:
        m = _TOKEN.match(text, pos)
        assert m is not None  # the last alternative matches any character
        tok, end = m.group(), m.end()
        c = tok[0]
        if tok in ('"""', "'''"):
            rest = _REST_OF[c].match(text, end)
            if rest is None:
                return None  # not closed: the parser says where
            end = rest.end()
            tok = text[pos:end]
        if c == "\n":
            line += 1
            if not stack:
                expect_key, header, parts, chars = True, 0, 1, 0
        elif c in " \t\r#":
            pass
        elif c == "[" and expect_key and not stack and not header:
            header = 2 if text.startswith("[", end) else 1
            end += header - 1
            parts, chars = 1, 0
        elif c == "]" and header:
            table_level = parts + header - 1
            if table_level >= MAX_DEPTH:
                return too_deep()
            end += 1 if header == 2 and text.startswith("]", end) else 0
            expect_key, header, parts, chars = False, 0, 1, 0
        elif c in "[{":
            if next_level >= MAX_DEPTH:
                return too_deep()
            stack.append((c, next_level))
            values += 1
            next_level += 1
            if c == "{":
                expect_key, parts, chars = True, 1, 0
        elif c in "]}":
            if stack:
                stack.pop()
            if stack and stack[-1][0] == "[":
                next_level = stack[-1][1] + 1
            expect_key = False
        elif c == "=" and expect_key:
            next_level = (stack[-1][1] if stack else table_level) + parts
            if next_level - 1 >= MAX_DEPTH:  # its deepest table
                return too_deep()
            expect_key, parts, chars = False, 1, 0
            values += 1
        elif c == ",":
            values += 1
            if stack and stack[-1][0] == "{":
                expect_key, parts, chars = True, 1, 0
            elif stack:
                next_level = stack[-1][1] + 1
        elif expect_key or header:
            chars += len(tok)
            if c not in "\"'":
                parts += tok.count(".")
            if parts > MAX_DEPTH:
                return too_deep(f" (a key of more than {MAX_DEPTH} parts)")
            if chars > MAX_KEY_CHARS:
                return line, f"a key longer than {MAX_KEY_CHARS} characters"
        if values > MAX_TOML_VALUES:
            return line, f"more than {MAX_TOML_VALUES:,} values (keys and array items)"
        line += tok.count("\n") if c in "\"'" else 0
        pos = end
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


def check_toml_size(size: int, where: str, error: type[WavelabError]) -> None:
    """Raises ``error`` if ``size`` bytes are more than a scenario or sweep
    file may have (:data:`MAX_TOML_BYTES`)."""
    if size > MAX_TOML_BYTES:
        raise error(
            f"{where}not valid here: larger than {MAX_TOML_BYTES // (1024 * 1024)} MiB, "
            "the most a scenario or sweep file may be"
        )


def check_toml_bounds(text: str, where: str, error: type[WavelabError]) -> None:
    """Raises ``error`` naming the line if ``text`` exceeds a bound of
    :func:`first_bound_exceeded`."""
    bad = first_bound_exceeded(text)
    if bad is not None:
        raise error(f"{where}not valid here: line {bad[0]}: {bad[1]}")


def parse_toml(text: Any, where: str, error: type[WavelabError]) -> dict[str, Any]:
    """Parses TOML text (``str``, or UTF-8 ``bytes``) as a scenario or sweep
    file, raising ``error`` (its message starting with ``where``) for text
    that is not TOML, not UTF-8, or exceeds a bound (:data:`MAX_TOML_BYTES`,
    then those of :func:`first_bound_exceeded`), checked before the parser
    sees it."""
    if isinstance(text, bytes | bytearray):
        check_toml_size(len(text), where, error)
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise error(f"{where}not UTF-8 text: {e}") from None
    check_type("the TOML text", text, str, "a str (or UTF-8 bytes)")
    check_toml_size(len(text), where, error)
    check_toml_size(len(text.encode("utf-8", errors="replace")), where, error)
    check_toml_bounds(text, where, error)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise error(f"{where}not valid TOML: {e}") from None
