"""The GEO satellite + WLAN study (Annese et al., ``wavelab reproduce satwlan``):
the channel's calibration, the study's outputs and resumption, and the
shape of Table II on our runs.

Where our model and the paper disagree the check is marked
``xfail(strict=True)`` with the cause (docs/experiments/satwlan.md explains
it with traces): it documents the disagreement, and fails loudly if a change
makes it go away.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pandas as pd
import pytest

from wavelab.experiments import satwlan as study
from wavelab.runner import run


def test_each_trials_channel_comes_from_its_rows_of_table_ii() -> None:
    ch = study.channel(1)
    # trial 1: losses 2.58e-3 and 3.25e-3, timeouts 16 and 11
    assert ch.target_loss == pytest.approx(2.915e-3)
    assert ch.attempt_loss ** (study.RETRIES + 1) == pytest.approx(ch.target_loss)
    assert ch.outages == 11
    assert study.channel(4).outages == 1
    fading = ch.loss("fading")
    assert fading["model"] == "gilbert_elliott" and fading["p_bad_good"] == 0.05


@cache
def trial1(model: str) -> pd.DataFrame:
    """Trial 1's flows over 600 s, seed 1."""
    sc = study.trial_scenario(study.PAPER_TRIALS[0], 1, 600.0, model)
    return study.flow_metrics(run(sc), 600.0)


@pytest.mark.parametrize("model", study.CHANNELS)
def test_the_wlan_losses_are_table_iis_after_arq(model: str) -> None:
    """The flows' loss on the WLAN is the trial's Table II loss within 2x on
    the independent channel (the residual after 7 retries plus what the
    outages destroy); the fading channel shares its losses unevenly."""
    m = trial1(model)
    assert list(m["variant"]) == ["NewReno", "NewReno SACK"]
    # the ARQ's residual loss is the trial's target on both channel models
    residual = m["residual_loss"].mean()
    assert residual == pytest.approx(2.915e-3, rel=0.3), residual
    both = m["avg_packet_loss"].mean()
    assert 0.5 * 2.915e-3 < both < 2 * 2.915e-3, both
    assert (m["timeouts"] > 0).all()
    assert (m["goodput_norm_mean"] > 0.1).all() and m["goodput_norm_mean"].sum() < 1.0


def test_quick_study_writes_the_table_and_figures_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = study.reproduce(tmp_path / "sat", quick=True, jobs=1)
    table = pd.read_csv(out / "table2.csv", dtype={"trial": str})
    assert len(table) == 2 * 8  # two channel models x the paper's 8 rows
    assert set(table["variant"]) == {"NewReno", "NewReno SACK", "Westwood+", "Westwood+ SACK"}
    for model in study.CHANNELS:
        for fig in ("fig2_transferred", "fig3_goodput", "fig4_cwnd_rtt"):
            assert (out / f"{fig}_{model}.png").stat().st_size > 10_000
    md = (out / "table2.md").read_text()
    assert "Shape checks" in md and " / 0.00258" in md
    printed = capsys.readouterr().out
    assert "Table II, ours / paper" in printed
    # a second start finds every run and runs nothing
    index = out / "store" / "index.jsonl"
    before = index.read_bytes()
    assert len(before.splitlines()) == 8
    # the packet log the measurement read stays in the worker
    assert not list((out / "store" / "runs").glob("*/packets.parquet"))
    study.reproduce(tmp_path / "sat", quick=True, jobs=1)
    assert "satwlan: 8 runs, 8 already in" in capsys.readouterr().err
    assert index.read_bytes() == before


@cache
def full() -> pd.DataFrame:
    """The whole study's table (1,600 s, five seeds, both channels)."""
    import tempfile

    d = Path(tempfile.mkdtemp())
    study.reproduce(d, quick=False, jobs=None)
    return pd.read_csv(d / "table2.csv", dtype={"trial": str})


def goodput(t: pd.DataFrame, model: str, trial: str, variant: str) -> float:
    r = t[(t["channel"] == model) & (t["trial"] == trial) & (t["variant"] == variant)]
    return float(r["goodput_norm_mean"].iloc[0])


def timeout_share(t: pd.DataFrame, model: str) -> float:
    """The share of the paper trials' timeouts (entries into the loss state)
    within 20 s after the WLAN destroyed a packet in an outage."""
    paper = t[(t["channel"] == model) & t["trial"].isin(["1", "2", "3", "4"])]
    return float(paper["timeouts_in_outages"].sum() / paper["loss_state_entries"].sum())


@pytest.mark.slow
def test_on_a_fading_wlan_sack_helps_under_trial_1_and_2_losses() -> None:
    t = full()
    assert goodput(t, "fading", "1", "NewReno SACK") > goodput(t, "fading", "1", "NewReno")
    assert goodput(t, "fading", "2", "Westwood+ SACK") > goodput(t, "fading", "2", "Westwood+")


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="with independent residual losses a window of ~25 segments rarely holds two "
    "losses, so SACK has nothing to repair that NewReno cannot (docs/experiments/satwlan.md)",
)
def test_on_an_iid_wlan_sack_helps_under_trial_1_losses() -> None:
    t = full()
    assert goodput(t, "iid", "1", "NewReno SACK") > goodput(t, "iid", "1", "NewReno")


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="about half our timeouts follow residual losses, not outages: a lost fast "
    "retransmission, or Linux's RTO (srtt + 200 ms on a steady RTT) expiring before a fast "
    "retransmission's ACK is back (docs/experiments/satwlan.md)",
)
@pytest.mark.parametrize("model", study.CHANNELS)
def test_timeouts_coincide_with_outages(model: str) -> None:
    assert timeout_share(full(), model) >= 0.8
