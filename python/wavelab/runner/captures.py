"""Packet captures of a run (pcap files): the targets checked, attached to a
simulation or an emulation, and the file name of each."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from wavelab._util.files import file_name
from wavelab.errors import WavelabError, check_path, check_type


def capture_file_name(target: str) -> str:
    """The pcap file name of a capture target: ``flow:first`` -> ``flow-first.pcap``
    (a safe file name whatever the target says, see :func:`wavelab._util.files.file_name`)."""
    return f"{file_name(target, fallback='capture')}.pcap"


class Capturing(Protocol):
    """A simulation or an emulation, which takes captures."""

    def add_capture(self, target: str, path: str) -> None: ...


def check_captures(where: str, captures: Mapping[str, str | Path] | None) -> None:
    """Checks the types of a ``captures`` argument (``{target: path}``)."""
    if captures is not None:
        check_type(where, captures, Mapping, 'a dict such as {"flow:first": "f.pcap"}')
        for target, path in captures.items():
            check_type(where, target, str, "capture targets (str) as keys")
            check_path(where, path)


def add_captures(run: Capturing, name: str, captures: Mapping[str, str | Path] | None) -> None:
    """Attaches the captures to a simulation or an emulation of scenario
    ``name``; a target that names nothing, or a file that cannot be created,
    is a :class:`WavelabError`."""
    for target, path in (captures or {}).items():
        try:
            run.add_capture(target, str(path))
        except ValueError as e:
            raise WavelabError(f"{name}: {e}") from None
        except OSError as e:
            raise WavelabError(f"{path}: cannot be created: {e.strerror or e}") from None
