"""TCP Vegas's congestion avoidance as a Python class: the prototype path of
docs/custom-cc.md. The same rules as the Rust example
(crates/user-cc/src/vegas.rs, which cites the paper and lists our choices),
line for line, so both give bit-identical runs.

Importing it registers ``"py-vegas"``; from the command line, a copy of it
registers with ``--cc-file``:

    wavelab run examples/cc/vegas.toml --set flows[0].cc=py-vegas \\
        --cc-file python/wavelab/examples/vegas.py

and from Python: ``import wavelab.examples.vegas``, then name ``"py-vegas"``
in a scenario.
"""

from __future__ import annotations

import math

import wavelab
from wavelab.custom_cc import Ack, Congestion, PathChange, Start


@wavelab.congestion_control("py-vegas")
class Vegas:
    """One connection's Vegas. The core reads ``cwnd`` and ``ssthresh``
    (bytes) after every call, and the attributes named in ``metrics`` at
    every sample of the time series (columns ``cc_base_rtt``, ``cc_diff``)."""

    metrics = ("base_rtt", "diff")

    def __init__(
        self, start: Start, alpha: float = 1.0, beta: float = 3.0, gamma: float = 1.0
    ) -> None:
        if beta < alpha:
            raise ValueError(f"beta: {beta:g} must be at least alpha ({alpha:g})")
        self.alpha, self.beta, self.gamma = alpha, beta, gamma
        self.mss = start.mss
        self.cwnd = start.initial_cwnd * start.mss
        self.ssthresh: int | None = start.initial_ssthresh  # None: unlimited
        self.base_rtt: float | None = None  # smallest RTT measured (s)
        self.round_rtt: float | None = None  # smallest RTT of this round (s)
        self.round_end = 0  # the round ends when snd_una reaches this
        self.grow_this_round = True
        self.diff = math.nan  # segments queued, at the last round's end

    def set_mss(self, mss: int) -> None:
        """The connection's MSS once the handshake is done (TCP options can
        make it smaller than configured): the window keeps its segments."""
        segments = self.cwnd // self.mss
        self.mss = mss
        self.cwnd = segments * mss

    def in_slow_start(self) -> bool:
        return self.ssthresh is None or self.cwnd < self.ssthresh

    def on_ack(self, now: float, ack: Ack) -> None:
        if ack.rtt is not None:
            self.base_rtt = ack.rtt if self.base_rtt is None else min(self.base_rtt, ack.rtt)
            self.round_rtt = ack.rtt if self.round_rtt is None else min(self.round_rtt, ack.rtt)
        if self.in_slow_start() and self.grow_this_round and ack.may_grow_window:
            self.cwnd += min(ack.bytes_acked, self.mss)
        if ack.snd_una >= self.round_end:
            self.end_round(ack)
            self.round_end = ack.snd_nxt

    def end_round(self, ack: Ack) -> None:
        base, rtt = self.base_rtt, self.round_rtt
        self.round_rtt = None
        if base is None or rtt is None:
            return
        segments = self.cwnd / self.mss
        self.diff = segments * (rtt - base) / rtt
        if self.in_slow_start():
            if self.diff > self.gamma:
                target = math.floor(self.cwnd * base / rtt)
                self.cwnd = max(min(self.cwnd, target + self.mss), 2 * self.mss)
                self.ssthresh = self.cwnd
            self.grow_this_round = not self.grow_this_round
        elif ack.may_grow_window and self.diff < self.alpha:
            self.cwnd += self.mss
        elif self.diff > self.beta:
            self.cwnd = max(self.cwnd - self.mss, 2 * self.mss)
            self.ssthresh = self.cwnd if self.ssthresh is None else min(self.ssthresh, self.cwnd)

    def on_congestion(self, now: float, event: Congestion) -> None:
        half = max(event.flight_size // 2, 2 * event.mss)
        if event.kind == "rto":
            if not event.repeated:
                self.ssthresh = half
            self.cwnd = self.mss
        else:
            self.ssthresh = half
            self.cwnd = half
        self.round_rtt = None

    def on_path_change(self, now: float, path: PathChange) -> None:
        self.base_rtt = None
