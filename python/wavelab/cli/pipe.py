"""A standard output that a closed pipe cannot break.

``wavelab run X | head -1`` closes the pipe after one line; Python then
raises ``BrokenPipeError`` at the next ``print`` (Python ignores SIGPIPE),
which would abort a run between writing its files and printing its summary,
and end in a traceback and exit status 1. The command line wraps
``sys.stdout`` in :class:`QuietStdout`: once the reader has gone, what would
have been printed is dropped, the command goes on to the end (every file is
written) and exits as it would have, quietly.
"""

from __future__ import annotations

import errno
import os
import sys
from typing import Any, TextIO


def _is_closed_pipe(e: OSError) -> bool:
    return isinstance(e, BrokenPipeError) or e.errno in (errno.EPIPE, errno.EINVAL)


class QuietStdout:
    """Wraps a text stream; a closed pipe turns it into a sink."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.closed_by_reader = False

    def _drop(self) -> None:
        """The reader has gone: later writes go nowhere, and file descriptor 1
        points at /dev/null so that the interpreter's final flush at exit
        cannot fail either."""
        self.closed_by_reader = True
        try:
            fd = self._stream.fileno()
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, fd)
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass

    def write(self, text: str) -> int:
        """Writes ``text``, or drops it once the reader has gone."""
        if self.closed_by_reader:
            return len(text)
        try:
            return self._stream.write(text)
        except OSError as e:
            if not _is_closed_pipe(e):
                raise
            self._drop()
            return len(text)

    def flush(self) -> None:
        """Flushes, or does nothing once the reader has gone."""
        if self.closed_by_reader:
            return
        try:
            self._stream.flush()
        except OSError as e:
            if not _is_closed_pipe(e):
                raise
            self._drop()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def install() -> QuietStdout:
    """Wraps ``sys.stdout`` (once) and returns the wrapper."""
    if isinstance(sys.stdout, QuietStdout):
        return sys.stdout
    quiet = QuietStdout(sys.stdout)
    sys.stdout = quiet
    return quiet


__all__ = ["QuietStdout", "install"]
