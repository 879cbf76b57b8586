"""What a newcomer meets first: options taken only as spelled, ``--out``
refusing a folder that is not wavelab's, and terminal tables in plain
numbers with a word for what was never reached."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import SMALL, wavelab
from wavelab._util.table_text import BULK, NOT_REACHED, plain, table_text
from wavelab.cli import build_parser

SHORT = SMALL.replace('duration = "3s"', 'duration = "1s"')


def _one_error_line(res: subprocess.CompletedProcess[str]) -> str:
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    lines = res.stderr.strip().splitlines()
    return lines[-1]


@pytest.mark.parametrize(
    ("argv", "unknown"),
    [
        (["reproduce", "wave-page", "--quic"], "--quic"),
        # `run` has --cc-file: with abbreviations --cc cubic ran cubic.py as a file
        (["run", "cubic", "--cc", "cubic"], "--cc"),
        (["sweep", "x.toml", "--clust", "tcp://h:1"], "--clust"),
        (["plot", "d", "--del", "rtt_p50_ms"], "--del"),
    ],
)
def test_an_abbreviated_option_is_refused(
    argv: list[str], unknown: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert f"unrecognized arguments: {unknown}" in err, err


def test_options_spelled_in_full_still_parse() -> None:
    args = build_parser().parse_args(["reproduce", "wave-page", "--quick", "--jobs", "1"])
    assert args.quick and args.jobs == 1
    args = build_parser().parse_args(["run", "cubic", "--cc-file", "a.py", "--no-plots"])
    assert args.cc_file == ["a.py"] and args.no_plots


def _foreign(tmp_path: Path) -> Path:
    d = tmp_path / "scenarios"
    d.mkdir()
    for name in ("a.toml", "b.toml", "c.toml", "d.toml"):
        (d / name).write_text("# not results\n")
    return d


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "s.toml", "--no-plots", "--quiet"],
        ["run", "s.toml", "--no-plots", "--quiet", "--force"],
        ["demo", "--quiet"],
        ["sweep", "sw.toml", "--quiet"],
        ["reproduce", "wave-page", "--quick"],
    ],
    ids=["run", "run-force", "demo", "sweep", "reproduce"],
)
def test_out_refuses_a_folder_that_is_not_wavelabs(tmp_path: Path, argv: list[str]) -> None:
    (tmp_path / "s.toml").write_text(SHORT)
    (tmp_path / "sw.toml").write_text(SHORT + "\n[sweep]\nseeds = 2\n")
    d = _foreign(tmp_path)
    res = wavelab(*argv, "--out", "scenarios", cwd=tmp_path)
    assert _one_error_line(res) == (
        "error: scenarios is not empty and holds nothing of wavelab's (a.toml, b.toml, "
        "c.toml and 1 more); choose a new or empty folder for --out"
    )
    assert sorted(p.name for p in d.iterdir()) == ["a.toml", "b.toml", "c.toml", "d.toml"]


def test_bench_scaling_and_plot_refuse_a_foreign_folder(tmp_path: Path) -> None:
    _foreign(tmp_path)
    res = wavelab("bench", "--scaling", "scenarios", "--quick", cwd=tmp_path)
    assert "holds nothing of wavelab's" in _one_error_line(res)
    (tmp_path / "s.toml").write_text(SHORT)
    run = ["run", "s.toml", "--out", "r", "--quiet", "--no-plots"]
    assert wavelab(*run, cwd=tmp_path).returncode == 0
    res = wavelab("plot", "r", "--out", "scenarios", cwd=tmp_path)
    assert "holds nothing of wavelab's" in _one_error_line(res)


def test_a_folder_of_wavelabs_results_is_reused_as_before(tmp_path: Path) -> None:
    # a user's note beside a run's results: the run's folder, so running the
    # same scenario again replaces the results and keeps the note
    (tmp_path / "s.toml").write_text(SHORT)
    run = ["run", "s.toml", "--out", "r", "--no-plots", "--quiet"]
    assert wavelab(*run, cwd=tmp_path).returncode == 0
    (tmp_path / "r" / "notes.txt").write_text("mine")
    again = wavelab(*run, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "r" / "notes.txt").read_text() == "mine"
    # an empty folder, or one with hidden files only, is free
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / ".keep").write_text("")
    res = wavelab("run", "s.toml", "--out", "e", "--no-plots", "--quiet", cwd=tmp_path)
    assert res.returncode == 0, res.stderr


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1580.3, "1580"),
        (158049.7, "158050"),
        (9.66812, "9.668"),
        (0.005643, "0.005643"),
        (1.76e-13, "0"),
        (-2.5e-9, "0"),
        (0.0, "0"),
        (282, "282"),
        (np.int64(12), "12"),
        (np.float64(104.1), "104.1"),
        (math.nan, "-"),
        (math.inf, "-"),
        ("cubic", "cubic"),
    ],
)
def test_plain_numbers_have_no_exponent(value: object, text: str) -> None:
    assert plain(value) == text


def test_a_table_says_not_reached_for_a_time_that_never_came() -> None:
    frame = pd.DataFrame(
        {
            "flow": ["a", "b"],
            "goodput_kbps": [1580.3, 1.76e-13],
            "completion_s": [2.5, math.nan],
            "recovery_s": [math.inf, 0.75],
            "rtt_p95_ms": [math.nan, 104.1],
        }
    )
    text = table_text(frame)
    lines = text.splitlines()
    assert lines[0].split() == ["flow", "goodput_kbps", "completion_s", "recovery_s", "rtt_p95_ms"]
    assert "NaN" not in text and "inf" not in text and "e+" not in text and "e-" not in text
    a, b = lines[1], lines[2]
    assert a.split()[:3] == ["a", "1580", "2.5"] and a.endswith("-")
    assert f"{NOT_REACHED}" in a  # the recovery that never came
    assert b.split()[:2] == ["b", "0"] and NOT_REACHED in b and b.split()[-1] == "104.1"
    # the columns are named, not guessed, when the caller says which they are
    assert NOT_REACHED not in table_text(frame, not_reached=())


def test_a_runs_summary_prints_plain_numbers(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(SHORT)
    res = wavelab("run", "s.toml", "--out", "r", "--no-plots", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    table = res.stdout.split("run: bottleneck")[0]
    assert "goodput_mbps" in table and "rtt_p95_ms" in table
    for bad in ("NaN", "inf", "e+", "e-0"):
        assert bad not in table, table


def test_a_bulk_flow_has_no_completion_and_a_sized_one_is_not_reached(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import tomllib

    from wavelab.cli.run_commands import _print_summary

    flows = """
[[flows]]
name = "bulk"
from = "a"
to = "b"

[[flows]]
name = "short"
from = "a"
to = "b"
size = "20KB"

[[flows]]
name = "long"
from = "a"
to = "b"
size = "100MB"
"""
    text = SHORT.split("[[flows]]")[0] + flows
    import wavelab as api

    res = api.run(api.from_dict(tomllib.loads(text)), progress=False)
    _print_summary(res)
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:4]}
    # a bulk flow sends until the run ends: nothing to reach; a sized flow
    # that finished has its time; one that did not is "not reached"
    assert rows["bulk"].endswith(f" {BULK}") and NOT_REACHED not in rows["bulk"]
    done = float(rows["short"].split()[-1])
    assert 0 < done < 1.0
    assert rows["long"].endswith(f" {NOT_REACHED}")


def test_a_status_line_shows_on_a_terminal_only(tmp_path: Path) -> None:
    # writing a run's tables and plots takes seconds after its bar ends: a terminal is
    # told what is happening; a log (a pipe) gets the results alone
    import os
    import pty
    import sys

    (tmp_path / "s.toml").write_text(SHORT)
    leader, follower = pty.openpty()
    try:
        res = subprocess.run(
            [sys.executable, "-m", "wavelab.cli", "run", "s.toml", "--out", "r", "--no-plots"],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=follower,
            text=True,
            timeout=120,
        )
        os.close(follower)
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal's other end is closed: all read
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(leader)
    assert res.returncode == 0
    assert "writing the tables to r/ ..." in seen.decode(errors="replace")
    piped = wavelab("run", "s.toml", "--out", "r", "--no-plots", cwd=tmp_path)
    assert piped.returncode == 0 and "writing the" not in piped.stderr, piped.stderr
