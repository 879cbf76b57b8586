"""Errors raised by wavelab."""

from __future__ import annotations

from pathlib import Path


class WavelabError(Exception):
    """Base class of wavelab's errors: the message is meant for the user as is."""


class ScenarioFileError(WavelabError):
    """A scenario file cannot be read or is invalid.

    The message starts with the file name, then the field path and the bad value,
    e.g. ``links.toml: links[1].rate: "8 Mbps/s" is not a rate, write e.g. "8Mbit/s"``.
    """


def read_text_file(path: Path, error: type[WavelabError]) -> str:
    """The text of the UTF-8 file ``path``; ``error`` (naming the file) if it
    is missing or cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise error(f"{path}: cannot be read: {e}") from None
