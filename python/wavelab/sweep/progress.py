"""Progress of a sweep: runs done / total, rate and ETA.

On a terminal or in a Jupyter notebook, a tqdm bar; otherwise (a log file,
a batch job) one line every :data:`LOG_EVERY` seconds and at the end, so
long sweeps leave a readable trace instead of carriage-return noise.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

from wavelab._util.progress_bars import in_notebook, progress_bar

LOG_EVERY = 30.0
"""Seconds between progress lines when stderr is not a terminal."""


def _duration(seconds: float) -> str:
    s = round(seconds)
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


class Progress:
    """Counts runs; ``initial`` runs were done before (they do not count in the rate)."""

    def __init__(
        self,
        total: int,
        initial: int = 0,
        desc: str = "runs",
        enabled: bool = True,
        stream: TextIO | None = None,
    ) -> None:
        self.total = total
        self.initial = initial
        self.n = initial
        self.desc = desc
        self.stream = stream or sys.stderr
        self.start = time.monotonic()
        self.last_line = self.start
        self.bar = None
        self.enabled = enabled and total > initial
        if self.enabled and (self.stream.isatty() or in_notebook()):
            self.bar = progress_bar(
                total=total,
                initial=initial,
                unit="run",
                desc=desc,
                file=self.stream,
                smoothing=0.1,
                disable=False,
            )

    def rate(self) -> float:
        """Runs per second since the start (runs done before excluded)."""
        elapsed = time.monotonic() - self.start
        return (self.n - self.initial) / elapsed if elapsed > 0 else 0.0

    def line(self) -> str:
        """``desc: 12/40 runs (30%), 2.5 runs/s, elapsed 00:04, ETA 00:11``."""
        rate = self.rate()
        left = self.total - self.n
        eta = _duration(left / rate) if rate > 0 else "?"
        pct = 100.0 * self.n / self.total if self.total else 100.0
        return (
            f"{self.desc}: {self.n}/{self.total} runs ({pct:.0f}%), {rate:.2f} runs/s, "
            f"elapsed {_duration(time.monotonic() - self.start)}, ETA {eta}"
        )

    def update(self, k: int = 1) -> None:
        """``k`` more runs done."""
        self.n += k
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.update(k)
            return
        now = time.monotonic()
        if now - self.last_line >= LOG_EVERY:
            self.last_line = now
            print(self.line(), file=self.stream, flush=True)

    def close(self) -> None:
        """Ends the bar (or prints the last line)."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        elif self.enabled and self.n > self.initial:
            print(self.line(), file=self.stream, flush=True)
        self.enabled = False
