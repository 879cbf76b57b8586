"""A reproduction killed with SIGKILL part-way (its process group: the
command and its workers, nothing cleaned up) and started again resumes:
the second start reuses every run the first one stored, runs the rest, and
writes the same tables, figures and files, byte for byte, as a reproduction
that was never interrupted."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

STORE = {"mobiwac2009": "sweep"}
"""Where each study keeps its runs under its output directory (else ``store``)."""

SLOW = {"wave-page", "dcnet2016", "satwlan", "mobiwac2009"}
"""Studies whose quick form takes more than about ten seconds, run with ``-m slow``."""

STUDIES = ["wsc-tcp", "wave-page", "dcnet2016", "satwlan", "mobiwac2009"]


def command(name: str, out: Path, *more: str) -> list[str]:
    code = "import sys; from wavelab.cli import main; sys.exit(main())"
    return [sys.executable, "-c", code, "reproduce", name, "--quick", "--out", str(out), *more]


def stored(index: Path) -> int:
    """Complete lines of a store's index (a kill can leave half a line)."""
    try:
        data = index.read_bytes()
    except OSError:
        return 0
    return data.count(b"\n")


def outputs(out: Path) -> dict[str, bytes]:
    """Every file the study wrote outside its store, by path under ``out``."""
    stores = {"store", "sweep"}
    return {
        str(p.relative_to(out)): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and p.relative_to(out).parts[0] not in stores
    }


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=[pytest.mark.slow] if n in SLOW else []) for n in STUDIES]
)
def test_a_reproduction_killed_part_way_resumes_and_writes_the_same_outputs(
    name: str, tmp_path: Path
) -> None:
    fresh = tmp_path / "fresh"
    done = subprocess.run(command(name, fresh), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    index = STORE.get(name, "store") + "/index.jsonl"
    total = stored(fresh / index)
    assert total > 1

    killed = tmp_path / "killed"
    log = open(tmp_path / "killed.log", "wb")  # noqa: SIM115 (closed below)
    # one run at a time, so that the kill comes between the first and the last
    p = subprocess.Popen(
        command(name, killed, "--jobs", "1"),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 600
        while stored(killed / index) < 1 and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        log.close()
    kept = stored(killed / index)
    assert 1 <= kept < total, (kept, total)

    again = subprocess.run(command(name, killed), capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    reused = int(re.findall(r"(\d+) already in", again.stderr)[0])
    assert reused >= kept
    assert stored(killed / index) >= total  # (a line torn by the kill stays, untrusted)

    want, got = outputs(fresh), outputs(killed)
    assert sorted(got) == sorted(want)
    different = [f for f in want if want[f] != got[f]]
    assert not different, different
