"""benches/compare_ns2.sh and compare_ns3.sh, and the figures they print;
benches/pgo.sh is checked for syntax only (it rebuilds the package).

ns-2 and ns-3 are optional tools: their tests skip without them, in CI too
(ns-2 is the Debian package ns2; ns-3 is the PyPI wheel that compare_ns3.sh
installs into its own virtual environment, which must exist already). The
printing of the figures is tested everywhere, on a made-up run."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NS3_VENV = Path(os.environ.get("WAVELAB_NS3_VENV", Path.home() / ".cache" / "wavelab" / "ns3-venv"))


def table_rows(out: str) -> dict[str, list[str]]:
    """The rows of the printed table (name, wall s, data sent, ACKs rcvd,
    packets, packets/wall-s), by name; other lines are ignored."""
    rows = {}
    for line in out.splitlines():
        words = line.split()
        if len(words) == 7 and re.fullmatch(r"[\d.]+", words[1]) and words[6] == "M":
            rows[words[0]] = words
    return rows


def check_figures(out: str, name: str) -> None:
    rows = table_rows(out)
    # both ran the 360 s case: hundreds of thousands of packets each
    assert int(rows[name][4].replace(",", "")) > 100_000
    assert int(rows["wavelab"][4].replace(",", "")) > 100_000
    # with and without the 50 ms series: the same packets
    assert rows["wavelab-series"][2:5] == rows["wavelab"][2:5]
    found = re.search(r"both directions\): ([\d,]+)", out)
    assert found, out
    bottleneck = int(found[1].replace(",", ""))
    counted = int(rows["wavelab"][4].replace(",", ""))
    # the sender's count agrees with the exact bottleneck count within 1 %
    assert abs(bottleneck - counted) < counted / 100
    for label in ("wavelab", "wavelab-series"):
        assert re.search(rf"{label} / {re.escape(name)}: [\d.]+x", out)


def run_script(script: str) -> str:
    res = subprocess.run(
        ["bash", str(ROOT / "benches" / script), "1"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr
    return res.stdout


@pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 (Debian package ns2) not installed")
def test_compare_ns2_prints_both_simulators_and_the_ratio() -> None:
    check_figures(run_script("compare_ns2.sh"), "ns-2.35")


@pytest.mark.skipif(
    not (NS3_VENV / "bin" / "python").exists() or shutil.which("g++") is None,
    reason="no ns-3 environment (run benches/compare_ns3.sh once) or no g++",
)
def test_compare_ns3_prints_both_simulators_and_the_ratio() -> None:
    check_figures(run_script("compare_ns3.sh"), "ns-3.44")


def test_the_ratio_is_of_packets_per_wall_second() -> None:
    # a made-up run of the other simulator: 200,000 packets in 2 s
    line = "sim wall_s 2.0 data_sent 150000 acks_received 50000"
    res = subprocess.run(
        [sys.executable, str(ROOT / "benches" / "compare_with.py"), "other", "1", line, "10"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr
    out = res.stdout
    assert re.search(r"other\s+2\.0000\s+150000\s+50000\s+200,000\s+0\.100 M", out), out
    for label in ("wavelab", "wavelab-series"):
        wl = table_rows(out)[label]
        wall = float(wl[1])
        rate = int(wl[4].replace(",", "")) / wall
        found = re.search(rf"{label} / other: ([\d.]+)x \(target >= 10x\)", out)
        assert found, out
        # the ratio is wavelab's rate over 100,000 packets per second; the
        # bound is what printing allows: the ratio to one decimal, the wall
        # time to four
        ratio = rate / 100_000
        assert abs(float(found[1]) - ratio) <= 0.05 + ratio * 0.00005 / wall + 1e-9


def test_the_pgo_script_parses() -> None:
    res = subprocess.run(
        ["bash", "-n", str(ROOT / "benches" / "pgo.sh")], capture_output=True, text=True
    )
    assert res.returncode == 0, res.stderr
