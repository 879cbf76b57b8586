"""Errors raised by wavelab."""

from __future__ import annotations


class WavelabError(Exception):
    """Base class of wavelab's errors: the message is meant for the user as is."""


class ScenarioFileError(WavelabError):
    """A scenario file cannot be read or is invalid.

    The message starts with the file name, then the field path and the bad value,
    e.g. ``links.toml: links[1].rate: "8 Mbps/s" is not a rate, write e.g. "8Mbit/s"``.
    """
