"""``wavelab reproduce rrul``: the quick form (CI) and the full grid (slow):
the table's idle and loaded figures, and the figures flent draws."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from conftest import wavelab


def _reproduce(tmp_path: Path, *args: str) -> pd.DataFrame:
    out = tmp_path / "rrul"
    res = wavelab("reproduce", "rrul", *args, "--out", str(out))
    assert res.returncode == 0, res.stderr
    for fig in ("ping_rtt", "ping_cdf", "ping_box", "voice_owd_cdf"):
        assert (out / f"{fig}.png").exists(), fig
    return pd.read_csv(out / "rrul.csv")


def _check(t: pd.DataFrame) -> None:
    # idle: the propagation round trip (64 ms) and the serialisation
    assert t["ping_idle_ms"].between(64.0, 66.0).all()
    fq = t[t["queue"] == "fq_codel"]
    tail = t[(t["queue"] == "drop_tail") & (t["algorithm"] == "cubic")]
    # CUBIC fills the 600 ms drop-tail buffer; FQ-CoDel keeps the ping near idle
    assert (tail["ping_p50_ms"] > 300).all()
    assert (fq["ping_p50_ms"] < fq["ping_idle_ms"] + 10).all()
    assert (fq["voice_lost_or_late"] == 0).all()
    assert (tail["voice_lost_or_late"] > 0.5).all()


def test_the_quick_form_shows_the_queue_and_what_fq_codel_does(tmp_path: Path) -> None:
    t = _reproduce(tmp_path, "--quick")
    assert len(t) == 8 and set(t["algorithm"]) == {"cubic", "bbr"}
    h = pd.read_csv(tmp_path / "rrul" / "handover.csv")
    # after the handover to L1: FQ-CoDel keeps the voice near the new path's delay
    fq = h[h["queue"] == "fq_codel"]
    assert len(h) == 4 and (fq["voice_owd_after_p50_ms"] < 40).all()
    assert (h[h["queue"] == "drop_tail"]["voice_owd_after_p50_ms"] > 150).all()
    _check(t)


@pytest.mark.slow
def test_the_full_grid(tmp_path: Path) -> None:
    t = _reproduce(tmp_path)
    assert len(t) == 24 and set(t["flows"]) == {1, 4, 8}
    _check(t)
