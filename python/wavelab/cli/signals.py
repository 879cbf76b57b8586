"""SIGTERM and SIGHUP end a command the way Ctrl-C does.

``kill PID`` (SIGTERM, what ``timeout``, systemd and batch schedulers send)
or a closed terminal (SIGHUP) used to end ``wavelab run`` at once, with
nothing written, where Ctrl-C keeps what was simulated. While a command
runs, both raise ``KeyboardInterrupt`` as Ctrl-C does, so a run writes its
partial results, a sweep keeps its finished runs and writes its table, and
a run with a Python congestion control stops where it was. The command then
exits with 128 + the signal's number, as a shell reports a process ended by
that signal: 130 for Ctrl-C (SIGINT), 143 for SIGTERM, 129 for SIGHUP.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

TERMINATING = (signal.SIGTERM, signal.SIGHUP)
"""The signals that stop a command as Ctrl-C does."""

INTERRUPTED = 130
"""What a command returns when an interruption stopped it (Ctrl-C's code;
the command line turns it into the code of the signal received)."""

_received: list[int] = []


def _interrupt(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)
    raise KeyboardInterrupt


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """While inside, SIGTERM and SIGHUP raise ``KeyboardInterrupt`` (main
    thread only; elsewhere nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _received.clear()
    old = {s: signal.signal(s, _interrupt) for s in TERMINATING}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def interrupted_code() -> int:
    """The exit code of a command an interruption stopped: 128 + the signal
    (the first SIGTERM or SIGHUP received, else SIGINT: 130)."""
    return 128 + (_received[0] if _received else int(signal.SIGINT))
