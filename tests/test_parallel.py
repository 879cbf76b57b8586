"""The parallel runner of the reproductions: runs reduced where they ran,
results streamed to disk and read back one at a time."""

from __future__ import annotations

import functools
from pathlib import Path

import pandas as pd
import pytest

from wavelab.experiments.parallel import StoredRuns, run_all, run_each, run_to_disk
from wavelab.results import Results
from wavelab.scenario import Scenario, builtin_scenario


def scenarios() -> dict[str, Scenario]:
    base = builtin_scenario("demo")
    return {
        f"{cc}-{d}": base.with_changes(
            {
                "duration": f"{d}s",
                "flows[0].cc": cc,
                "name": f"{cc}{d}",
                "links[1].outages": [],
                "flows[1].start": "1s",
            }
        )
        for cc in ("newreno", "cubic")
        for d in (3, 4)
    }


def delivered(flow: int, res: Results) -> int:
    return int(res.flows["bytes_delivered"].iloc[flow])


@pytest.mark.parametrize("jobs", [1, 2])
def test_run_each_returns_only_what_each_reduction_returns(jobs: int) -> None:
    scs = scenarios()
    got = run_each(
        {k: (sc, functools.partial(delivered, 0)) for k, sc in scs.items()}, jobs, progress=False
    )
    assert list(got) == list(scs)
    assert all(isinstance(v, int) for v in got.values())
    full = run_all(scs, 1, progress=False)
    assert got == {k: delivered(0, r) for k, r in full.items()}
    # a longer run delivers more: the reductions are not mixed up between keys
    assert got["cubic-4"] > got["cubic-3"] and got["newreno-4"] > got["newreno-3"]


@pytest.mark.parametrize("jobs", [1, 2])
def test_run_to_disk_writes_every_run_and_reads_it_back_the_same(tmp_path: Path, jobs: int) -> None:
    scs = scenarios()
    runs = run_to_disk(scs, tmp_path / "runs", jobs, keep=lambda k: k == "cubic-3", progress=False)
    assert isinstance(runs, StoredRuns)
    assert list(runs) == list(scs) and len(runs) == 4
    # kept in memory, not written; every other run is on disk, not in memory
    assert list(runs.kept) == ["cubic-3"]
    assert not (tmp_path / "runs" / "cubic-3").exists()
    for key in ("newreno-3", "newreno-4", "cubic-4"):
        assert (tmp_path / "runs" / key / "series.parquet").is_file()
    direct = run_all(scs, 1, progress=False)
    for key in scs:
        pd.testing.assert_frame_equal(runs[key].series, direct[key].series)
        pd.testing.assert_frame_equal(
            runs[key].flows.reset_index(drop=True), direct[key].flows.reset_index(drop=True)
        )
    assert runs["cubic-3"].scenario is scs["cubic-3"]
    with pytest.raises(KeyError):
        runs["nothing"]
