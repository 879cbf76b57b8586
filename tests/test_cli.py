"""The command line, run as a user would run it."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from conftest import wavelab
from wavelab.cli import build_parser


def test_help_lists_every_command() -> None:
    out = wavelab("--help")
    assert out.returncode == 0
    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert set(commands) == {
        "run",
        "demo",
        "validate",
        "plot",
        "scenarios",
        "algorithms",
        "bench",
        "reproduce",
        "sweep",
        "report",
        "bpf",
        "emulate",
        "compare",
    }
    for c in commands:
        assert c in out.stdout


def test_every_command_names_a_function_that_exists() -> None:
    # the parser imports a command's module only when it runs
    import importlib

    from wavelab.cli import parser

    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    named = {sub.get_default("func").__name__ for sub in commands.values()}
    assert named == set(parser._COMMAND_MODULES)
    for name, module in parser._COMMAND_MODULES.items():
        assert callable(getattr(importlib.import_module(f"wavelab.cli.{module}"), name)), name


def test_run_writes_results_and_plots(small_file: Path, tmp_path: Path) -> None:
    out_dir = tmp_path / "out"
    res = wavelab("run", str(small_file), "--out", str(out_dir), "--quiet")
    assert res.returncode == 0, res.stderr
    for name in [
        "series.parquet",
        "flows.parquet",
        "links.parquet",
        "queues.parquet",
        "packets.parquet",
        "summary.csv",
        "run.json",
        "sequence.png",
        "rate.png",
        "cwnd.png",
        "rtt.png",
    ]:
        f = out_dir / name
        assert f.exists() and f.stat().st_size > 0, name
    assert (out_dir / "sequence.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_run_prints_a_summary_and_accepts_changes(small_file: Path, tmp_path: Path) -> None:
    res = wavelab(
        "run",
        str(small_file),
        "--out",
        str(tmp_path / "o"),
        "--no-plots",
        "--set",
        "flows[0].cc=reno",
        "--set",
        "links[0].rate=2Mbit/s",
    )
    assert res.returncode == 0, res.stderr
    assert "reno" in res.stdout and "goodput_mbps" in res.stdout
    assert not (tmp_path / "o" / "rate.png").exists()


def test_bad_scenario_gives_one_line_error_not_a_traceback(
    small_file: Path, tmp_path: Path
) -> None:
    small_file.write_text(small_file.read_text().replace('"10Mbit/s"', '"8 Mbps/s"'))
    res = wavelab("run", str(small_file), "--out", str(tmp_path / "o"))
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    assert res.stderr.strip() == (
        f'error: {small_file}: links[0].rate: "8 Mbps/s" is not a rate, write e.g. "8Mbit/s"'
    )
    bad_set = wavelab("run", str(small_file), "--set", "seed")
    assert bad_set.returncode == 2 and "Traceback" not in bad_set.stderr


def test_validate_reports_each_file(small_file: Path, tmp_path: Path, scenarios_dir: Path) -> None:
    good = wavelab("validate", *map(str, sorted(scenarios_dir.glob("*.toml"))))
    assert good.returncode == 0, good.stderr
    assert good.stdout.count(": ok") == len(list(scenarios_dir.glob("*.toml")))
    broken = tmp_path / "broken.toml"
    broken.write_text("duration = 3\n")
    bad = wavelab("validate", str(small_file), str(broken))
    assert bad.returncode == 1
    assert "error: " in bad.stderr and "duration: 3 has no unit" in bad.stderr


def test_demo_show_and_plot_command(tmp_path: Path, small_file: Path) -> None:
    show = wavelab("demo", "--show")
    assert show.returncode == 0 and 'name = "demo"' in show.stdout
    out_dir = tmp_path / "r"
    assert (
        wavelab("run", str(small_file), "--out", str(out_dir), "--no-plots", "--quiet").returncode
        == 0
    )
    replot = wavelab("plot", str(out_dir), "--out", str(tmp_path / "plots"))
    assert replot.returncode == 0, replot.stderr
    assert (tmp_path / "plots" / "cwnd.png").exists()
    zoom = wavelab("plot", str(out_dir), "--start", "1", "--end", "2", "--out", str(tmp_path / "z"))
    assert zoom.returncode == 0 and (tmp_path / "z" / "sequence.png").exists()
    reversed_window = wavelab("plot", str(out_dir), "--start", "2", "--end", "1")
    assert reversed_window.returncode == 2 and "is not before" in reversed_window.stderr
    missing = wavelab("plot", str(tmp_path / "nothing"))
    assert missing.returncode == 2 and "no results here" in missing.stderr


def test_bench_prints_figures() -> None:
    res = wavelab(
        "bench", "--case", "dcnet-newreno", "--case", "sweep", "--sweep-runs", "20", "--repeat", "1"
    )
    assert res.returncode == 0, res.stderr
    engine, layer = res.stdout.strip().split("\n\n")
    header, row, note = engine.splitlines()
    assert "hops/s" in header and "peak RSS MB" in header
    assert row.split()[0] == "dcnet-newreno"
    assert row.split()[1] == "360", "the speed issue's 360 s case"
    assert note.startswith("(each case's median run of 1, each in a fresh process; ")
    assert f"dcnet-newreno {row.split()[2]}-{row.split()[2]})" in note, "one run: no range"
    header, row = layer.splitlines()
    assert "runs/s" in header and "outside engine" in header
    assert row.split()[:2] == ["sweep", "20"]
    bad = wavelab("bench", "--case", "nothing")
    assert bad.returncode == 2 and "not a benchmark" in bad.stderr


def test_builtin_scenarios_can_be_listed_printed_and_run(tmp_path: Path) -> None:
    listing = wavelab("scenarios")
    assert listing.returncode == 0
    assert "wave-page-single" in listing.stdout and "dcnet-l2" in listing.stdout
    shown = wavelab("scenarios", "wave-page-single")
    assert 'cc = "wave"' in shown.stdout
    out_dir = tmp_path / "w"
    res = wavelab("run", "wave-page-single", "--set", "duration=5s", "--out", str(out_dir))
    assert res.returncode == 0, res.stderr
    assert (out_dir / "algorithm.png").exists(), "Wave's state is plotted"
    unknown = wavelab("run", "no-such-scenario")
    assert unknown.returncode == 2 and "built-in" in unknown.stderr


def stored_run(out: Path, name: str) -> Path:
    """Where a reproduction's store keeps run ``name`` (study.json names the keys)."""
    keys = json.loads((out / "store" / "study.json").read_text())["runs"]
    return out / "store" / "runs" / keys[name]


def test_reproduce_wave_page_quick(tmp_path: Path) -> None:
    out_dir = tmp_path / "wp"
    res = wavelab("reproduce", "wave-page", "--quick", "--out", str(out_dir))
    assert res.returncode == 0, res.stderr
    table = (out_dir / "comparison.csv").read_text()
    assert "about 5 Mbit/s each" in table
    for fig in [
        "fig1_bursts",
        "fig2_txtime",
        "fig3_rtt",
        "fig4_sequence",
        "fig5_rates_wave",
        "fig6_rates_bbr",
        "fig7_rates_cubic",
        "fig8_rtt",
    ]:
        assert (out_dir / f"{fig}.png").exists(), fig
    assert (stored_run(out_dir, "fairness-bbr") / "series.parquet").exists()
    listing = wavelab("reproduce", "--list")
    assert "wave-page" in listing.stdout
    bad = wavelab("reproduce", "nothing")
    assert bad.returncode == 2 and "not an experiment" in bad.stderr


def test_reproduce_dcnet2016_quick(tmp_path: Path) -> None:
    out_dir = tmp_path / "dcnet"
    res = wavelab("reproduce", "dcnet2016", "--quick", "--out", str(out_dir))
    assert res.returncode == 0, res.stderr
    # our table beside the paper's, on stdout and on disk
    assert "ours / paper" in res.stdout
    assert "/ 267" in res.stdout, "NewReno L1L2 HT=2 s: the paper's 267 s"
    table = (out_dir / "recovery.csv").read_text().splitlines()
    assert table[0].startswith("variant,ht_s,direction,handover_s,paper_s,goodput_s")
    assert len(table) == 1 + 4, "Wave and NewReno, HT = 2 s, both directions"
    assert "| Wave" in (out_dir / "table1.md").read_text()
    for fig in [
        "fig2_newreno_l1l2",
        "fig3_wave_l1l2",
        "fig4_newreno_l2l1",
        "fig5_wave_l2l1",
        "fig6_rate_l1l2",
        "fig7_rate_l2l1",
    ]:
        assert (out_dir / f"{fig}.png").exists(), fig
    # the raw series are kept for other definitions of recovery
    assert (stored_run(out_dir, "newreno-L1L2-ht2") / "series.parquet").exists()
    assert (stored_run(out_dir, "newreno-L1L2-ht2") / "queues.parquet").exists()


def test_bench_scaling_writes_a_table_and_a_plot(tmp_path: Path) -> None:
    res = wavelab("bench", "--scaling", str(tmp_path / "s"), "--quick", "--repeat", "1")
    assert res.returncode == 0, res.stderr
    table = pd.read_csv(tmp_path / "s" / "scaling.csv")
    assert list(table["series"].unique()) == ["flows", "rate", "time"]
    flows = table[table["series"] == "flows"].set_index("x")
    # more flows, more packets in the same simulated time
    assert flows.loc[100, "packet_hops"] > flows.loc[1, "packet_hops"]
    rate = table[table["series"] == "rate"].set_index("x")
    assert rate.loc[100, "packet_hops"] > 5 * rate.loc[1, "packet_hops"]
    time_ = table[table["series"] == "time"].set_index("x")
    assert list(time_["simulated_s"]) == [45.0, 90.0]
    assert (table["peak_rss_mb"] >= table["base_rss_mb"]).all()
    png = (tmp_path / "s" / "scaling.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    bad = wavelab("bench", "--quick")
    assert bad.returncode == 2 and "--quick goes with --scaling" in bad.stderr


def test_a_directory_named_like_a_builtin_scenario_does_not_hide_it(tmp_path: Path) -> None:
    (tmp_path / "wave-page-single").mkdir()  # e.g. an earlier run's --out
    res = wavelab(
        "run", "wave-page-single", "--set", "duration=2s", "--no-plots", "--out", "o", cwd=tmp_path
    )
    assert res.returncode == 0, res.stderr
    (tmp_path / "not-a-scenario").mkdir()
    bad = wavelab("run", "not-a-scenario", cwd=tmp_path)
    assert bad.returncode == 2 and "not-a-scenario: cannot be read" in bad.stderr
