"""Shared fixtures."""

from __future__ import annotations

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


@pytest.fixture
def small_toml() -> str:
    return SMALL


@pytest.fixture
def small_file(tmp_path: Path) -> Path:
    p = tmp_path / "small.toml"
    p.write_text(SMALL)
    return p
