"""The MobiWac 2009 study (``wavelab reproduce mobiwac2009``): its set-up
from the paper and the reference CSV, the transfer metric, and a small grid
through the sweep machinery. The full study and ``--quick`` are slow (marked
``slow``); docs/experiments/mobiwac2009.md has their figures."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import wavelab
from wavelab.errors import WavelabError
from wavelab.experiments import mobiwac2009 as study
from wavelab.runner import run
from wavelab.scenario import from_dict, parse_toml
from wavelab.sweep.backends import LocalPool

REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference"


def scenario(fig: int, at: float = 5.0, flows: int = 1, tcp: str = "regular") -> object:
    h = {h.figure: h for h in study.handoffs()}[fig]
    text = study.scenario_text(h, at=at, flows=flows, tcp=tcp)
    return from_dict(parse_toml(text, "test: ", WavelabError))


def test_the_sixteen_handoffs_are_the_reference_csv() -> None:
    hs = study.handoffs()
    assert [h.figure for h in hs] == list(range(4, 20))
    ref = REFERENCE / "mobiwac2009_scenarios.csv"
    if ref.exists():
        rows = list(csv.DictReader(ref.open()))
        assert [(int(r["figure"]), r["reported"]) for r in rows] == [
            (h.figure, h.reported) for h in hs
        ]
    assert {h.packets for h in hs if h.figure in (15, 19)} == {500}
    assert sorted(study.CLAIMS) == list(range(4, 20))


def test_bdp_and_buffers_as_the_paper_counts_them() -> None:
    # section 4.1: "the BDP of both access links is 10 packets" (6400/9, 200/300),
    # 18 packets (54000/2, 2000/50), 18 and 9 (11000/10, 700/75), 50 and 38 (54000/4, 6000/50)
    assert study.bdp_packets(200, 300) == pytest.approx(10)
    assert study.bdp_packets(6400, 9) == pytest.approx(9.6)
    assert study.bdp_packets(54000, 2) == pytest.approx(18)
    assert study.bdp_packets(700, 75) == pytest.approx(8.75)
    assert study.bdp_packets(54000, 4) == pytest.approx(36)
    assert study.buffer_packets(54000, 2) == 18
    assert study.buffer_packets(200, 30) == 5  # max(BDP, 5)


def test_a_run_measures_the_transfer_after_the_handoff() -> None:
    res = run(scenario(13, at=5.0, flows=2))
    h = res.handoffs
    assert list(h["transfer_packets"]) == [100] and list(h["transfers_done"]) == [2]
    took = float(h["transfer_time"].iloc[0])
    # 2 x 100 packets of 1500 bytes over 54 Mbit/s: at least 44 ms
    assert 0.044 < took < 5
    # the run ended when the slowest flow had its packets
    assert float(res.series["time"].max()) <= 5.0 + took + 1e-9
    # the break-before-make notice waits for the new link: 1 s + 2 ms + 4 ms
    bbm = run(scenario(17, at=5.0, tcp="ETCPv1"))
    assert float(bbm.notifications["time"].iloc[0]) == pytest.approx(6.006)


def test_a_small_grid_through_the_sweep_machinery(tmp_path: Path) -> None:
    grid = study.Grid((13, 17), (4.0, 9.0), (1, 2), ("regular", "ETCPv1"))
    out = study.reproduce(tmp_path / "mw", quick=False, jobs=1, grid=grid)
    cells = pd.read_csv(out / "cells.csv")
    assert len(cells) == 2 * 2 * 2 and (cells["runs"] == 2).all()
    assert (cells["unfinished"] == 0).all()
    assert (cells["q1_s"] <= cells["median_s"]).all() and (cells["median_s"] <= cells["q3_s"]).all()
    verdicts = pd.read_csv(out / "verdicts.csv")
    assert set(verdicts["figure"]) == {13, 17}
    assert set(verdicts["agrees"]) <= {"yes", "partly", "no"}
    text = (out / "comparison.md").read_text()
    assert "Fig. 13" in text and "Verdict:" in text
    assert (out / "fig13.png").stat().st_size > 5000 and (out / "figures.png").exists()
    assert (out / "scenarios" / "fig17.toml").exists()
    # resumable: the same grid again reuses every run, and a larger grid in
    # the same place (the full study after --quick) reuses what it shares
    again = study.run_study(grid, tmp_path / "mw", LocalPool(1), progress=False)
    assert len(again) == 16 and (again["status"] == "ok").all()
    assert not math.isnan(float(again["transfer_s"].iloc[0]))
    # each run's CPU time in its worker, and the engine's part of it
    assert (again["engine_cpu_s"] > 0).all() and (again["cpu_s"] >= again["engine_cpu_s"]).all()
    more = study.Grid((13,), (4.0, 9.0, 14.0), (1,), ("regular",))
    bigger = study.run_study(more, tmp_path / "mw", LocalPool(1), progress=False)
    assert (bigger["status"] == "ok").all() and len(bigger) == 3


def test_the_reproduce_command_names_bad_options(tmp_path: Path) -> None:
    # every study runs on a cluster; one that does not answer is named
    r = wavelab(
        "reproduce",
        "dcnet2016",
        "--cluster",
        "tcp://127.0.0.1:1",
        "--cluster-timeout",
        "1",
        "--out",
        str(tmp_path),
    )
    assert r.returncode == 2
    assert "error: --cluster tcp://127.0.0.1:1: no Dask scheduler answered" in r.stderr
    assert "Traceback" not in r.stderr
    r = wavelab("reproduce", "wave-page", "--cluster", "x:1", "--jobs", "2", "--out", str(tmp_path))
    assert r.returncode == 2 and "--jobs is for the local pool" in r.stderr


@pytest.mark.slow
def test_quick_writes_the_comparison(tmp_path: Path) -> None:
    r = wavelab("reproduce", "mobiwac2009", "--quick", "--out", str(tmp_path / "q"))
    assert r.returncode == 0, r.stderr
    assert "Verdicts:" in r.stdout


def test_unfinished_runs_count_as_the_longest() -> None:
    nan = math.nan
    assert study.quartiles(np.array([1.0, 2.0, 3.0, 4.0, 5.0])) == [2.0, 3.0, 4.0]
    # two of five runs never finished: the median is the third finished one's
    # rank among all five, not the median of the finished three
    q = study.quartiles(np.array([1.0, nan, 2.0, nan, 3.0]))
    assert q[0] == 2.0 and q[1] == 3.0 and math.isnan(q[2])
    assert all(math.isnan(v) for v in study.quartiles(np.array([nan, nan])))
