"""Trace files of scenarios: relative paths are read from the
scenario file's folder (errors name the path tried), the shipped LEO-like
delay scenario runs from anywhere, and run keys hash a trace's contents, not
its path: an edited trace is another run, a moved one the same."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from wavelab import run
from wavelab.errors import ScenarioFileError
from wavelab.scenario import builtin_scenario, load_scenario
from wavelab.sweep import load_sweep
from wavelab.sweep.backends import LocalPool
from wavelab.sweep.runner import run_sweep
from wavelab.sweep.store import run_key, scenario_key

SCENARIO = """
duration = "2s"

[[links]]
between = ["a", "b"]
rate = "10Mbit/s"
delay = "20ms"
forward = { delay_trace = "traces/d.csv", rate_trace = "traces/r.csv" }

[[flows]]
from = "a"
to = "b"
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    d = tmp_path / "study"
    (d / "traces").mkdir(parents=True)
    (d / "traces" / "d.csv").write_text("time,delay\n0,30ms\n1,10ms\n")
    (d / "traces" / "r.csv").write_text("time,rate\n0,4Mbit/s\n")
    (d / "s.toml").write_text(SCENARIO)
    return d


def test_relative_trace_paths_are_read_from_the_scenario_folder(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    sc = load_scenario(folder / "s.toml")
    fwd = sc.normalized["links"][0]["forward"]
    assert fwd["delay_trace"] == str(folder / "traces" / "d.csv")
    assert set(sc.traces) == {fwd["delay_trace"], fwd["rate_trace"]}
    # the trace is used: at 4 Mbit/s the 10 Mbit/s link carries under 4
    r = run(sc, progress=False)
    assert 0 < r.flows["goodput"].iloc[0] < 4e6
    # a missing trace: the path tried, and where it was read from
    (folder / "traces" / "d.csv").unlink()
    with pytest.raises(ScenarioFileError) as e:
        load_scenario(folder / "s.toml")
    tried = folder / "traces" / "d.csv"
    assert str(e.value).startswith(
        f"{folder / 's.toml'}: links[0].forward.delay_trace: {tried}: cannot be read"
    ), e.value
    assert str(e.value).endswith(
        f"('traces/d.csv' is read from the scenario's folder, {folder})"
    ), e.value


def test_a_bad_trace_line_is_named(folder: Path) -> None:
    (folder / "traces" / "r.csv").write_text("time,rate\n0,4Mbit/s\n1,lots\n")
    with pytest.raises(ScenarioFileError) as e:
        load_scenario(folder / "s.toml")
    assert str(e.value).startswith(
        f"{folder / 's.toml'}: links[0].forward.rate_trace: {folder / 'traces' / 'r.csv'} "
        'line 3: "lots" is not a rate'
    ), e.value


def test_the_shipped_leo_delay_scenario_reads_its_trace_from_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    sc = builtin_scenario("leo-delay", changes={"duration": "20s"})
    (trace,) = set(sc.traces)
    assert trace.endswith("scenarios/traces/leo.delay") and os.path.isabs(trace)
    r = run(sc, progress=False)
    assert r.flows["goodput"].iloc[0] > 10e6


def test_the_shipped_cellreplay_scenario_keys_its_train_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # both of CellReplay's files are read from the package and hashed into
    # the run key: an edited train trace is another run
    monkeypatch.chdir(tmp_path)
    sc = builtin_scenario("cellreplay", changes={"duration": "2s"})
    assert sorted(Path(t).name for t in sc.traces) == ["cellular.down", "cellular.trains"]
    key = scenario_key(sc)
    trains = tmp_path / "trains"
    trains.write_text("0 30 0 1\n100 30 0 1\n")
    other = builtin_scenario(
        "cellreplay", changes={"duration": "2s", "links[1].forward.cellreplay_train": str(trains)}
    )
    assert scenario_key(other) != key
    r = run(sc, progress=False)
    # behind the trains' base delay (20 to 60 ms), the core (2 x 20 ms) and
    # the uplink (15 ms): no RTT below 75 ms
    assert r.flows["min_rtt"].iloc[0] > 0.075


def test_run_keys_hash_the_trace_contents_not_the_path(folder: Path, tmp_path: Path) -> None:
    before = load_scenario(folder / "s.toml")
    key = scenario_key(before)
    # moved elsewhere, the same contents: the same run
    moved = tmp_path / "moved"
    shutil.copytree(folder, moved)
    assert scenario_key(load_scenario(moved / "s.toml")) == key
    # an edited trace: another run
    (folder / "traces" / "d.csv").write_text("time,delay\n0,30ms\n1,12ms\n")
    edited = load_scenario(folder / "s.toml")
    assert edited.normalized == before.normalized
    assert scenario_key(edited) != key
    # scenarios without traces keep their keys (the material is unchanged)
    plain = {"duration": "1s", "seed": 1}
    assert run_key(plain, "c") == run_key(plain, "c", {})


def test_a_sweep_runs_again_after_its_trace_is_edited(folder: Path, tmp_path: Path) -> None:
    sweep = folder / "sweep.toml"
    sweep.write_text(SCENARIO + "\n[sweep]\nseeds = 2\n")
    out = tmp_path / "out"

    def go() -> tuple[int, int]:
        o = run_sweep(load_sweep(sweep), out, LocalPool(1), progress=False, log=lambda m: None)
        return o.ran, o.reused

    assert go() == (2, 0)
    assert go() == (0, 2)
    # run.json records each trace's digest
    run_dir = next((out / "runs").iterdir())
    meta = json.loads((run_dir / "run.json").read_text())
    assert set(meta["traces"]) == {
        str(folder / "traces" / "d.csv"),
        str(folder / "traces" / "r.csv"),
    }
    (folder / "traces" / "r.csv").write_text("time,rate\n0,5Mbit/s\n")
    assert go() == (2, 0)
