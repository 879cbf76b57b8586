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
    for name in ("min_rtt.png", "goodput.png", "reconfiguration.png", "summary.md"):
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


def _leoreplayer_pair(folder: Path, n: int, per_ms: int, delay_ms: float) -> None:
    """A LeoReplayer pair: ``per_ms`` delivery opportunities of 1500 bytes
    each millisecond for 2 s (it repeats), a one-way delay of ``delay_ms``
    then 10 ms more after 1 s (a line per 10 ms)."""
    (folder / f"bw_{n}.txt").write_text("".join(f"{ms}\n" * per_ms for ms in range(1, 2001)))
    delays = [delay_ms] * 100 + [delay_ms + 10] * 100
    (folder / f"delay_{n}.txt").write_text("".join(f"{d}\n" for d in delays))


def test_the_study_runs_over_leoreplayer_traces_instead_of_the_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    traces = tmp_path / "traces"
    traces.mkdir()
    _leoreplayer_pair(traces, 1, 2, 20.0)  # 24 Mbit/s of frames
    _leoreplayer_pair(traces, 7, 1, 30.0)  # 12 Mbit/s
    (traces / "notes.txt").write_text("not a trace")
    out = tmp_path / "lr"
    argv = ["reproduce", "starlink", "--quick", "--traces", str(traces), "--out", str(out)]
    assert cli.main(argv) == 0
    runs = pd.read_csv(out / "runs.csv")
    assert len(runs) == len(starlink.ALGORITHMS) * len(starlink.DIRECTIONS) * 2
    assert sorted(set(runs["trace"])) == [1, 7]
    # each run's capacity is its trace's (the utilisation's denominator)
    assert ((runs["utilisation"] > 0) & (runs["utilisation"] <= 1)).all()
    slow = runs[runs["trace"] == 7]
    assert (slow["goodput_mbps"] < 12).all()
    summary = pd.read_csv(out / "summary.csv")
    assert set(summary["traces"]) == {2}
    assert (out / "min_rtt.png").stat().st_size > 0


def test_a_bad_traces_folder_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def error(*argv: str) -> str:
        assert cli.main(["reproduce", *argv, "--out", str(tmp_path / "o")]) == 2
        return capsys.readouterr().err.strip()

    empty = tmp_path / "empty"
    empty.mkdir()
    assert error("starlink", "--traces", str(empty)) == (
        f"error: --traces {empty}: no LeoReplayer pair in it (bw_N.txt with delay_N.txt)"
    )
    (empty / "bw_3.txt").write_text("1\n")
    assert error("starlink", "--traces", str(empty)) == (
        f"error: --traces {empty}: bw_3.txt has no delay_3.txt beside it"
    )
    assert error("starlink", "--traces", str(tmp_path / "none")) == (
        f"error: --traces {tmp_path / 'none'}: not a folder"
    )
    assert error("wave-page", "--traces", str(empty)) == (
        "error: --traces: only starlink runs over traces (simulated)"
    )
    assert not (tmp_path / "o").exists()
