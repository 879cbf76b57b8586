"""The WSC-TCP study (``wavelab reproduce wsc-tcp``): the quick form end to
end, and on single runs the mechanisms docs/experiments/wsc-tcp.md reports;
the full study's shape is slow."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from wavelab.analysis.seeds import mean_ci, t975
from wavelab.experiments import wsc_tcp as study
from wavelab.results import Results
from wavelab.runner import run


@cache
def one(variant: str, loss: float, duration: float = 60.0, seed: int = 1) -> Results:
    return run(study.scenario(study.Cell(variant, loss, duration, seed)))


def measured(res: Results) -> pd.DataFrame:
    f = res.flows
    return f[f["name"].str.startswith("flow")]


def test_the_quick_study_writes_its_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = study.reproduce(tmp_path / "wsc", quick=True, jobs=1)
    for name in ("runs.csv", "summary.csv", "beside_thesis.csv", "wsc_tcp.md"):
        assert (out / name).is_file(), name
    runs = pd.read_csv(out / "runs.csv")
    assert len(runs) == 2 * 2 * 3
    assert (runs["goodput_bps"] > 0).all()
    # the lossy hop retransmits at the link layer, the nearly lossless one barely
    lossy = runs[runs["loss"] == study.LOSSY]["link_retries"]
    clean = runs[runs["loss"] == study.LOSSLESS]["link_retries"]
    assert lossy.min() > 10 * max(clean.max(), 1)
    side = pd.read_csv(out / "beside_thesis.csv")
    assert list(side["variant"]) == ["NewReno", "WSC-TCP"] * 2
    assert np.isfinite(side["ci_kbps"]).all()
    assert "Beside the thesis" in capsys.readouterr().out


def test_a_t_quantile_and_a_paired_gain() -> None:
    assert t975(1) == pytest.approx(12.706)
    assert t975(19) == pytest.approx(2.093)
    # between the table's 60 and 120 degrees of freedom, interpolated in 1/df
    assert t975(100) == pytest.approx(1.984)
    m, ci = mean_ci(np.array([1.0, 2.0, 3.0]))
    assert (m, ci) == (pytest.approx(2.0), pytest.approx(4.303 / np.sqrt(3)))
    rows = pd.DataFrame(
        {
            "variant": ["NewReno", "NewReno", "WSC-TCP", "WSC-TCP"],
            "loss": [0.1] * 4,
            "duration_s": [60.0] * 4,
            "seed": [1, 2, 1, 2],
            "goodput_bps": [100.0, 200.0, 110.0, 220.0],
            "fast_retransmits": [1, 1, 0, 0],
            "timeouts": [0, 0, 0, 0],
            "duplicate_segments": [0, 0, 0, 0],
            "link_retries": [0, 0, 0, 0],
        }
    )
    s = study.summarise(rows).set_index("variant")
    # +10 % on both seeds: a gain of 10 % with no spread
    assert s.loc["WSC-TCP", "gain_pct"] == pytest.approx(10.0)
    assert s.loc["WSC-TCP", "gain_ci_pct"] == pytest.approx(0.0)


def test_on_a_lossy_out_of_order_hop_newreno_retransmits_what_the_link_still_delivers() -> None:
    """Section 3.2's premise: segments in link-layer retry are passed, the
    duplicate ACKs trigger NewReno's fast retransmits, and the receiver gets
    the retransmitted segments twice; the dynamic threshold avoids most."""
    nr = measured(one("NewReno", 0.2))
    dt = measured(one("dynamic dupthresh only", 0.2))
    assert nr["duplicate_segments"].sum() > 2 * dt["duplicate_segments"].sum()
    assert nr["fast_retransmits"].sum() > 3 * dt["fast_retransmits"].sum()
    assert dt["bytes_delivered"].sum() > 1.3 * nr["bytes_delivered"].sum()


def test_queue_drops_at_the_senders_link_look_like_link_retries() -> None:
    """With no wireless loss at all, every loss is a tail drop at the
    sender's wireless interface queue; the segments behind it overtake it,
    so the dynamic threshold is raised as for a segment in retry, no fast
    retransmit happens, and the losses end in timeouts."""
    nr = one("NewReno", 0.0)
    dt = one("dynamic dupthresh only", 0.0)
    links = dt.links
    assert links["arq_retries"].sum() == 0
    assert links["dropped_queue"].sum() > 0
    assert measured(dt)["fast_retransmits"].sum() == 0
    assert measured(dt)["rto_expiries"].sum() > 2 * measured(nr)["rto_expiries"].sum()
    s = dt.series
    raised = s[s["flow"] >= study.FLOWS]["cc_dupthresh_extra"] > 0
    assert raised.mean() > 0.1


@pytest.mark.slow
def test_the_full_study_shape(tmp_path: Path) -> None:
    """The claims of docs/experiments/wsc-tcp.md: WSC-TCP gains on the lossy
    hop and loses on the nearly lossless one in 60 s runs; the dynamic
    threshold alone gains more than all four parts together on the lossy
    hop; best-start helps the 4.8 s runs on the nearly lossless hop."""
    out = study.reproduce(tmp_path / "wsc", quick=False, jobs=2)
    s = pd.read_csv(out / "summary.csv").set_index(["variant", "loss", "duration_s"])

    def gain(v: str, p: float, d: float) -> tuple[float, float]:
        r = s.loc[(v, p, d)]
        return float(r["gain_pct"]), float(r["gain_ci_pct"])

    g, ci = gain("WSC-TCP", study.LOSSY, 60.0)
    assert g - ci > 0
    g, ci = gain("WSC-TCP", study.LOSSLESS, 60.0)
    assert g + ci < 0
    assert (
        gain("dynamic dupthresh only", study.LOSSY, 60.0)[0] > gain("WSC-TCP", study.LOSSY, 60.0)[0]
    )
    g, ci = gain("best-start only", study.LOSSLESS, 4.8)
    assert g - ci > 0
