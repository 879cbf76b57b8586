"""No tracebacks: field paths that do not fit, values of the
wrong type, a closed standard output, and `wavelab` alone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, SMALL, wavelab
from wavelab import PathError, WavelabError, from_toml
from wavelab.cli import build_parser
from wavelab.scenario.field_paths import parse_path, set_path

# (--set PATH=VALUE, the whole error line wavelab prints) on the one-flow,
# one-link scenario SMALL; each of these used to be a traceback or serde's
# Rust wording
BAD_SETS = [
    ("flows[1].cc=cubic", "error: --set flows[1].cc: flows has 1 entry, no [1] (index 0)"),
    (
        "flows.cc=cubic",
        "error: --set flows.cc: flows is a list of 1 entry; choose one, e.g. flows[0].cc",
    ),
    (
        "flows[x].cc=cubic",
        "error: --set flows[x].cc: not a field path ([x] is not a list index: an index is "
        "a whole number from 0, e.g. flows[0])",
    ),
    (
        "flows[-1].cc=reno",
        "error: --set flows[-1].cc: not a field path ([-1] is not a list index: an index is "
        "a whole number from 0, e.g. flows[0])",
    ),
    (
        "flows[0]..cc=reno",
        "error: --set flows[0]..cc: not a field path ('' is not a field name); write field "
        'names and list indices, e.g. "flows[0].cc" or "links[1].rate"',
    ),
    (
        "links[0].rate.x=1",
        'error: --set links[0].rate.x: links[0].rate is "10Mbit/s", not a table',
    ),
    (
        "links[0].handovers[0].at=1s",
        "error: --set links[0].handovers[0].at: the scenario has no links[0].handovers, so "
        "there is no links[0].handovers[0]",
    ),
    ("seed[0]=1", "error: --set seed[0]: seed is 7, not a list"),
    (
        "=1",
        "error: --set '': not a field path; write field names and list indices, "
        'e.g. "flows[0].cc" or "links[1].rate"',
    ),
]

BAD_VALUES = [
    ("flows[0].tcp.mss=abc", 'flows[0].tcp.mss: "abc" is not a whole number'),
    ("flows[0].tcp.mss=1.5", "flows[0].tcp.mss: 1.5 is not a whole number"),
    ("seed=-1", "seed: -1 is not a whole number of 0 or more"),
    ("flows[0].count=5000000000", "flows[0].count: 5000000000 is too large (at most 4294967295)"),
    ("flows[0].tcp.sack=maybe", 'flows[0].tcp.sack: "maybe" is not true or false'),
]


def _error_of_set(change: str, small_file: Path, tmp_path: Path) -> str:
    """What `wavelab run --set CHANGE` printed; it must be one error line,
    exit status 2 and nothing written."""
    res = wavelab("run", str(small_file), "--set", change, "--out", str(tmp_path / "o"))
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert not (tmp_path / "o").exists()
    return res.stderr.strip()


@pytest.mark.parametrize(("change", "line"), BAD_SETS)
def test_a_set_path_that_does_not_fit_names_the_path_and_what_exists(
    change: str, line: str, small_file: Path, tmp_path: Path
) -> None:
    assert _error_of_set(change, small_file, tmp_path) == line


@pytest.mark.parametrize(("change", "message"), BAD_VALUES)
def test_a_value_of_the_wrong_type_is_explained_in_plain_words(
    change: str, message: str, small_file: Path, tmp_path: Path
) -> None:
    assert _error_of_set(change, small_file, tmp_path) == f"error: {small_file}: {message}"


def test_with_changes_and_sweeps_share_the_path_setter() -> None:
    sc = from_toml(SMALL)
    for change, line in BAD_SETS:
        path = change.split("=", 1)[0]
        with pytest.raises(PathError) as e:
            sc.with_changes({path: 1})
        assert isinstance(e.value, WavelabError) and isinstance(e.value, LookupError)
        assert f"error: --set {e.value}" == line
    # the same function the sweep files use, so their errors read the same
    from wavelab import sweep

    assert sweep.set_path is set_path and sweep.parse_path is parse_path
    data = {"links": [{"rate": "1Mbit/s"}, {"rate": "2Mbit/s"}]}
    set_path(data, "links[1].rate", "8Mbit/s")
    set_path(data, "links[0].loss.p", 0.01)  # a missing table is created
    assert data == {"links": [{"rate": "1Mbit/s", "loss": {"p": 0.01}}, {"rate": "8Mbit/s"}]}
    with pytest.raises(PathError, match=r"links has 2 entries, no \[2\] \(indices 0 to 1\)"):
        set_path(data, "links[2].rate", "1Mbit/s")


def test_wavelab_alone_prints_the_command_list() -> None:
    res = wavelab()
    assert res.returncode == 0 and res.stderr == ""
    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    for c in commands:
        assert f"    {c}" in res.stdout
    assert res.stdout == wavelab("--help").stdout


def _commands(tmp: Path) -> dict[str, list[str]]:
    """One quick invocation of every command (and of `wavelab` alone), each
    printing more than one line to standard output."""
    small = tmp / "small.toml"
    small.write_text(SMALL)
    sweep = tmp / "sweep.toml"
    sweep.write_text(SMALL.replace('duration = "3s"', 'duration = "1s"') + "\n[sweep]\nseeds = 2\n")
    run_dir = tmp / "run"
    return {
        "": [],
        "--help": ["--help"],
        # (the plots come from `plot` below)
        "run": ["run", str(small), "--out", str(run_dir), "--no-plots"],
        "plot": ["plot", str(run_dir), "--out", str(tmp / "plots")],
        "report": ["report", str(run_dir), "--out", str(tmp / "report.html")],
        "sweep": ["sweep", str(sweep), "--out", str(tmp / "sweep"), "--jobs", "1"],
        "demo": ["demo", "--show"],
        "validate": ["validate", str(small), str(ROOT / "scenarios" / "bbr.toml")],
        "scenarios": ["scenarios"],
        "algorithms": ["algorithms"],
        "reproduce": ["reproduce", "--list"],
        "bench": ["bench", "--case", "dcnet-newreno", "--repeat", "1"],
        "bpf": ["bpf", "--help"],
        # an emulation needs root and wall time; its output path is the
        # run's (_run_and_write), exercised above
        "emulate": ["emulate", "--help"],
        "compare": ["compare", "--help"],
    }


def test_every_command_piped_into_head_ends_quietly(tmp_path: Path) -> None:
    commands = _commands(tmp_path)
    covered = set(build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert covered <= set(commands)
    for name, args in commands.items():
        quoted = " ".join(f"'{a}'" for a in args)
        res = subprocess.run(
            [
                "bash",
                "-c",
                f"'{sys.executable}' -m wavelab.cli {quoted} | head -1; "
                'echo "status ${PIPESTATUS[0]}" >&2',
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert "Traceback" not in res.stderr and "BrokenPipe" not in res.stderr, (name, res.stderr)
        assert res.stderr.strip().splitlines()[-1] == "status 0", (name, res.stderr)
        assert len(res.stdout.splitlines()) == 1, (name, res.stdout)
    # what the runs wrote is all there, although their readers had gone
    assert (tmp_path / "run" / "summary.csv").stat().st_size > 0
    assert (tmp_path / "plots" / "rate.png").stat().st_size > 0
    assert (tmp_path / "sweep" / "runs.parquet").stat().st_size > 0


def test_a_run_whose_stdout_is_closed_from_the_start_writes_everything(
    small_file: Path, tmp_path: Path
) -> None:
    # the harshest case: the reader is gone before the first line
    read, write = os.pipe()
    os.close(read)
    try:
        res = subprocess.run(
            [
                sys.executable,
                "-m",
                "wavelab.cli",
                "run",
                str(small_file),
                "--out",
                str(tmp_path / "o"),
            ],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
        )
    finally:
        os.close(write)
    assert res.returncode == 0 and res.stderr == "", res.stderr
    for name in ["series.parquet", "flows.parquet", "summary.csv", "run.json", "rate.png"]:
        assert (tmp_path / "o" / name).stat().st_size > 0, name
