"""Where wavelab writes, and how: safe file names inside an output root, atomic files.

* **Names are labels, not paths.** A scenario's or a flow's name may hold
  any printable characters (the Rust schema refuses control characters and
  names over 128 characters). When a name becomes a file or directory name
  (``results/NAME``, ``flow-NAME.pcap``) it goes through :func:`file_name`:
  letters and digits (any script), ``-``, ``_`` and ``.`` are kept, every
  other character becomes ``-`` (a run of dashes one), leading dots and
  dashes are dropped (no ``..``, no hidden files, nothing that looks like an
  option), and the name is cut to :data:`MAX_FILE_NAME_BYTES` bytes of
  UTF-8. So ``../../x`` becomes ``x``, ``/abs/path`` becomes ``abs-path``
  and ``DCNET L1 → L2`` becomes ``DCNET-L1-L2``.
* **Everything lands inside its output root.** :func:`inside` joins a name
  to a root and refuses one that is not a single plain component. The
  output root itself is the user's choice (``--out``), or ``results/``
  (:func:`wavelab.cli.run_commands.default_run_dir`).
* **Files appear whole or not at all.** :func:`write_atomically` writes a
  temporary file in the same directory, fsyncs it and renames it over the
  target; on any error (a full disk) the temporary file is removed, so the
  previous file, or none, stays, never an empty or truncated one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path

from wavelab.errors import WavelabError

MAX_FILE_NAME_BYTES = 120
"""The longest file name :func:`file_name` makes (file systems allow 255)."""


class OutputPathError(WavelabError):
    """A file would be written outside its output root."""


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file's contents, in hex (read in 1 MiB chunks)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def file_name(label: str, fallback: str = "scenario") -> str:
    """A safe single file or directory name for ``label`` (see the module
    description); ``fallback`` if nothing of it is left."""
    mapped = "".join(c if c.isalnum() or c in "-_." else "-" for c in label)
    mapped = re.sub("-{2,}", "-", mapped).lstrip(".-")
    raw = mapped.encode("utf-8")[:MAX_FILE_NAME_BYTES]
    mapped = raw.decode("utf-8", errors="ignore")
    return mapped or fallback


def inside(root: Path, name: str) -> Path:
    """``root / name``, refusing a ``name`` that is not one plain component
    (empty, ``.``, ``..``, a separator, a NUL, an absolute path), which could
    land outside ``root``."""
    if (
        not name
        or name in (".", "..")
        or "\x00" in name
        or "/" in name
        or (os.altsep is not None and os.altsep in name)
    ):
        raise OutputPathError(f"{name!r} is not a file name inside {root}")
    return root / name


def write_file_synced(path: Path, data: bytes) -> None:
    """Writes and fsyncs one file (not atomic by itself)."""
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def fsync_dir(path: Path) -> None:
    """Fsyncs a directory (makes a rename in it durable)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def temporary_name(path: Path) -> Path:
    """A hidden name beside ``path`` (``.tmp-NAME-PID-RANDOM``) for a file
    written before it is renamed to ``path``; a store removes such leftovers
    when it opens."""
    return path.with_name(f".tmp-{path.name}-{os.getpid()}-{uuid.uuid4().hex[:8]}")


def commit(tmp: Path, path: Path) -> None:
    """Renames the finished file ``tmp`` over ``path`` and fsyncs the
    directory; removes ``tmp`` if that fails."""
    try:
        os.replace(tmp, path)
        fsync_dir(path.parent)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def write_atomically(
    path: Path, data: bytes, write: Callable[[Path, bytes], None] | None = None
) -> Path:
    """Writes ``data`` to ``path`` so that it appears whole or not at all:
    a temporary file, fsynced, renamed over ``path``. Raises ``OSError``
    (after removing the temporary file) if it cannot. ``write`` writes the
    temporary file (default :func:`write_file_synced`)."""
    tmp = temporary_name(path)
    try:
        (write or write_file_synced)(tmp, data)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    commit(tmp, path)
    return path


def write_files_atomically(directory: Path, files: Mapping[str, bytes]) -> list[Path]:
    """Writes a set of files into ``directory`` (names are checked with
    :func:`inside`): every one to a temporary file first; only when all are
    written are they renamed into place. On an error every temporary file is
    removed and ``OSError`` raised: the previous files stay as they were."""
    targets = [inside(directory, name) for name in files]
    written: list[tuple[Path, Path]] = []
    try:
        for path, data in zip(targets, files.values(), strict=True):
            tmp = temporary_name(path)
            written.append((tmp, path))
            write_file_synced(tmp, data)
    except BaseException:
        for tmp, _ in written:
            with contextlib.suppress(OSError):
                tmp.unlink()
        raise
    for i, (tmp, path) in enumerate(written):
        try:
            commit(tmp, path)
        except BaseException:
            for later, _ in written[i + 1 :]:
                with contextlib.suppress(OSError):
                    later.unlink()
            raise
    return targets
