"""One writer per output folder: the lock every command that writes into or
clears a folder takes (``run``, ``run --force``, ``sweep``, ``reproduce``,
``report``, ``plot``, ``compare``, ``emulate``, ``demo``).

* **The lock.** A folder's lock is an exclusive ``flock`` on ``FOLDER/.lock``,
  taken without waiting: a second writer is refused at once, with the
  process that holds the folder (``pid 4242: wavelab sweep grid.toml --out
  D``, which the holder writes into the file), instead of deleting or
  mixing its files. The kernel releases a ``flock`` when its holder dies,
  however it dies, so a killed writer never leaves a folder locked.
* **Readers** of a folder (``report D``, ``plot D``, ``compare A B``) check
  that no writer holds it (:func:`check_free`) before they read.
* **Within one process** the lock is re-entrant: a command that holds its
  output folder can open the store there, or write a run's tables into it,
  without refusing itself. A forked child does not inherit the holding: it is
  another process.
* **Nothing is left behind.** The holder removes ``.lock`` when it lets go
  (under the lock, and a taker checks that the file it locked is still the
  one at ``.lock``, so two processes can never both hold a folder), and a
  folder the lock created is removed again if it is still empty (a refused
  command leaves no empty folder).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shlex
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from wavelab.errors import WavelabError

LOCK = ".lock"
"""The lock file's name inside a folder."""

MAX_HOLDER_CHARS = 300
"""The longest description of a holder written into (and read from) a lock file."""


class FolderBusyError(WavelabError):
    """Another process is writing into the folder; the message names it."""


class FolderWriteError(WavelabError):
    """The folder cannot be written (read-only, full, not a folder)."""


@dataclass
class _Held:
    fd: int
    pid: int
    count: int
    created: bool


_held: dict[str, _Held] = {}
"""Folders this process holds, by real path (re-entrancy)."""


def this_process() -> str:
    """``pid N: COMMAND`` for this process (its command line as typed, the
    program without its folder), at most :data:`MAX_HOLDER_CHARS` characters."""
    argv = list(sys.argv) or ["python"]
    if os.path.basename(argv[0]) in ("__main__.py", "-c", ""):
        # python -m MODULE, python -c CODE: the interpreter's own command line
        with contextlib.suppress(OSError):
            raw = Path("/proc/self/cmdline").read_bytes().split(b"\0")[:-1]
            argv = [a.decode("utf-8", errors="replace") for a in raw] or argv
    argv[0] = os.path.basename(argv[0]) or "python"
    text = f"pid {os.getpid()}: {shlex.join(argv)}"
    return text if len(text) <= MAX_HOLDER_CHARS else text[: MAX_HOLDER_CHARS - 3] + "..."


def _holder(fd: int) -> str:
    try:
        raw = os.pread(fd, MAX_HOLDER_CHARS, 0)
    except OSError:
        raw = b""
    text = raw.decode("utf-8", errors="replace").strip()
    # a lock file is ours to write, but it may have been tampered with: show
    # it as one printable line
    text = "".join(c if c.isprintable() else "?" for c in text)
    return text or "another process"


def busy_message(folder: Path, holder: str) -> str:
    """The message for ``folder`` being written by ``holder``."""
    return (
        f"{folder}: another wavelab process is writing here ({holder}); "
        "wait for it to end, or choose another folder"
    )


def write_error(folder: Path, e: OSError) -> FolderWriteError:
    """The one-line error for ``folder`` that cannot be written."""
    if e.errno == errno.ENOSPC:
        why = "no space left on device"
    elif e.errno == errno.EROFS:
        why = "read-only file system"
    elif e.errno in (errno.EACCES, errno.EPERM):
        why = "permission denied"
    elif e.errno in (errno.EEXIST, errno.ENOTDIR):
        why = "it is a file, not a folder (or a file is in its path)"
    else:
        why = e.strerror or str(e)
    return FolderWriteError(f"{folder}: cannot be written: {why}")


def _key(folder: Path) -> str:
    return os.path.realpath(folder)


def holds(folder: Path) -> bool:
    """True if this process holds ``folder``'s lock."""
    h = _held.get(_key(folder))
    return h is not None and h.pid == os.getpid()


def check_free(folder: Path) -> None:
    """Raises :class:`FolderBusyError` if another process holds ``folder``
    (creates nothing; a missing folder or lock file is free)."""
    if holds(folder):
        return
    try:
        fd = os.open(folder / LOCK, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            raise FolderBusyError(busy_message(folder, _holder(fd))) from None
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def acquire(folder: Path) -> None:
    """Takes ``folder``'s lock (creating the folder if needed), or raises
    :class:`FolderBusyError` naming the holder, or :class:`FolderWriteError`
    if the folder cannot be written. Release with :func:`release`."""
    key = _key(folder) if folder.exists() else None
    h = _held.get(key) if key else None
    if h is not None and h.pid == os.getpid():
        h.count += 1
        return
    created = not folder.exists()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise write_error(folder, e) from None
    if not folder.is_dir():
        raise write_error(folder, OSError(errno.ENOTDIR, "not a directory"))
    path = folder / LOCK
    for _ in range(100):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as e:
            _remove_if_empty(folder, created)
            raise write_error(folder, e) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            holder = _holder(fd)
            os.close(fd)
            if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise write_error(folder, e) from None
            raise FolderBusyError(busy_message(folder, holder)) from None
        try:
            same = os.fstat(fd).st_ino == os.stat(path).st_ino
        except OSError:
            same = False
        if same:
            break
        # the holder before us removed the file as it let go: lock the new one
        os.close(fd)
    else:  # pragma: no cover (100 holders in a row letting go under us)
        raise FolderBusyError(busy_message(folder, "processes taking turns"))
    with contextlib.suppress(OSError):  # a full disk: the lock holds all the same
        os.ftruncate(fd, 0)
        os.pwrite(fd, (this_process() + "\n").encode(), 0)
    _held[_key(folder)] = _Held(fd, os.getpid(), 1, created)


def release(folder: Path) -> None:
    """Lets go of ``folder``'s lock once as often as it was taken."""
    key = _key(folder)
    h = _held.get(key)
    if h is None or h.pid != os.getpid():
        return
    h.count -= 1
    if h.count > 0:
        return
    del _held[key]
    with contextlib.suppress(OSError):
        os.unlink(folder / LOCK)
    os.close(h.fd)
    _remove_if_empty(folder, h.created)


def _remove_if_empty(folder: Path, created: bool) -> None:
    if created:
        with contextlib.suppress(OSError):
            folder.rmdir()  # only if nothing was written into it


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """``with folder_lock(D):`` holds ``D``'s lock inside (see :func:`acquire`)."""
    acquire(folder)
    try:
        yield
    finally:
        release(folder)


__all__ = [
    "LOCK",
    "FolderBusyError",
    "FolderWriteError",
    "acquire",
    "check_free",
    "folder_lock",
    "holds",
    "release",
]
