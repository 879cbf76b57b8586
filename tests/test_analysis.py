"""The recovery-time metric on hand-made cumulative byte series."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from wavelab.analysis import recovery_time, steady_rate

STEP = 0.05


def cumulative(rates: list[tuple[float, float]], end: float) -> pd.Series:
    """Cumulative bytes sampled every 50 ms for piecewise-constant rates:
    ``rates`` is [(from_time, bit/s), ...]."""
    t = np.round(np.arange(0.0, end + 1e-9, STEP), 9)
    mid = t - STEP / 2  # the rate of the step that ends at each sample
    r = np.zeros_like(t)
    for start, bps in rates:
        r[mid >= start] = bps
    bytes_per_step = np.concatenate([[0.0], r[1:] * STEP / 8])
    return pd.Series(np.cumsum(bytes_per_step), index=t)


def test_steady_rate_averages_the_second_half() -> None:
    s = cumulative([(0.0, 1e6), (10.0, 3e6)], 20.0)
    assert steady_rate(s) == pytest.approx(3e6)
    s = cumulative([(0.0, 1e6), (15.0, 3e6)], 20.0)
    assert steady_rate(s) == pytest.approx(2e6, rel=0.01)


def test_recovery_counts_only_bytes_after_t0() -> None:
    # full rate until the outage at 30 s, nothing for 2 s, full rate again at 33 s
    s = cumulative([(0.0, 8e6), (30.0, 0.0), (33.0, 8e6)], 60.0)
    rec = recovery_time(s, t0=32.0, r_ss=8e6)
    # the 1 s window must hold 0.9 * 8 Mbit of bytes sent after 33 s: 33.9 s
    assert rec.seconds == pytest.approx(1.9)
    assert rec.target == pytest.approx(7.2e6)
    assert rec.horizon == pytest.approx(28.0)
    assert str(rec) == "1.9 s"


def test_a_short_outage_is_not_recovered_by_bytes_from_before_it() -> None:
    # a 0.1 s gap: a window reaching back before t0 would see ~0.9 s of full
    # rate and call it recovered at once; only bytes after t0 count
    s = cumulative([(0.0, 8e6), (30.0, 0.0), (30.1, 8e6)], 40.0)
    rec = recovery_time(s, t0=30.1, r_ss=8e6)
    assert rec.seconds == pytest.approx(0.9)


def test_never_reaching_the_target_is_not_recovered() -> None:
    s = cumulative([(0.0, 8e6), (30.0, 0.0), (32.0, 5e6)], 100.0)
    rec = recovery_time(s, t0=32.0, r_ss=8e6)
    assert rec.seconds is None
    assert str(rec) == "not recovered (> 68 s)"


def test_sustained_recovery_skips_a_crossing_that_does_not_last() -> None:
    # slow start crosses the target at once, then a loss recovery stalls
    # delivery from 35 to 50 s; full rate again afterwards
    s = cumulative([(0.0, 2e6), (30.0, 0.0), (32.0, 2e6), (35.0, 0.1e6), (50.0, 2e6)], 100.0)
    first = recovery_time(s, t0=32.0, r_ss=2e6)
    held = recovery_time(s, t0=32.0, r_ss=2e6, hold=10.0)
    assert first.seconds == pytest.approx(0.9)
    assert held.seconds == pytest.approx(50.0 + 0.9 - 32.0)


def test_sustained_recovery_needs_hold_seconds_of_data() -> None:
    s = cumulative([(0.0, 2e6), (30.0, 0.0), (32.0, 2e6)], 40.0)
    assert recovery_time(s, t0=32.0, r_ss=2e6, hold=10.0).seconds is None
    assert recovery_time(s, t0=32.0, r_ss=2e6, hold=5.0).seconds == pytest.approx(0.9)
