"""The study runner (what every reproduction runs through): named runs of
any scenarios on a backend into a store, read back the same as a direct
run, reduced where they ran, reused when the same study starts again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from wavelab.errors import WavelabError
from wavelab.results import Results
from wavelab.results.ownership import MixedResultsError
from wavelab.runner import run
from wavelab.scenario import Scenario, builtin_scenario
from wavelab.sweep.backends import LocalPool
from wavelab.sweep.study import StudyRun, run_study

REDUCE = "test_study:delivered@1"


def delivered(res: Results) -> dict[str, Any]:
    """The reduction the tests run in the worker (this module is importable
    there: the forkserver's workers share the parent's sys.path)."""
    return {"bytes": [int(b) for b in res.flows["bytes_delivered"]], "name": res.scenario.name}


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
                "flows[0].log_packets": True,
            }
        )
        for cc in ("newreno", "cubic")
        for d in (3, 4)
    }


def quiet(_: str) -> None:
    pass


def test_runs_read_back_from_the_store_equal_direct_runs(tmp_path: Path) -> None:
    scs = scenarios()
    done = run_study(
        "t", {k: StudyRun(sc) for k, sc in scs.items()}, tmp_path, LocalPool(2), False, quiet
    )
    assert (done.total, done.ran, done.reused) == (4, 4, 0)
    assert list(done.results) == list(scs)
    for k, sc in scs.items():
        stored, direct = done.results[k], run(sc)
        for table in ("series", "flows", "links", "queues", "packets"):
            pd.testing.assert_frame_equal(getattr(stored, table), getattr(direct, table))
        assert stored.scenario.normalized == sc.normalized
    with pytest.raises(KeyError):
        done.results["nothing"]
    meta = json.loads((tmp_path / "study.json").read_text())
    assert meta["study"] == "t" and meta["runs"] == done.keys
    # started again, the study finds every run in its store and runs nothing
    again = run_study(
        "t", {k: StudyRun(sc) for k, sc in scs.items()}, tmp_path, LocalPool(2), False, quiet
    )
    assert (again.ran, again.reused) == (0, 4)


def test_a_reduction_runs_in_the_worker_and_its_version_decides_reuse(tmp_path: Path) -> None:
    scs = scenarios()
    lean = {k: StudyRun(sc, tables=False, reduce=REDUCE) for k, sc in scs.items()}
    done = run_study("t", lean, tmp_path, LocalPool(2), False, quiet)
    for k, sc in scs.items():
        direct = run(sc)
        assert done.reduced(k) == {
            "bytes": [int(b) for b in direct.flows["bytes_delivered"]],
            "name": sc.name,
        }
    # no tables kept: only the index lines
    assert not any((tmp_path / "runs").iterdir())
    assert run_study("t", lean, tmp_path, LocalPool(1), False, quiet).reused == 4
    # another version of the reduction is another computation: run again
    newer = {
        k: StudyRun(sc, tables=False, reduce="test_study:delivered@2") for k, sc in scs.items()
    }
    assert run_study("t", newer, tmp_path, LocalPool(1), False, quiet).ran == 4
    # a run kept without tables does not serve one that needs them
    assert (
        run_study("t", {"one": StudyRun(scs["cubic-3"])}, tmp_path, LocalPool(1), False, quiet).ran
        == 1
    )


def test_a_dropped_packet_log_is_not_kept_and_a_run_that_needs_it_runs_again(
    tmp_path: Path,
) -> None:
    sc = scenarios()["newreno-3"]
    done = run_study(
        "t", {"r": StudyRun(sc, drop=("packets",))}, tmp_path, LocalPool(1), False, quiet
    )
    assert not (done.run_dir("r") / "packets.parquet").exists()
    assert (done.run_dir("r") / "series.parquet").exists()
    assert done.results["r"].packets.empty
    again = run_study("t", {"r": StudyRun(sc)}, tmp_path, LocalPool(1), False, quiet)
    assert again.ran == 1 and not again.results["r"].packets.empty
    with pytest.raises(WavelabError, match="only optional tables"):
        StudyRun(sc, drop=("series",))


def test_two_names_of_one_scenario_are_one_run(tmp_path: Path) -> None:
    sc = scenarios()["cubic-3"]
    done = run_study(
        "t", {"a": StudyRun(sc), "b": StudyRun(sc)}, tmp_path, LocalPool(1), False, quiet
    )
    assert done.total == 1 and done.ran == 1 and done.run_dir("a") == done.run_dir("b")
    with pytest.raises(WavelabError, match="runs a and b are the same scenario"):
        run_study("t", {"a": StudyRun(sc), "b": StudyRun(sc, tables=False)}, tmp_path, LocalPool(1))


def test_a_store_of_another_study_or_a_sweep_is_refused(tmp_path: Path) -> None:
    sc = scenarios()["cubic-3"]
    run_study("first", {"a": StudyRun(sc)}, tmp_path / "s", LocalPool(1), False, quiet)
    with pytest.raises(MixedResultsError, match=r"another study \(first\)"):
        run_study("second", {"a": StudyRun(sc)}, tmp_path / "s", LocalPool(1), False, quiet)
    (tmp_path / "sweep").mkdir()
    (tmp_path / "sweep" / "sweep.toml").write_text("")
    (tmp_path / "sweep" / "index.jsonl").write_text("")
    with pytest.raises(MixedResultsError, match="a sweep's store"):
        run_study("first", {"a": StudyRun(sc)}, tmp_path / "sweep", LocalPool(1), False, quiet)


def test_a_failed_run_names_itself_and_the_others_are_kept(tmp_path: Path) -> None:
    scs = scenarios()
    runs = {k: StudyRun(sc) for k, sc in scs.items()}
    # a reduction that does not exist fails in the worker, for that run only
    runs["cubic-4"] = StudyRun(scs["cubic-4"], reduce="test_study:nothing@1")
    with pytest.raises(WavelabError, match=r"run cubic-4 failed: AttributeError.*3 of 4 runs"):
        run_study("t", runs, tmp_path, LocalPool(2), False, quiet)
    runs["cubic-4"] = StudyRun(scs["cubic-4"])
    assert run_study("t", runs, tmp_path, LocalPool(2), False, quiet).reused == 3
