"""The handover bake-off (``wavelab reproduce handover-bakeoff``): its quick
form's tables and figure, resumption, and what no approach can beat."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from wavelab import cli
from wavelab.experiments import handover_bakeoff as bakeoff


def test_the_quick_bakeoff_writes_its_tables_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "b"
    assert cli.main(["reproduce", "handover-bakeoff", "--quick", "--out", str(out)]) == 0
    runs = pd.read_csv(out / "runs.csv")
    assert len(runs) == len(bakeoff.handoffs(quick=True)) * len(bakeoff.ROWS)
    # DCNET's handoffs leave no link up for 2 s (the old one is gone, the
    # new one disconnected): no approach delivers anything in that time
    dcnet = runs[runs["case"].str.startswith("dcnet-")]
    assert (dcnet["interruption_s"] >= 2.0 - bakeoff.INTERVAL).all(), dcnet
    assert (runs["retransmitted_kb"] >= 0).all()
    summary = pd.read_csv(out / "summary.csv")
    assert list(summary["row"]) == list(bakeoff.ROWS)
    for name in ("bakeoff.png", "summary.md"):
        assert (out / name).stat().st_size > 0
    capsys.readouterr()
    assert cli.main(["reproduce", "handover-bakeoff", "--quick", "--out", str(out)]) == 0
    assert "0 to run" in capsys.readouterr().err
    assert pd.read_csv(out / "runs.csv").equals(runs)


def test_each_mptcp_row_has_a_subflow_per_access_link() -> None:
    case = bakeoff.dcnet("L1L2")
    for row, spec in bakeoff.ROWS.items():
        data = bakeoff.scenario(case, row).normalized
        bulk, ping = data["flows"]
        assert ping["transport"] == "ping"
        assert bulk["tcp"]["sack"] is spec["sack"]
        assert (bulk.get("mptcp") is None) == ("mptcp" not in spec)
        # DCNET's buffers on both access links
        assert data["links"][3]["queue"] == data["links"][4]["queue"] == "100pkt"


def test_the_longest_gap_counts_from_the_handoff() -> None:
    s = pd.Series([0, 10, 10, 10, 20, 30, 30], index=[9.0, 10.0, 10.5, 11.0, 11.5, 12.0, 12.5])
    assert bakeoff.longest_gap(s, 10.0) == 1.5
    assert bakeoff.longest_gap(s, 11.5) == 0.5
