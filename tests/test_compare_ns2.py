"""benches/compare_ns2.sh, when ns-2 is installed (it is an optional tool:
this test skips without it, in CI too)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 (Debian package ns2) not installed")
def test_compare_ns2_prints_both_simulators_and_the_ratio() -> None:
    res = subprocess.run(
        ["bash", str(ROOT / "benches" / "compare_ns2.sh"), "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr
    out = res.stdout
    rows = {line.split()[0]: line.split() for line in out.splitlines()[1:3]}
    # both ran the 360 s case: hundreds of thousands of packets each
    assert int(rows["ns-2.35"][4].replace(",", "")) > 100_000
    assert int(rows["wavelab"][4].replace(",", "")) > 100_000
    bottleneck = int(re.search(r"both directions\): ([\d,]+)", out)[1].replace(",", ""))
    counted = int(rows["wavelab"][4].replace(",", ""))
    # the sender's count agrees with the exact bottleneck count within 1 %
    assert abs(bottleneck - counted) < counted / 100
    assert re.search(r"wavelab / ns-2\.35: [\d.]+x", out)
