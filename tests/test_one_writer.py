"""One writer per output folder: every command that writes into or clears a
folder takes its lock, a second writer is refused with the holder's pid and
command line, and a sweep checks at its end that its store is whole.

The holders are real processes paused at a point the test chooses: a
``wavelab run`` whose Python congestion control waits for a file, and a
sweep whose backend waits for one after its first run is stored (the state
in which ``wavelab run --out D --force`` used to delete a sweep's index and
run folders while the sweep went on to report success)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from conftest import SMALL
from wavelab import _native, cli
from wavelab._util import folder_lock
from wavelab.sweep import store as store_module
from wavelab.sweep.store import Store

SWEEP = SMALL.replace('duration = "3s"', 'duration = "1s"') + "\n[sweep]\nseeds = 4\n"

EMULATED = """
name = "e"
duration = "1s"
[[links]]
between = ["a", "b"]
rate = "10Mbit/s"
delay = "10ms"
[[flows]]
from = "a"
to = "b"
cc = "cubic"
"""

GATED_CC = """
import os, time
import wavelab

@wavelab.congestion_control("gated")
class Gated:
    def __init__(self, start):
        self.cwnd = 10 * start.mss
        self.ssthresh = None
        self.acks = 0

    def on_ack(self, now, ack):
        self.acks += 1
        if self.acks == 1:
            open({ready!r}, "w").close()
            while not os.path.exists({go!r}):
                time.sleep(0.02)

    def on_congestion(self, now, event):
        self.cwnd = max(self.cwnd // 2, 2 * 1460)
"""

GATED_SWEEP = """
import os, sys, time
from pathlib import Path
from wavelab.sweep import load_sweep
from wavelab.sweep.backends import LocalPool
from wavelab.sweep.runner import run_sweep, summary_line

sweep_file, out, ready, go = sys.argv[1:5]


class Gated(LocalPool):
    # pauses after the first run is stored, until the file `go` exists
    def run(self, jobs):
        for i, output in enumerate(super().run(jobs)):
            if i == 1:
                Path(ready).touch()
                while not os.path.exists(go):
                    time.sleep(0.02)
            yield output


o = run_sweep(load_sweep(sweep_file), Path(out), Gated(1), progress=False)
print(summary_line(o))
print("stopped:", o.stopped)
sys.exit(2 if o.stopped else 0)
"""


def wait_for(path: Path, proc: subprocess.Popen[str]) -> None:
    """Waits until ``proc`` creates ``path`` (fails if it ends first)."""
    while not path.exists():
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"the holder ended early ({proc.returncode}): {out}{err}")
        time.sleep(0.02)


class Holder:
    """A process paused while it holds ``out``; :meth:`go` lets it finish."""

    def __init__(self, proc: subprocess.Popen[str], out: Path, go: Path, command: str) -> None:
        self.proc, self.out, self.go_file, self.command = proc, out, go, command

    def go(self) -> tuple[int, str, str]:
        self.go_file.touch()
        out, err = self.proc.communicate(timeout=600)
        return self.proc.returncode, out, err


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "s.toml").write_text(SMALL)
    (tmp_path / "sweep.toml").write_text(SWEEP)
    (tmp_path / "e.toml").write_text(EMULATED)
    return tmp_path


def start_run(files: Path, out: Path) -> Holder:
    ready, go = files / "run-ready", files / "run-go"
    (files / "gated.py").write_text(GATED_CC.format(ready=str(ready), go=str(go)))
    args = [
        sys.executable,
        "-m",
        "wavelab.cli",
        "run",
        str(files / "s.toml"),
        "--set",
        "flows[0].cc=gated",
        "--cc-file",
        str(files / "gated.py"),
        "--out",
        str(out),
        "--no-plots",
        "--quiet",
    ]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(ready, proc)
    return Holder(proc, out, go, "-m wavelab.cli run")


def start_sweep(files: Path, out: Path) -> Holder:
    ready, go = files / "sweep-ready", files / "sweep-go"
    (files / "gated_sweep.py").write_text(GATED_SWEEP)
    args = [
        sys.executable,
        str(files / "gated_sweep.py"),
        str(files / "sweep.toml"),
        str(out),
        str(ready),
        str(go),
    ]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(ready, proc)
    return Holder(proc, out, go, "gated_sweep.py")


@pytest.fixture
def results(files: Path) -> Path:
    """A finished run's results (for the commands that read one)."""
    out = files / "results"
    run = ["run", str(files / "s.toml"), "--out", str(out), "--quiet", "--no-plots"]
    assert cli.main(run) == 0
    return out


@pytest.fixture(scope="module")
def emulated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path | None]:
    """An emulation's results, where this machine can emulate (else None)."""
    if _native.emulation_unavailable() is not None:
        yield None
        return
    d = tmp_path_factory.mktemp("emulated")
    (d / "e.toml").write_text(EMULATED)
    code = cli.main(["emulate", str(d / "e.toml"), "--out", str(d / "out"), "--compare", "--quiet"])
    assert code == 0
    yield d / "out"


def writers(files: Path, results: Path, d: Path, emulated: Path | None) -> dict[str, list[str]]:
    """Every command that writes into (or clears, or reads results from)
    the folder ``d``, by a short name."""
    cmds = {
        "run": ["run", str(files / "s.toml"), "--out", str(d), "--quiet", "--no-plots"],
        "run --force": ["run", "demo", "--out", str(d), "--force", "--quiet", "--no-plots"],
        "demo": ["demo", "--out", str(d), "--quiet"],
        "sweep": ["sweep", str(files / "sweep.toml"), "--out", str(d), "--jobs", "1", "--quiet"],
        "sweep --force": [
            "sweep",
            str(files / "sweep.toml"),
            "--out",
            str(d),
            "--force",
            "--quiet",
        ],
        "reproduce": ["reproduce", "wave-page", "--out", str(d), "--quick"],
        "report": ["report", str(d)],
        "report --out": ["report", str(results), "--out", str(d / "r.html")],
        "plot": ["plot", str(d)],
        "plot --out": ["plot", str(results), "--out", str(d)],
    }
    if emulated is not None:
        cmds["emulate"] = [
            "emulate",
            str(files / "e.toml"),
            "--out",
            str(d),
            "--quiet",
            "--no-plots",
        ]
        cmds["compare (reads)"] = ["compare", str(d), str(emulated)]
        cmds["compare --out"] = ["compare", str(emulated / "simulation"), str(emulated)]
        cmds["compare --out"] += ["--out", str(d)]
    return cmds


def refused_by(holder: Holder, argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(argv)
    err = capsys.readouterr().err
    assert code == 2, (argv, err)
    assert "Traceback" not in err
    assert err.startswith(
        f"error: {holder.out}: another wavelab process is writing here (pid {holder.proc.pid}: "
    ), (argv, err)
    assert holder.command in err, err


@pytest.mark.parametrize("holding", ["sweep", "run"])
def test_a_writer_refuses_every_other_writer_and_finishes_whole(
    files: Path,
    results: Path,
    emulated: Path | None,
    holding: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = files / "held"
    holder = start_sweep(files, out) if holding == "sweep" else start_run(files, out)
    before = sorted(p.name for p in out.iterdir())
    try:
        for name, argv in writers(files, results, out, emulated).items():
            refused_by(holder, argv, capsys)
            # nothing of the holder's was touched, nothing added
            assert sorted(p.name for p in out.iterdir()) == before, name
    finally:
        code, stdout, stderr = holder.go()
    assert code == 0, stderr
    assert not (out / ".lock").exists()  # the holder removed its lock
    if holding == "sweep":
        assert "4 runs ran" in stdout and "stopped: None" in stdout
        with Store(out) as s:
            assert len(s.entries) == 4 and all(s.problem(k) is None for k in s.entries)
    else:
        assert (out / "run.json").exists() and (out / "flows.parquet").exists()


def test_the_run_force_that_deleted_a_sweeps_store_is_refused(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the reproduction: `wavelab run --out D --force` while a sweep wrote D
    # deleted its index and run folders; the sweep exited 0 ("600 runs ran")
    # with 235 of 600 run folders and no index, and ran all again next time
    out = files / "store"
    holder = start_sweep(files, out)
    try:
        refused_by(holder, ["run", "demo", "--out", str(out), "--force", "--quiet"], capsys)
    finally:
        code, stdout, _ = holder.go()
    assert code == 0 and "4 runs ran" in stdout
    assert cli.main(["sweep", str(files / "sweep.toml"), "--out", str(out), "--quiet"]) == 0
    assert "0 runs ran, 4 reused from the store" in capsys.readouterr().err


def test_a_sweep_whose_store_lost_runs_does_not_report_success(files: Path) -> None:
    # another program (not wavelab: it would be refused) removes the index
    # and a run folder while the sweep writes: the sweep says so at its end
    out = files / "store"
    holder = start_sweep(files, out)
    try:
        (first,) = [p for p in (out / "runs").iterdir() if not p.name.startswith(".")]
        (out / "index.jsonl").unlink()
        for f in first.iterdir():
            f.unlink()
        first.rmdir()
    finally:
        code, stdout, stderr = holder.go()
    # the three runs stored after the removal went into the index this
    # process had open, which is no longer in the folder: none is vouched for
    assert code == 2, stdout + stderr
    assert "4 finished runs are no longer in the store" in stdout
    assert "its line in index.jsonl is gone" in stdout
    assert "4 runs ran" in stdout  # what it did, beside the error
    table = pd.read_parquet(out / "runs.parquet")
    assert list(table["status"]) == ["pending"] * 4
    # the next start runs them again and ends whole
    assert cli.main(["sweep", str(files / "sweep.toml"), "--out", str(out), "--quiet"]) == 0
    with Store(out) as s:
        assert len(s.entries) == 4 and all(s.problem(k) is None for k in s.entries)


def test_a_run_folder_whose_files_shrank_is_not_whole(tmp_path: Path) -> None:
    # the end check compares each file with the size the index recorded
    out = tmp_path / "store"
    (tmp_path / "sweep.toml").write_text(SWEEP)
    assert cli.main(["sweep", str(tmp_path / "sweep.toml"), "--out", str(out), "--quiet"]) == 0
    with Store(out) as s:
        keys = list(s.entries)
        victim = s.run_dir(keys[0]) / "flows.parquet"
        victim.write_bytes(victim.read_bytes()[:10])
        lost = s.lost(keys)
    assert list(lost) == [keys[0]]
    assert "flows.parquet has 10 bytes" in lost[keys[0]]


def test_every_writer_takes_the_lock_of_its_output_folder(
    files: Path,
    results: Path,
    emulated: Path | None,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # with the refusals above, this makes every pair of writers exclusive:
    # each takes the lock, and each is refused while another process holds it
    taken: list[Path] = []
    real = folder_lock.acquire

    def recording(folder: Path) -> None:
        taken.append(Path(os.path.realpath(folder)))
        real(folder)

    monkeypatch.setattr(folder_lock, "acquire", recording)
    monkeypatch.setattr(store_module, "acquire", recording)
    for name, argv in writers(files, results, files / "target", emulated).items():
        if name == "compare (reads)":
            continue  # it reads the folder (checked above) and writes elsewhere
        if name in ("report", "plot"):
            # they write into the folder they read: give them results there
            target = files / "target"
            run = ["run", str(files / "s.toml"), "--out", str(target), "--quiet", "--no-plots"]
            assert cli.main(run) == 0
        taken.clear()
        code = cli.main(argv)
        err = capsys.readouterr().err
        assert code == 0, (name, err)
        assert Path(os.path.realpath(files / "target")) in taken, (name, taken)
        assert not (files / "target" / ".lock").exists(), name
        shutil.rmtree(files / "target")


def test_a_killed_holder_leaves_the_folder_free(files: Path) -> None:
    # flock dies with its process: kill -9 leaves no stale lock
    out = files / "held"
    holder = start_run(files, out)
    holder.proc.send_signal(signal.SIGKILL)
    holder.proc.communicate()
    assert cli.main(["run", str(files / "s.toml"), "--out", str(out), "--quiet", "--no-plots"]) == 0


def test_a_refused_command_leaves_no_folder_behind(
    files: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = files / "new"
    (files / "bad.toml").write_text(SMALL.replace('rate = "10Mbit/s"', 'rate = "fast"'))
    code = cli.main(["run", str(files / "bad.toml"), "--out", str(out), "--quiet"])
    assert code == 2 and not out.exists()
    (files / "other").mkdir()
    (files / "other" / "run.json").write_text("{}")
    code = cli.main(["run", str(files / "s.toml"), "--out", str(files / "other"), "--quiet"])
    assert code == 2 and "choose another --out" in capsys.readouterr().err
    assert sorted(p.name for p in (files / "other").iterdir()) == ["run.json"]


def test_the_lock_is_reentrant_in_a_process_and_not_across_a_fork(tmp_path: Path) -> None:
    d = tmp_path / "d"
    with folder_lock.folder_lock(d), folder_lock.folder_lock(d), Store(d):
        assert folder_lock.holds(d)
        pid = os.fork()
        if pid == 0:  # the child is another process: refused
            try:
                folder_lock.acquire(d)
                os._exit(1)
            except folder_lock.FolderBusyError:
                os._exit(0)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert (d / ".lock").exists()
    assert not folder_lock.holds(d) and not (d / ".lock").exists()
