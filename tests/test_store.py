"""The results store: atomic runs, resume after a kill, damaged files
detected and run again, a full disk reported with the finished runs kept."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from conftest import as_from_a_terminal, wavelab
from wavelab import cli
from wavelab._util.folder_lock import this_process
from wavelab.sweep import load_sweep, store
from wavelab.sweep.backends import LocalPool
from wavelab.sweep.runner import run_sweep
from wavelab.sweep.runs_table import TIMINGS
from wavelab.sweep.store import Store, run_key

SWEEP = """
name = "store-test"
duration = "2s"

[[links]]
name = "bottleneck"
between = ["a", "b"]
rate = "10Mbit/s"
delay = "10ms"
queue = "20pkt"
loss = { model = "bernoulli", p = 0.01 }

[[flows]]
name = "f"
from = "a"
to = "b"

[sweep]
seeds = 6
"""

# about a third of a second per run: slow enough to kill a sweep in the middle
SLOW = """
name = "slow"
duration = "8s"

[[links]]
name = "bottleneck"
between = ["a", "b"]
rate = "1Gbit/s"
delay = "5ms"
queue = "2000pkt"
loss = { model = "bernoulli", p = 0.0001 }

[[flows]]
name = "f"
from = "a"
to = "b"
count = 4

[sweep]
seeds = 12
"""


@pytest.fixture
def sweep_file(tmp_path: Path) -> Path:
    p = tmp_path / "sweep.toml"
    p.write_text(SWEEP)
    return p


def quiet_run(sweep_file: Path, out: Path, jobs: int = 1) -> object:
    return run_sweep(
        load_sweep(sweep_file), out, LocalPool(jobs), progress=False, log=lambda m: None
    )


def index_lines(out: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in (out / "index.jsonl").read_text().splitlines() if x.strip()]


def test_keys_change_with_the_scenario_and_the_code() -> None:
    sc = {"duration": "1s", "seed": 1}
    assert run_key(sc, "0.1.0+a") == run_key({"seed": 1, "duration": "1s"}, "0.1.0+a")
    assert run_key(sc, "0.1.0+a") != run_key({**sc, "seed": 2}, "0.1.0+a")
    assert run_key(sc, "0.1.0+a") != run_key(sc, "0.1.0+b")
    assert store.code_version().startswith("0.1.0+") and len(store.code_version()) == 22


def test_runs_are_indexed_with_checksums_of_every_file(sweep_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    o = quiet_run(sweep_file, out)
    assert o.ran == 6 and o.reused == 0  # type: ignore[attr-defined]
    lines = index_lines(out)
    assert len(lines) == 6
    for e in lines:
        d = out / "runs" / str(e["key"])
        files = e["files"]
        assert isinstance(files, dict)
        assert set(files) == {p.name for p in d.iterdir()}
        assert {"series.parquet", "flows.parquet", "run.json"} <= set(files)
    assert not list((out / "runs").glob(".tmp-*"))


def test_damaged_files_are_detected_and_run_again(sweep_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    quiet_run(sweep_file, out)
    table = pd.read_parquet(out / "runs.parquet")
    keys = list(table["run"])
    flipped = out / "runs" / keys[0] / "series.parquet"
    data = bytearray(flipped.read_bytes())
    data[len(data) // 2] ^= 0x40  # same size, one bit changed
    flipped.write_bytes(bytes(data))
    truncated = out / "runs" / keys[1] / "flows.parquet"
    truncated.write_bytes(truncated.read_bytes()[:100])
    (out / "runs" / keys[2] / "run.json").unlink()
    res = wavelab("sweep", str(sweep_file), "--out", str(out), "--jobs", "1")
    assert res.returncode == 0, res.stderr
    assert "6 runs, 3 already in" in res.stderr
    assert f"run {keys[0]} in the store is damaged (series.parquet does not match" in res.stderr
    assert f"run {keys[1]} in the store is damaged (flows.parquet has 100 bytes" in res.stderr
    assert f"run {keys[2]} in the store is damaged (run.json is missing)" in res.stderr
    with Store(out) as s:
        assert all(s.problem(k) is None for k in keys)
    again = pd.read_parquet(out / "runs.parquet")
    pd.testing.assert_frame_equal(
        again.drop(columns=list(TIMINGS)), table.drop(columns=list(TIMINGS))
    )


def test_a_torn_index_line_and_leftovers_of_a_crash_are_handled(
    sweep_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    quiet_run(sweep_file, out)
    lines = (out / "index.jsonl").read_text().splitlines()
    # a kill in the middle of the last append, and of a run's directory write
    (out / "index.jsonl").write_text("\n".join(lines[:-1]) + "\n" + lines[-1][:40])
    (out / "runs" / ".tmp-deadbeef-1-abc").mkdir()
    (out / "runs" / ".tmp-deadbeef-1-abc" / "series.parquet").write_bytes(b"PAR1")
    with Store(out) as s:
        assert s.torn_lines == 1 and len(s.entries) == 5
        assert not list((out / "runs").glob(".tmp-*"))
    res = wavelab("sweep", str(sweep_file), "--out", str(out), "--jobs", "1")
    assert res.returncode == 0, res.stderr
    assert "6 runs, 5 already in" in res.stderr
    assert "ignored 1 incomplete line(s) of the index" in res.stderr
    raw = (out / "index.jsonl").read_text()
    assert raw.splitlines()[-2] == lines[-1][:40], "the torn line stays on its own line"
    with Store(out) as s:
        assert len(s.entries) == 6 and all(s.problem(k) is None for k in s.entries)


def test_a_killed_sweep_resumes_where_it_stopped(tmp_path: Path) -> None:
    f = tmp_path / "slow.toml"
    f.write_text(SLOW)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "wavelab.cli", "sweep", str(f), "--out", str(out), "--jobs", "2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    index = out / "index.jsonl"
    while time.monotonic() < deadline:
        if index.exists() and len(index.read_text().splitlines()) >= 3:
            break
        assert proc.poll() is None, "the sweep ended before it could be killed"
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGKILL)  # the sweep and its workers, mid-run
    proc.wait()
    with Store(out) as s:
        kept = [k for k in s.entries if s.problem(k) is None]
    assert 3 <= len(kept) < 12, f"{len(kept)} runs finished before the kill"
    assert not (out / "runs.parquet").exists()
    res = wavelab("sweep", str(f), "--out", str(out), "--jobs", "2")
    assert res.returncode == 0, res.stderr
    assert f"12 runs, {len(kept)} already in {out}, {12 - len(kept)} to run" in res.stderr
    assert f"{12 - len(kept)} runs ran, {len(kept)} reused" in res.stderr
    table = pd.read_parquet(out / "runs.parquet")
    assert len(table) == 12 and set(table["status"]) == {"ok"}
    assert len(set(table["run"])) == 12


@pytest.mark.parametrize(
    ("how", "code"),
    [
        ("SIGINT to the group", 130),  # what Ctrl-C in a terminal does
        ("SIGTERM to the group", 143),  # timeout(1), a scheduler's job end
        ("SIGTERM to the sweep", 143),  # kill PID
        ("SIGHUP to the group", 129),  # the terminal closed
    ],
)
def test_ctrl_c_and_sigterm_stop_at_once_keep_the_finished_runs_and_resume(
    tmp_path: Path, how: str, code: int
) -> None:
    # SIGTERM used to end the sweep at once, without its table
    f = tmp_path / "slow.toml"
    f.write_text(SLOW)
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "wavelab.cli", "sweep", str(f), "--out", str(out), "--jobs", "2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=as_from_a_terminal,
    )
    index = out / "index.jsonl"
    deadline = time.monotonic() + 120
    while not (index.exists() and len(index.read_text().splitlines()) >= 2):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.02)
    sig = getattr(signal, how.split()[0])
    if how.endswith("group"):
        os.killpg(proc.pid, sig)
    else:
        os.kill(proc.pid, sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: interrupted; ") and "run the same command again" in last
    table = pd.read_parquet(out / "runs.parquet")
    kept = (table["status"] == "ok").sum()
    assert 2 <= kept < 12 and set(table["status"]) == {"ok", "pending"}
    assert f"{kept} of 12 runs are finished and kept" in last
    if how != "SIGINT to the group":
        # what the store holds is checked above; the resume from it is the
        # same whatever signal stopped the sweep (and runs the 12 runs' rest)
        return
    res = wavelab("sweep", str(f), "--out", str(out), "--jobs", "2", "--quiet")
    assert res.returncode == 0 and f"{kept} already in" in res.stderr
    assert set(pd.read_parquet(out / "runs.parquet")["status"]) == {"ok"}


def test_a_full_disk_stops_the_sweep_and_keeps_the_finished_runs(
    sweep_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    real = store._write_file
    calls = {"n": 0}

    def full_after_three_runs(path: Path, data: bytes) -> None:
        # sweep.toml, sweep.json, then 7 files per run (series, flows, links,
        # queues, rtt_distribution, summary, run.json): the disk fills up
        # inside the 4th run
        calls["n"] += 1
        if calls["n"] > 2 + 3 * 7 + 2:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        real(path, data)

    monkeypatch.setattr(store, "_write_file", full_after_three_runs)
    o = quiet_run(sweep_file, out)
    assert o.stopped is not None  # type: ignore[attr-defined]
    msg = o.stopped  # type: ignore[attr-defined]
    assert "no space left on device; stopped the sweep" in msg
    assert "3 of 6 runs are finished and kept" in msg and "run the same command again" in msg
    assert not list((out / "runs").glob(".tmp-*")), "the half-written run is removed"
    with Store(out) as s:
        assert len(s.entries) == 3 and all(s.problem(k) is None for k in s.entries)

    # the CLI says the same in one line, exit code 2
    monkeypatch.setattr(sys, "argv", ["wavelab"])
    code = cli.main(["sweep", str(sweep_file), "--out", str(out), "--jobs", "1", "--quiet"])
    assert code == 2

    monkeypatch.setattr(store, "_write_file", real)
    o = quiet_run(sweep_file, out)
    assert o.stopped is None and o.reused == 3 and o.ran == 3  # type: ignore[attr-defined]


def test_full_disk_message_from_the_cli(
    sweep_file: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    real = store._write_file

    def full(path: Path, data: bytes) -> None:
        if path.name.endswith(".parquet"):
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        real(path, data)

    monkeypatch.setattr(store, "_write_file", full)
    code = cli.main(["sweep", str(sweep_file), "--out", str(tmp_path / "o"), "--jobs", "1"])
    err = capsys.readouterr().err
    assert code == 2
    assert "Traceback" not in err
    line = [x for x in err.splitlines() if x.startswith("error:")]
    assert len(line) == 1
    assert "cannot write run" in line[0] and "no space left on device" in line[0]
    assert "0 of 6 runs are finished and kept" in line[0]


def test_a_second_sweep_into_the_same_directory_is_refused(
    sweep_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    with Store(out):
        res = wavelab("sweep", str(sweep_file), "--out", str(out))
    assert res.returncode == 2
    # the holder named by its pid and command line (this test's)
    assert res.stderr == (
        f"error: {out}: another wavelab process is writing here ({this_process()}); "
        "wait for it to end, or choose another folder\n"
    )
    assert f"pid {os.getpid()}: python" in res.stderr and "pytest" in res.stderr


# ----- the index itself is checked ------------------------------------


def rewrite_line(out: Path, number: int, edit: object) -> dict[str, object]:
    """Replaces line ``number`` (0-based) of the index with ``edit(line)``."""
    path = out / "index.jsonl"
    lines = path.read_text().splitlines()
    old = json.loads(lines[number])
    lines[number] = edit(lines[number])  # type: ignore[operator]
    path.write_text("\n".join(lines) + "\n")
    return dict(old)


def forged(d: dict[str, object]) -> str:
    """An index line with a correct digest: what someone who knows the
    format could write."""
    body = {k: v for k, v in d.items() if k != "digest"}
    return json.dumps({**body, "digest": store._digest(body)}, sort_keys=True)


def test_an_edited_or_damaged_index_line_is_not_trusted(sweep_file: Path, tmp_path: Path) -> None:
    # the store checksummed run files but not the metrics in index.jsonl: an
    # edited number or a bit flip in a key was reused silently
    out = tmp_path / "out"
    quiet_run(sweep_file, out)
    table = pd.read_parquet(out / "runs.parquet")
    first = rewrite_line(
        out, 0, lambda line: line.replace('"goodput_mbps":', '"goodput_mbps":1', 1)
    )
    second = rewrite_line(
        out, 1, lambda line: line.replace(line[9], "f" if line[9] != "f" else "e", 1)
    )
    assert first["key"] != second["key"]
    with Store(out) as s:
        assert len(s.entries) == 4
        assert [why for _, why in s.bad_lines] == [
            "its checksum does not match (it was edited or damaged)"
        ] * 2
    res = wavelab("sweep", str(sweep_file), "--out", str(out), "--jobs", "1")
    assert res.returncode == 0, res.stderr
    assert "6 runs, 4 already in" in res.stderr
    assert "ignored line 1 of" in res.stderr and "its checksum does not match" in res.stderr
    again = pd.read_parquet(out / "runs.parquet")
    pd.testing.assert_frame_equal(
        again.drop(columns=list(TIMINGS)), table.drop(columns=list(TIMINGS))
    )


def test_a_forged_index_line_is_not_trusted(sweep_file: Path, tmp_path: Path) -> None:
    # a forged line with an empty file list was trusted
    out = tmp_path / "out"
    quiet_run(sweep_file, out)
    lines = index_lines(out)
    empty = {**lines[0], "files": {}}
    escaping = {
        **lines[1],
        "files": {**lines[1]["files"], "../../x": {"size": 1, "sha256": "0" * 64}},
    }  # type: ignore[dict-item]
    # run 3's line and files under the key of run 2: each file verifies,
    # but run.json describes another run
    swapped = {**lines[3], "key": lines[2]["key"]}
    runs = out / "runs"
    shutil.rmtree(runs / str(lines[2]["key"]))
    shutil.copytree(runs / str(lines[3]["key"]), runs / str(lines[2]["key"]))
    path = out / "index.jsonl"
    with open(path, "a") as f:
        for d in (empty, escaping):
            f.write(forged(d) + "\n")
    rewrite_line(out, 2, lambda _: forged(swapped))
    with Store(out) as s:
        assert [why for _, why in s.bad_lines] == [
            "it lists no flows.parquet, links.parquet, queues.parquet, run.json, "
            "series.parquet, summary.csv",
            "'../../x' is not a file name of a run",
        ]
        assert s.problem(str(lines[2]["key"])) == "run.json describes another run"
        assert s.problem(str(lines[0]["key"])) is None, "the genuine line still counts"
    res = wavelab("sweep", str(sweep_file), "--out", str(out), "--jobs", "1")
    assert res.returncode == 0, res.stderr
    assert "6 runs, 5 already in" in res.stderr
    assert f"run {lines[2]['key']} in the store is damaged (run.json describes another run)" in (
        res.stderr
    )


def test_an_index_that_is_a_directory_is_a_one_line_error(sweep_file: Path, tmp_path: Path) -> None:
    # `index.jsonl` replaced by a directory gave a traceback
    out = tmp_path / "out"
    (out / "index.jsonl").mkdir(parents=True)
    (out / "sweep.toml").write_text(sweep_file.read_text())
    res = wavelab("sweep", str(sweep_file), "--out", str(out), "--jobs", "1")
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    lines = [x for x in res.stderr.splitlines() if x.startswith("error:")]
    assert len(lines) == 1 and "index.jsonl: cannot be read (Is a directory)" in lines[0], (
        res.stderr
    )


def test_a_sweep_without_tables_keeps_only_index_lines(sweep_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    lean = run_sweep(
        load_sweep(sweep_file), out, LocalPool(1), progress=False, log=lambda m: None, tables=False
    )
    assert lean.ran == 6
    lines = index_lines(out)
    assert len(lines) == 6 and all(e["tables"] is False and e["files"] == {} for e in lines)
    assert not any((out / "runs" / str(e["key"])).exists() for e in lines)
    # the same metrics as a run with its tables
    full = quiet_run(sweep_file, tmp_path / "full")
    cols = ["goodput_mbps", "retransmissions", "jain"]
    pd.testing.assert_frame_equal(lean.table[cols], full.table[cols])  # type: ignore[attr-defined]
    # reused by another lean sweep, run again by one that wants the tables
    again = run_sweep(
        load_sweep(sweep_file), out, LocalPool(1), progress=False, log=lambda m: None, tables=False
    )
    assert again.reused == 6 and again.ran == 0
    tables = quiet_run(sweep_file, out)
    assert tables.ran == 6  # type: ignore[attr-defined]
    assert all((out / "runs" / str(e["key"]) / "flows.parquet").exists() for e in index_lines(out))


def test_an_index_line_without_tables_that_lists_files_is_not_trusted(tmp_path: Path) -> None:
    e = store.Entry(key="0123456789abcdef", code="c", files={}, tables=False)
    assert store._parse_entry(e.to_json()).tables is False
    forged = store.Entry(
        key="0123456789abcdef",
        code="c",
        files={"run.json": {"size": 1, "sha256": "0" * 64}},
        tables=False,
    )
    with pytest.raises(store.BadLineError, match="without tables lists files"):
        store._parse_entry(forged.to_json())
    # a full run's line is as before: no tables field
    full = json.loads(store.Entry(key="0123456789abcdef", code="c", files={}).to_json())
    assert "tables" not in full


def test_index_lines_are_written_at_once_and_fsynced_in_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(store.os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    out = tmp_path / "out"
    with Store(out) as s:
        for i in range(50):
            s.write_run(f"{i:016x}", {}, {"events": i}, {"goodput_mbps": 1.0}, tables=False)
            # each line is in the file (a killed sweep keeps it) as it is written
            assert len(index_lines(out)) == i + 1
        assert synced == [], "no fsync per line"
    assert len(synced) == 1, "one fsync when the store closes"
    with Store(out) as s:
        assert len(s.entries) == 50
    # a line waits at most INDEX_SYNC_SECONDS for its fsync
    monkeypatch.setattr(store, "INDEX_SYNC_SECONDS", 0.0)
    synced.clear()
    with Store(out) as s:
        for i in range(50, 55):
            s.write_run(f"{i:016x}", {}, {}, {}, tables=False)
        assert len(synced) == 5
