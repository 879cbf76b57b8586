"""Clean ends on every signal and disk: SIGTERM (and SIGHUP) stop a run as
Ctrl-C does, with its partial results written and the exit code 128 + the
signal; a sweep's workers end with their parent however it ends; and
``report``, ``plot``, ``compare`` and ``run --force`` on a read-only or full
disk say so in one line and leave the folder as it was (or each file whole).
(A sweep stopped by a signal: ``tests/test_store.py``.)"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import SMALL, as_from_a_terminal
from conftest import wavelab as wavelab_cli
from test_one_writer import EMULATED, GATED_CC, wait_for
from test_outputs import fill, small_tmpfs, snapshot
from wavelab import _native

LONG = SMALL.replace('duration = "3s"', 'duration = "100000s"').replace(
    "log_packets = true", "log_packets = false"
)
"""A run far longer than any test waits for."""


def start(args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "wavelab.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_sigterm_stops_a_run_as_ctrl_c_does(tmp_path: Path, sig: int, code: int) -> None:
    # SIGTERM ended `wavelab run` at once with nothing written
    (tmp_path / "long.toml").write_text(LONG)
    out = tmp_path / "out"
    proc = start(["run", str(tmp_path / "long.toml"), "--out", str(out), "--pcap", "flow:flow0"])
    # the capture's file is opened just before the run starts
    while not (out.exists() and list(out.glob(".tmp-flow-flow0.pcap-*"))):
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    time.sleep(0.5)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == code, err
    assert "Traceback" not in err
    assert "interrupted at " in err and f"the partial results were written to {out}" in err
    meta = json.loads((out / "run.json").read_text())
    assert meta["complete"] is False and 0 < meta["run"]["simulated"] < 100_000
    assert (out / "flows.parquet").exists() and (out / "flow-flow0.pcap").exists()
    assert not (out / ".lock").exists()


def test_sigterm_stops_a_run_with_a_python_congestion_control(tmp_path: Path) -> None:
    # with a Python congestion control, SIGTERM wrote nothing, and Ctrl-C
    # was reported as the class's failure ("raised KeyboardInterrupt", exit 2)
    ready, go = tmp_path / "ready", tmp_path / "go"
    (tmp_path / "gated.py").write_text(GATED_CC.format(ready=str(ready), go=str(go)))
    (tmp_path / "s.toml").write_text(SMALL)
    out = tmp_path / "out"
    for sig, code in ((signal.SIGTERM, 143), (signal.SIGINT, 130)):
        ready.unlink(missing_ok=True)
        proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "wavelab.cli", "run", str(tmp_path / "s.toml")),
                *("--set", "flows[0].cc=gated", "--cc-file", str(tmp_path / "gated.py")),
                *("--out", str(out), "--no-plots", "--force"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=as_from_a_terminal,
        )
        wait_for(ready, proc)  # inside the class's first on_ack
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == code, err
        assert "KeyboardInterrupt" not in err and "Traceback" not in err
        assert "interrupted at " in err, err
        meta = json.loads((out / "run.json").read_text())
        assert meta["complete"] is False and "stopped" not in meta["run"]


def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (children, their children, ...)."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        p = todo.pop()
        for task in Path(f"/proc/{p}/task").glob("*"):
            with contextlib.suppress(OSError):
                kids = (task / "children").read_text().split()
                todo += [int(k) for k in kids if int(k) not in found]
                found.update(int(k) for k in kids)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_sweeps_workers_end_when_its_parent_dies(tmp_path: Path, sig: int) -> None:
    # killing only the parent left its workers running indefinitely
    (tmp_path / "sweep.toml").write_text(LONG + "\n[sweep]\nseeds = 4\n")
    proc = start(
        ["sweep", str(tmp_path / "sweep.toml"), "--out", str(tmp_path / "o"), "--jobs", "2"]
    )
    workers: set[int] = set()
    while len(workers) < 2:  # the fork server and its workers
        assert proc.poll() is None, proc.communicate()
        workers = {p for p in descendants(proc.pid) if alive(p)}
        time.sleep(0.05)
    time.sleep(0.5)
    workers = {p for p in descendants(proc.pid) if alive(p)}
    proc.send_signal(sig)
    proc.communicate(timeout=120)
    deadline = time.monotonic() + 120  # a bound on a hang, not on speed
    while any(alive(p) for p in workers):
        assert time.monotonic() < deadline, [p for p in workers if alive(p)]
        time.sleep(0.05)


# ----- read-only and full disks --------------------------------------------------


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[Path]:
    """``path`` made read-only by a read-only bind mount of itself (root only)."""
    if os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root")
    done = subprocess.run(["mount", "--bind", str(path), str(path)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot bind-mount here: {done.stderr.decode().strip()}")
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(path)], check=True)
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=False)


def commands(d: Path, other: Path, emulated: Path | None) -> dict[str, list[str]]:
    cmds = {
        "report": ["report", str(d)],
        "plot": ["plot", str(d)],
        "run --force": ["run", str(other), "--out", str(d), "--force", "--no-plots", "--quiet"],
    }
    if emulated is not None:
        cmds["compare"] = ["compare", str(emulated / "simulation"), str(emulated)]
        cmds["compare"] += ["--out", str(d)]
    return cmds


@pytest.fixture(scope="module")
def emulated(tmp_path_factory: pytest.TempPathFactory) -> Path | None:
    if _native.emulation_unavailable() is not None:
        return None
    d = tmp_path_factory.mktemp("emulated")
    (d / "e.toml").write_text(EMULATED)
    res = wavelab_cli("emulate", str(d / "e.toml"), "--out", str(d / "out"), "--compare", "--quiet")
    assert res.returncode == 0, res.stderr
    return d / "out"


def prepared(tmp: Path) -> tuple[Path, Path]:
    """A scenario to run in a folder of results (``--force`` replaces them),
    and another scenario."""
    (tmp / "s.toml").write_text(SMALL)
    (tmp / "other.toml").write_text(SMALL.replace("seed = 7", "seed = 8"))
    return tmp / "s.toml", tmp / "other.toml"


def test_a_read_only_folder_is_one_line_and_nothing_changes(
    tmp_path: Path, emulated: Path | None
) -> None:
    src, other = prepared(tmp_path)
    d = tmp_path / "results"
    # (no plots: the commands below are refused before any of them draws)
    assert wavelab_cli("run", str(src), "--out", str(d), "--quiet", "--no-plots").returncode == 0
    before = snapshot(d)
    with read_only(d):
        for name, argv in commands(d, other, emulated).items():
            res = wavelab_cli(*argv)
            assert res.returncode == 2, (name, res.stderr)
            assert res.stderr == f"error: {d}: cannot be written: read-only file system\n", name
    assert snapshot(d) == before


def test_a_full_disk_is_one_line_and_leaves_no_file_half_written(
    tmp_path: Path, emulated: Path | None
) -> None:
    src, other = prepared(tmp_path)
    with small_tmpfs(tmp_path / "disk", "4m") as disk:
        d = disk / "results"
        assert wavelab_cli("run", str(src), "--out", str(d), "--quiet").returncode == 0
        before = snapshot(d)
        fill(disk, 0)
        for name, argv in commands(d, other, emulated).items():
            res = wavelab_cli(*argv)
            assert res.returncode == 2, (name, res.stderr)
            assert "Traceback" not in res.stderr and res.stderr.count("\n") == 1, res.stderr
            assert res.stderr.startswith(f"error: {d}") and "no space left on device" in (
                res.stderr
            ), (name, res.stderr)
            after = snapshot(d)
            # nothing added, nothing lost, no temporary file left, none empty
            assert set(after) == set(before), (name, set(after) ^ set(before))
            assert all(after.values()), name
            if name != "plot":  # plots may be drawn again, each whole
                assert after == before, name
