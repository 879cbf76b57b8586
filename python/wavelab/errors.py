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


def read_text_file(path: Path, error: type[WavelabError]) -> str:
    """The text of the UTF-8 file ``path``; ``error`` (naming the file) if it
    is missing or cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise error(f"{path}: cannot be read: {e}") from None
