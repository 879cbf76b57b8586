"""Errors raised by wavelab."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


class WavelabError(Exception):
    """Base class of wavelab's errors: the message is meant for the user as is."""


class ScenarioFileError(WavelabError):
    """A scenario file cannot be read or is invalid.

    The message starts with the file name, then the field path and the bad value,
    e.g. ``links.toml: links[1].rate: "8 Mbps/s" is not a rate, write e.g. "8Mbit/s"``.
    """


class ArgumentError(WavelabError, TypeError):
    """A public function was given an argument of the wrong type. It is also a
    ``TypeError``; the message names the argument, what it takes and what it
    got, e.g. ``run(scenario): takes a Scenario (from wavelab.load_scenario),
    not str 'file.toml'``."""


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_type(where: str, value: Any, types: type | tuple[type, ...], takes: str) -> None:
    """Raises :class:`ArgumentError` unless ``value`` is an instance of
    ``types``; ``where`` names the argument (``"run(scenario)"``), ``takes``
    says what it takes."""
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in _tuple(types)):
        raise ArgumentError(f"{where}: takes {takes}, not {type(value).__name__} {_shown(value)}")


def _tuple(types: type | tuple[type, ...]) -> tuple[type, ...]:
    return types if isinstance(types, tuple) else (types,)


def check_path(where: str, value: Any) -> Path:
    """``value`` as a ``Path`` if it is a ``str`` or ``os.PathLike``;
    :class:`ArgumentError` otherwise."""
    check_type(where, value, (str, os.PathLike), "a file path (str or pathlib.Path)")
    return Path(value)


def read_text_file(
    path: Path, error: type[WavelabError], limit: int | None = None, what: str = "file"
) -> str:
    """The text of the UTF-8 file ``path``; ``error`` (naming the file) if it
    is missing, cannot be read, or holds more than ``limit`` bytes (counted
    on the bytes read, not taken from the file system: a pipe or a file in
    ``/proc`` says it has none), in which case no more than ``limit`` + 1
    bytes are read."""
    try:
        with open(path, "rb") as f:
            data = f.read() if limit is None else f.read(limit + 1)
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except (OSError, ValueError) as e:
        raise error(
            f"{path}: cannot be read: {e.strerror if isinstance(e, OSError) else e}"
        ) from None
    if limit is not None and len(data) > limit:
        raise error(
            f"{path}: larger than {_size(limit)}, the most a {what} may be; "
            "nothing of it was parsed"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise error(
            f"{path}: cannot be read: not UTF-8 text ({e.reason} at byte {e.start})"
        ) from None


def _size(n: int) -> str:
    return f"{n // (1024 * 1024)} MiB" if n % (1024 * 1024) == 0 else f"{n:,} bytes"
