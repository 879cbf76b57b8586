"""wavelab.load_results: a sweep's store, a single run's folder and a
study's store as one dataset; every accessor checked against the per-run
tables it was read from; an error for each bad input."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pandas as pd
import pytest

import wavelab
from conftest import ROOT, TINY_SWEEP
from conftest import wavelab as wavelab_cli
from wavelab.errors import WavelabError
from wavelab.sweep import SweepError, from_sweep_dict, load_sweep
from wavelab.sweep.backends import LocalPool
from wavelab.sweep.names import column_names
from wavelab.sweep.study import StudyRun, run_study

SWEEP = (
    TINY_SWEEP
    + """
[sweep.names]
cc = "flows[0].cc"
"""
)


def quiet(_: str) -> None:
    pass


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("sweep")
    f = d / "tiny.toml"
    f.write_text(SWEEP)
    # the top-level entry point with its default backend (every local core)
    done = wavelab.run_sweep(str(f), d / "out", progress=False, log=quiet)
    assert done.ran == 4 and not done.failed and done.stopped is None
    return d / "out"


def stored(store: Path, key: str) -> wavelab.Results:
    return wavelab.Results.read_parquet(store / "runs" / key)


def own_rows(long: pd.DataFrame, key: str, attached: list[str]) -> pd.DataFrame:
    return long[long["run"] == key].drop(columns=attached).reset_index(drop=True)


def test_runs_are_one_row_per_point_with_named_typed_parameters(store: Path) -> None:
    res = wavelab.load_results(store)
    runs = res.runs
    assert res.kind == "sweep" and res.name == "tiny" and res.params == ["cc", "seed"]
    assert list(runs.columns[:5]) == ["point", "cc", "seed", "run", "status"]
    # the sweep's order (reno first), not the alphabet's
    assert list(runs["cc"].cat.categories) == ["reno", "cubic"] and runs["cc"].cat.ordered
    assert list(runs.sort_values("cc")["cc"].astype(str)) == ["reno", "reno", "cubic", "cubic"]
    assert pd.api.types.is_integer_dtype(runs["seed"]) and list(runs["seed"]) == [1, 2, 1, 2]
    table = pd.read_parquet(store / "runs.parquet")
    assert list(runs["run"]) == list(table["run"])
    assert list(runs["goodput_mbps"]) == list(table["goodput_mbps"])
    assert list(runs["cc"].astype(str)) == list(table["flows[0].cc"])
    assert all(runs["status"] == "ok")


@pytest.mark.parametrize(
    ("method", "table"),
    [("series", "series"), ("flows", "flows"), ("rtt", "rtt_distribution")],
)
def test_each_long_table_is_every_runs_table_with_its_parameters(
    store: Path, method: str, table: str
) -> None:
    res = wavelab.load_results(store)
    long = getattr(res, method)()
    assert list(long.columns[:4]) == ["point", "cc", "seed", "run"]
    attached = ["point", "cc", "seed", "run"]
    total = 0
    for row in res.runs.itertuples():
        alone: pd.DataFrame = getattr(stored(store, str(row.run)), table)
        mine = long[long["run"] == row.run]
        assert len(alone) > 0
        assert set(mine["cc"].astype(str)) == {row.cc} and set(mine["seed"]) == {row.seed}
        own = own_rows(long, str(row.run), attached)
        # another algorithm's variables (cc_* columns) are empty in this run
        extra = [c for c in own.columns if c not in alone.columns]
        assert all(c.startswith("cc_") for c in extra) and own[extra].isna().all().all()
        pd.testing.assert_frame_equal(own[list(alone.columns)], alone, check_categorical=False)
        total += len(alone)
    assert len(long) == total


def test_columns_and_parameters_narrow_what_is_read(store: Path) -> None:
    res = wavelab.load_results(store)
    cubic = res.series(["time", "cwnd"], cc="cubic")
    assert list(cubic.columns) == ["point", "cc", "seed", "run", "time", "cwnd"]
    keys = list(res.runs[res.runs["cc"] == "cubic"]["run"])
    assert sorted(set(cubic["run"])) == sorted(keys)
    for k in keys:
        assert list(cubic[cubic["run"] == k]["cwnd"]) == list(stored(store, k).series["cwnd"])
    both = res.flows(seed=[1, 2], **{"flows[0].cc": "reno"})
    assert sorted(set(both["run"])) == sorted(res.runs[res.runs["cc"] == "reno"]["run"])


def test_seeds_are_the_mean_and_interval_over_each_points_seeds(store: Path) -> None:
    res = wavelab.load_results(store)
    seeds = res.seeds
    assert list(seeds.columns[:2]) == ["cc", "metric"]
    written = pd.read_parquet(store / "seeds.parquet").rename(columns={"flows[0].cc": "cc"})
    pd.testing.assert_frame_equal(
        seeds.assign(cc=seeds["cc"].astype(str)), written, check_dtype=False
    )
    reno = seeds[(seeds["cc"] == "reno") & (seeds["metric"] == "goodput_mbps")]
    runs = res.runs[res.runs["cc"] == "reno"]
    assert reno["n"].item() == 2
    assert reno["mean"].item() == pytest.approx(runs["goodput_mbps"].mean())


def test_run_picks_exactly_one_run(store: Path) -> None:
    res = wavelab.load_results(store)
    one = res.run(cc="cubic", seed=2)
    key = res.runs[(res.runs["cc"] == "cubic") & (res.runs["seed"] == 2)]["run"].item()
    pd.testing.assert_frame_equal(one.series, stored(store, key).series)
    assert one.scenario.normalized["seed"] == 2
    by_path = res.run(**{"flows[0].cc": "cubic", "seed": 2})
    pd.testing.assert_frame_equal(by_path.flows, one.flows)
    with pytest.raises(WavelabError, match=r"2 runs have cc='cubic'; they differ in seed \(1, 2\)"):
        res.run(cc="cubic")
    with pytest.raises(WavelabError, match=r"no run has cc='bbr'; cc is one of 'reno', 'cubic'"):
        res.run(cc="bbr")
    with pytest.raises(WavelabError, match=r"'algo' is not a parameter .*choose from cc, seed"):
        res.run(algo="cubic")


def test_reprs_say_what_was_loaded(store: Path) -> None:
    res = wavelab.load_results(store)
    assert repr(res) == f"LoadedResults(sweep 'tiny', 4 runs, parameters cc, seed, {store})"
    page = res._repr_html_()
    assert "<b>sweep tiny</b>: 4 runs" in page and "<th>cc</th>" in page
    assert page.count("</tr>") == 5  # the header and four runs


def test_an_old_store_without_names_or_table_still_loads(store: Path, tmp_path: Path) -> None:
    old = tmp_path / "old"
    shutil.copytree(store, old)
    meta = json.loads((old / "sweep.json").read_text())
    del meta["names"]
    (old / "sweep.json").write_text(json.dumps(meta))
    for name in ("runs.parquet", "runs.csv", "seeds.parquet", "seeds.csv"):
        (old / name).unlink()
    res = wavelab.load_results(old)
    # the last field of a path is its name when no other parameter ends so
    assert res.params == ["cc", "seed"] and list(res.runs["status"]) == ["ok"] * 4
    new = wavelab.load_results(store)
    assert list(res.runs["run"]) == list(new.runs["run"])
    pd.testing.assert_frame_equal(res.series(), new.series())


def test_a_single_run_folder(tmp_path: Path) -> None:
    f = tmp_path / "tiny.toml"
    f.write_text(SWEEP)
    scenario = load_sweep(f).point(3).scenario
    res = wavelab.run(scenario)
    res.to_parquet(tmp_path / "one")
    loaded = wavelab.load_results(tmp_path / "one")
    # a folder's name is the run's, as it is (not decoded as a URI)
    res.to_parquet(tmp_path / "a%20b")
    assert list(wavelab.load_results(tmp_path / "a%20b").flows()["run"]) == ["a%20b"]
    assert loaded.kind == "run" and loaded.params == [] and len(loaded.runs) == 1
    row = loaded.runs.iloc[0]
    assert row["run"] == "one" and row["name"] == "tiny" and row["status"] == "ok"
    assert row["goodput_mbps"] == pytest.approx(res.flows["goodput"].sum() / 1e6, abs=1e-3)
    series = loaded.series()
    assert list(series["run"].unique()) == ["one"]
    pd.testing.assert_frame_equal(series.drop(columns=["run"]), res.series, check_categorical=False)
    pd.testing.assert_frame_equal(loaded.run().flows, res.flows)
    with pytest.raises(WavelabError, match="vary no seed"):
        _ = loaded.seeds
    assert "LoadedResults(run 'tiny', 1 run," in repr(loaded)


def test_a_reproductions_folder_holds_a_study_store(tmp_path: Path) -> None:
    f = tmp_path / "tiny.toml"
    f.write_text(SWEEP)
    sweep = load_sweep(f)
    runs = {"cubic": StudyRun(sweep.point(2).scenario), "reno": StudyRun(sweep.point(0).scenario)}
    done = run_study("t", runs, tmp_path / "repro" / "store", LocalPool(1), False, quiet)
    res = wavelab.load_results(tmp_path / "repro")
    assert res.kind == "study" and res.name == "t" and res.params == ["run_name"]
    assert list(res.runs["run_name"].cat.categories) == ["cubic", "reno"]
    assert list(res.runs["run"]) == [done.keys["cubic"], done.keys["reno"]]
    pd.testing.assert_frame_equal(res.run(run_name="reno").series, done.results["reno"].series)
    flows = res.flows()
    assert list(flows.columns[:2]) == ["run_name", "run"] and len(flows) == 2
    assert list(flows["name"]) == ["f", "f"]
    (tmp_path / "repro" / "store-2").mkdir()
    shutil.copy(tmp_path / "repro" / "store" / "study.json", tmp_path / "repro" / "store-2")
    with pytest.raises(WavelabError, match=r"holds 2 stores \(store, store-2\); load one"):
        wavelab.load_results(tmp_path / "repro")


def test_bad_inputs_are_named(store: Path, tmp_path: Path) -> None:
    with pytest.raises(WavelabError, match="no such folder"):
        wavelab.load_results(tmp_path / "nowhere")
    (tmp_path / "file").write_text("x")
    with pytest.raises(WavelabError, match="is a file"):
        wavelab.load_results(tmp_path / "file")
    (tmp_path / "empty").mkdir()
    with pytest.raises(WavelabError, match="no results here"):
        wavelab.load_results(tmp_path / "empty")
    with pytest.raises(WavelabError, match="a file path"):
        wavelab.load_results(3)  # type: ignore[arg-type]
    res = wavelab.load_results(store)
    with pytest.raises(WavelabError, match="the series table has no column 'nope'; it has time"):
        res.series(["time", "nope"])
    with pytest.raises(WavelabError, match="a run has no table 'seris'; its tables are series,"):
        res.table("seris")
    assert list(res.series("cwnd").columns) == ["point", "cc", "seed", "run", "cwnd"]
    with pytest.raises(WavelabError, match=r"'flows\[1\].cc' is not a parameter"):
        res.series(**{"flows[1].cc": "reno"})


BASE = tomllib.loads(SWEEP.split("[sweep]")[0])


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (["cc"], 'sweep.names: must be a table of short names, e.g. .* not \\["cc"\\]'),
        ({"flow cc": "flows[0].cc"}, "sweep.names.\"flow cc\": 'flow cc' is not usable"),
        ({"for": "flows[0].cc"}, "sweep.names.for: 'for' is not usable as a name"),
        ({"run": "flows[0].cc"}, "sweep.names.run: 'run' is a column of the runs table"),
        ({"cc": 3}, "sweep.names.cc = 3: the value must be the path of a parameter"),
        (
            {"cc": "flows[1].cc"},
            'sweep.names.cc = "flows\\[1\\].cc": not a parameter of this sweep; it varies '
            "flows\\[0\\].cc, seed",
        ),
        (
            {"cc": "flows[0].cc", "algo": "flows[0].cc"},
            "sweep.names.algo: \"flows\\[0\\].cc\" is named 'cc' already",
        ),
        ({"seed": "flows[0].cc"}, "sweep.names.seed: 'seed' is another parameter"),
    ],
)
def test_bad_sweep_names_are_refused_naming_the_entry(names: object, message: str) -> None:
    with pytest.raises(SweepError, match=message):
        from_sweep_dict(
            {**BASE, "sweep": {"flows[0].cc": ["reno", "cubic"], "seeds": 2, "names": names}}
        )


def test_a_sweep_of_names_alone_varies_nothing() -> None:
    with pytest.raises(SweepError, match="the \\[sweep\\] table is empty"):
        from_sweep_dict({**BASE, "sweep": {"names": {}}})


def test_default_names_are_the_last_field_when_unique() -> None:
    shipped = load_sweep("handover-grid")
    assert column_names(shipped.param_names, shipped.names)["links[1].rate"] == "old_rate"
    names = column_names(shipped.param_names, {})
    assert names == {
        "links[1].rate": "links[1].rate",
        "links[1].delay": "links[1].delay",
        "links[1].handovers[0].rate": "links[1].handovers[0].rate",
        "links[1].handovers[0].delay": "links[1].handovers[0].delay",
        "links[1].handovers[0].at": "at",
        "flows[0].count": "count",
        "flows[0].cc": "cc",
        "seed": "seed",
    }
    assert column_names(["flows[0].cc", "flows[1].cc"], {"cc": "flows[1].cc"}) == {
        "flows[0].cc": "flows[0].cc",
        "flows[1].cc": "cc",
    }


def test_dir_of_the_package_lists_the_lazy_api_without_importing_it() -> None:
    code = (
        "import sys, wavelab; names = dir(wavelab); "
        "print('load_results' in names, 'run_sweep' in names, 'Results' in names, "
        "'pandas' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True", "True", "False"]


def test_run_json_records_the_code_that_made_it(tmp_path: Path) -> None:
    res = wavelab.run(wavelab.load_scenario(str(ROOT / "scenarios" / "newreno.toml")))
    res.to_parquet(tmp_path / "r")
    code = json.loads((tmp_path / "r" / "run.json").read_text())["code"]
    from wavelab import _native

    assert code["version"] == wavelab.__version__ and code["build"] == _native.build_id
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True
    )
    if head.returncode == 0 and Path(wavelab.__file__).resolve().parents[1] == ROOT / "python":
        assert code["commit"] == head.stdout.strip() and isinstance(code["modified"], bool)
    else:
        assert "commit" not in code


def test_a_table_column_of_a_parameters_name_is_suffixed(store: Path, tmp_path: Path) -> None:
    renamed = tmp_path / "renamed"
    shutil.copytree(store, renamed)
    meta = json.loads((renamed / "sweep.json").read_text())
    meta["names"] = {"time": "flows[0].cc"}
    (renamed / "sweep.json").write_text(json.dumps(meta))
    series = wavelab.load_results(renamed).series(["time", "cwnd"])
    assert list(series.columns) == ["point", "time", "seed", "run", "time_series", "cwnd"]
    assert set(series["time"].astype(str)) == {"reno", "cubic"}
    assert series["time_series"].min() >= 0.0


def test_sweep_list_names_the_parameters_as_the_loaded_results_do(store: Path) -> None:
    res = wavelab_cli("sweep", str(store.parent / "tiny.toml"), "--list")
    assert res.returncode == 0, res.stderr
    header = res.stdout.splitlines()[0].split()
    assert (
        header
        == ["point", *wavelab.load_results(store).params, "run"]
        == [
            "point",
            "cc",
            "seed",
            "run",
        ]
    )
    assert "\nparameters: cc = flows[0].cc\n" in res.stdout
