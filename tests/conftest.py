"""Shared fixtures."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def scenarios_dir() -> Path:
    return ROOT / "scenarios"


SMALL = """
name = "small"
duration = "3s"
seed = 7

[[links]]
between = ["a", "b"]
rate = "10Mbit/s"
delay = "10ms"
queue = "20pkt"
loss = { model = "bernoulli", p = 0.01 }

[[flows]]
from = "a"
to = "b"
log_packets = true
"""


TINY_SWEEP = """
name = "tiny"
duration = "2s"
seed = 1

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
"flows[0].cc" = ["reno", "cubic"]
seeds = 2
"""
"""A sweep of 2 algorithms x 2 seeds of 2 s runs."""


@pytest.fixture
def small_toml() -> str:
    return SMALL


@pytest.fixture
def small_file(tmp_path: Path) -> Path:
    p = tmp_path / "small.toml"
    p.write_text(SMALL)
    return p


def require_tool(name: str, *alternatives: str) -> str:
    """The path of a command-line tool the test needs. Without it the test is
    skipped, except under CI=true, where it fails: CI must run every test."""
    import os
    import shutil

    for n in (name, *alternatives):
        path = shutil.which(n)
        if path:
            return path
    message = (
        f"{name} is not installed (Debian: apt-get install {name}; scripts/test.sh does it as root)"
    )
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true: {message}")
    pytest.skip(message)


LOSSY = """
name = "lossy"
duration = "6s"
seed = 5

[[links]]
name = "access"
between = ["s", "r"]
rate = "100Mbit/s"
delay = "1ms"

[[links]]
name = "bottleneck"
between = ["r", "d"]
rate = "10Mbit/s"
delay = "20ms"
queue = "40pkt"
loss = { model = "bernoulli", p = 0.01 }

[[flows]]
name = "bulk"
from = "s"
to = "d"
cc = "newreno"
log_packets = true
tcp = { sack = true, timestamps = true }
"""


@pytest.fixture
def lossy_file(tmp_path: Path) -> Path:
    p = tmp_path / "lossy.toml"
    p.write_text(LOSSY)
    return p


def wavelab(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Runs the ``wavelab`` command line as a user would, in ``cwd``."""
    return subprocess.run(
        [sys.executable, "-m", "wavelab.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


def as_from_a_terminal() -> None:
    """``preexec_fn`` for a command a test interrupts as Ctrl-C would: SIGINT
    at its default. A process inherits an ignored SIGINT (bash starts a
    background job ``cmd &`` so, and Python then keeps it ignored), and a
    suite started that way would see the command run on through Ctrl-C."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
