"""The Starlink-like LEO study (``wavelab reproduce starlink``): its quick
form's tables, checks and figures, resumption, and the measurements it
makes from a run."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from wavelab import cli
from wavelab.experiments import starlink


def test_the_quick_study_writes_its_tables_and_figures_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "st"
    assert cli.main(["reproduce", "starlink", "--quick", "--out", str(out)]) == 0
    runs = pd.read_csv(out / "runs.csv")
    form = starlink.QUICK
    assert len(runs) == len(starlink.ALGORITHMS) * len(starlink.DIRECTIONS) * len(form.seeds)
    # every run used part of its drawn capacity, none more than all of it
    assert ((runs["utilisation"] > 0) & (runs["utilisation"] <= 1)).all()
    summary = pd.read_csv(out / "summary.csv")
    assert set(summary["seeds"]) == {len(form.seeds)}
    assert summary["goodput_mbps_ci95"].notna().all()
    checks = pd.read_csv(out / "comparison.csv")
    assert len(checks) == 3
    order, ratio = checks["wavelab"][:2], checks["wavelab"][2]
    assert all(str(c).endswith(("holds", "does not hold")) for c in order)
    assert str(ratio).endswith(("within", "outside"))
    for name in ("min_rtt.png", "goodput.png", "summary.md"):
        assert (out / name).stat().st_size > 0
    # started again, it runs nothing and measures the same
    capsys.readouterr()
    assert cli.main(["reproduce", "starlink", "--quick", "--out", str(out)]) == 0
    assert "0 to run" in capsys.readouterr().err
    assert pd.read_csv(out / "runs.csv").equals(runs)


def test_a_confidence_interval_is_students_t_over_the_seeds() -> None:
    rows = pd.DataFrame(
        {
            "algorithm": ["bbr"] * 3,
            "direction": ["downlink"] * 3,
            "goodput_mbps": [10.0, 12.0, 14.0],
            "utilisation": [0.5, 0.5, 0.5],
            "rto_expiries": [1, 2, 3],
        }
    )
    s = starlink.summarise(rows).iloc[0]
    assert s["goodput_mbps"] == 12.0
    # sd 2, n 3: t(0.975, 2) x 2 / sqrt(3)
    assert abs(float(s["goodput_mbps_ci95"]) - 4.303 * 2 / 3**0.5) < 1e-9
    assert s["utilisation_ci95"] == 0.0
