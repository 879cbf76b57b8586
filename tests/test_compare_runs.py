"""`wavelab compare A B [C ...]` and `wavelab.compare`: any runs side by
side, their metric table against each run's own summary, the figures, the
refusals, and a sweep's seeds as box plots."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import wavelab
from conftest import SMALL, TINY_SWEEP
from conftest import wavelab as wavelab_cli
from wavelab import cli
from wavelab.comparison.runs import RUN_FLOW


def compare_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``wavelab compare ARGS`` in this process (a new interpreter per call
    would take most of the test's time): its exit code, output and errors."""
    code = cli.main(["compare", *args])
    got = capsys.readouterr()
    return code, got.out, got.err


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A 3 s run of CUBIC and one of BBR on one lossy link, as run folders."""
    root = tmp_path_factory.mktemp("compare")
    out = []
    for cc in ("cubic", "bbr"):
        data = tomllib.loads(SMALL)
        data["flows"][0]["cc"] = cc
        d = root / cc
        wavelab.run(wavelab.from_dict(data)).to_parquet(d)
        out.append(d)
    return out[0], out[1]


def test_the_table_holds_each_runs_own_summary_and_the_differences(
    two_runs: tuple[Path, Path],
) -> None:
    a, b = two_runs
    t = wavelab.compare([a, b]).table()
    assert list(dict.fromkeys(t["run"])) == ["cubic", "bbr"]
    for d in (a, b):
        own = wavelab.Results.read_parquet(d).summary().iloc[0]
        rows = t[(t["run"] == d.name) & (t["flow"] != RUN_FLOW)].set_index("metric")
        assert rows.loc["goodput_mbps", "unit"] == "Mbit/s"
        for metric in ("goodput_mbps", "rtt_p95_ms", "retransmissions", "min_rtt_ms"):
            assert rows.loc[metric, "value"] == pytest.approx(float(own[metric]))
        run = t[(t["run"] == d.name) & (t["flow"] == RUN_FLOW)].set_index("metric")
        assert run.loc["utilisation", "value"] == pytest.approx(float(own["utilisation"]))
    va = t[(t["run"] == "cubic")].set_index(["flow", "metric"])["value"]
    vb = t[(t["run"] == "bbr")].set_index(["flow", "metric"])
    # the runs differ (CUBIC fills the queue, BBR does not), and the table says by how much
    g = ("flow0", "goodput_mbps")
    assert vb.loc[g, "value"] != va.loc[g]
    assert vb.loc[g, "difference"] == pytest.approx(vb.loc[g, "value"] - va.loc[g])
    assert vb.loc[g, "ratio"] == pytest.approx(vb.loc[g, "value"] / va.loc[g])
    assert (t[t["run"] == "cubic"]["difference"].dropna() == 0).all()


def test_the_cli_writes_the_figures_and_the_api_gives_the_same_table(
    two_runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = two_runs
    out = tmp_path / "cmp"
    code, stdout, err = compare_cli(
        capsys, str(a), str(b), "--out", str(out), "--label", "C", "--label", "B"
    )
    assert code == 0, err
    for name in (
        "series-rate",
        "series-cwnd",
        "series-rtt",
        "series-queue",
        "rtt-cdf",
        "delay-cdf",
    ):
        assert (out / f"{name}.png").stat().st_size > 5000, name
    assert not (out / "box.png").exists()  # one run per entry: nothing to box
    assert "one-way delay CDF: not drawn" not in stdout  # the runs keep a packet log
    assert "goodput_mbps (Mbit/s)" in stdout and "B / C" in stdout
    csv = pd.read_csv(out / "comparison.csv", keep_default_na=False, na_values=[""])
    api = wavelab.compare([a, b], labels=["C", "B"]).table()
    pd.testing.assert_frame_equal(csv, api, check_dtype=False)
    record = json.loads((out / "compare.json").read_text())
    assert [e["label"] for e in record["entries"]] == ["C", "B"]
    # a previous comparison's folder is replaced, its files only
    code, _, err = compare_cli(capsys, str(b), str(a), "--out", str(out))
    assert code == 0, err
    assert pd.read_csv(out / "comparison.csv")["run"].iloc[0] == "bbr"


def test_a_foreign_folder_is_refused_and_left_as_it_was(
    two_runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = two_runs
    (tmp_path / "notes.txt").write_text("mine")
    res = wavelab_cli("compare", str(a), str(b), "--out", str(tmp_path))
    assert res.returncode != 0
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr
    assert f"--out {tmp_path}: the folder is not empty" in res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    # a run folder is not a comparison's either
    code, _, err = compare_cli(capsys, str(a), str(b), "--out", str(a))
    assert code != 0 and "not empty" in err


@pytest.mark.parametrize(
    ("arg", "why"),
    [
        ("missing", "no such folder"),
        ("empty", "not a run folder"),
        ("run:name=other", "no stored run with tables matches"),
        ("run:cc", "is not key=value"),
    ],
)
def test_a_bad_argument_is_named_in_one_line(
    two_runs: tuple[Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    arg: str,
    why: str,
) -> None:
    a, _ = two_runs
    (tmp_path / "empty").mkdir()
    bad = {"missing": str(tmp_path / "missing"), "empty": str(tmp_path / "empty")}.get(
        arg, arg.replace("run", str(a), 1)
    )
    code, _, err = compare_cli(capsys, str(a), bad, "--out", str(tmp_path / "out"))
    assert code != 0
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"error: {bad}: ") and why in err, err
    assert not (tmp_path / "out").exists()


def test_a_sweeps_seeds_become_one_box_per_algorithm(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sweep = tmp_path / "tiny.toml"
    sweep.write_text(TINY_SWEEP)
    assert (
        cli.main(["sweep", str(sweep), "--out", str(tmp_path / "sw"), "--jobs", "1", "--quiet"])
        == 0
    )
    c = wavelab.compare([tmp_path / "sw"])
    assert c.labels == ["sw:cc=reno", "sw:cc=cubic"]
    assert [len(e.runs) for e in c.entries] == [2, 2]
    # each entry's figure is the mean over its seeds
    t = c.table().set_index(["run", "flow", "metric"])
    seeds = [r.summary()["goodput_mbps"].iloc[0] for r in c.entries[1].runs]
    got = t.loc[("sw:cc=cubic", "f", "goodput_mbps"), "value"]
    assert got == pytest.approx(np.mean(seeds))
    assert seeds[0] != seeds[1]  # two seeds, two outcomes: the box has a height
    out = tmp_path / "cmp"
    code, stdout, err = compare_cli(
        capsys, f"{tmp_path / 'sw'}:cc=cubic", str(tmp_path / "sw"), "--out", str(out)
    )
    assert code == 0, err
    assert (out / "box.png").stat().st_size > 5000
    assert "the mean over 2 runs" in stdout


def test_compare_is_in_the_top_level_api() -> None:
    assert "compare" in dir(wavelab) and "Comparison" in dir(wavelab)
    assert wavelab.compare.__module__ == "wavelab.comparison.runs"


def test_one_way_delays_lie_between_the_path_and_a_full_queue(two_runs: tuple[Path, Path]) -> None:
    from wavelab.analysis.rtt import one_way_delays

    res = wavelab.Results.read_parquet(two_runs[0])
    d = one_way_delays(res.packets)
    # 10 ms of propagation and 1.2 ms to send 1500 B at 10 Mbit/s; at most
    # 20 more packets waiting ahead in the queue
    assert len(d) > 1000
    assert d.min() >= 0.0112 - 1e-9 and d.max() <= 0.0112 + 21 * 0.0012 + 1e-6
    assert d.max() > d.min() + 0.005  # CUBIC fills the queue
    assert len(one_way_delays(res.packets.iloc[0:0])) == 0
