"""The throughput-delay plot of a sweep and Jain's index over time."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_hex

from conftest import LOSSY, wavelab
from wavelab.analysis import jain_over_time
from wavelab.errors import WavelabError
from wavelab.plot.style import ALGORITHM_STYLES
from wavelab.plot.throughput_delay import plot_throughput_delay

PNG = b"\x89PNG\r\n\x1a\n"
SWEEP = LOSSY.replace('duration = "6s"', 'duration = "2s"') + (
    '\n[sweep]\n"flows[0].cc" = ["newreno", "cubic"]\n'
)


# slow (18 s): tests/test_truthful_plots.py checks the intervals' rules
# in the quick suite
@pytest.mark.slow
def test_throughput_delay_per_run_and_per_point_with_intervals(tmp_path: Path) -> None:
    (tmp_path / "one.toml").write_text(SWEEP)
    (tmp_path / "seeds.toml").write_text(SWEEP + "seeds = 3\n")
    for name in ("one", "seeds"):
        res = wavelab("sweep", f"{name}.toml", "--out", name, "--quiet", cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        plotted = wavelab("plot", name, cwd=tmp_path)
        assert plotted.returncode == 0, plotted.stderr
        assert plotted.stdout.strip() == f"{name}/throughput-delay.png"
        assert (tmp_path / name / "throughput-delay.png").read_bytes()[:8] == PNG
    # the per-point version uses the seeds' means, the other each run
    assert (tmp_path / "seeds" / "seeds.parquet").exists()
    assert not (tmp_path / "one" / "seeds.parquet").exists()
    other = tmp_path / "elsewhere"
    res = wavelab(
        "plot", "seeds", "--out", str(other), "--delay", "queue_delay_p95_ms", cwd=tmp_path
    )
    assert res.returncode == 0 and (other / "throughput-delay.png").read_bytes()[:8] == PNG
    bad = wavelab("plot", "seeds", "--delay", "nonsense_ms", cwd=tmp_path)
    assert bad.returncode == 2 and "has no nonsense_ms column" in bad.stderr
    # drawn into a given axes, each algorithm in its colour and marker
    fig, ax = plt.subplots()
    assert plot_throughput_delay(tmp_path / "seeds", ax=ax) is fig
    drawn = {
        str(c.get_label()).split("=")[1]: (to_hex(c.lines[0].get_color()), c.lines[0].get_marker())
        for c in ax.containers
    }
    plt.close(fig)
    for cc in ("newreno", "cubic"):
        st = ALGORITHM_STYLES[cc]
        assert drawn[cc] == (st.color.lower(), st.marker), drawn


def test_a_directory_without_a_sweep_table_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(WavelabError, match="no sweep table here"):
        plot_throughput_delay(tmp_path)


def _series(rates: dict[int, float], start: dict[int, float], end: float = 10.0) -> pd.DataFrame:
    rows = []
    for flow, rate in rates.items():
        for t in np.arange(0.0, end + 1e-9, 0.1):
            delivered = max(t - start[flow], 0.0) * rate / 8
            if t >= start[flow]:
                rows.append({"time": round(t, 1), "flow": flow, "bytes_delivered": delivered})
    return pd.DataFrame(rows).sort_values(["time", "flow"])


def test_jain_over_time() -> None:
    # equal flows: 1; one flow with all but nothing for the other: 1/2
    equal = jain_over_time(_series({0: 5e6, 1: 5e6}, {0: 0.0, 1: 0.0}))
    assert equal.index[0] == pytest.approx(1.0) and np.allclose(equal.to_numpy(), 1.0)
    starved = jain_over_time(_series({0: 5e6, 1: 0.0}, {0: 0.0, 1: 0.0}))
    assert np.allclose(starved.to_numpy(), 0.5)
    # 3:1 shares: (3 + 1)^2 / (2 (9 + 1)) = 0.8
    shares = jain_over_time(_series({0: 3e6, 1: 1e6}, {0: 0.0, 1: 0.0}))
    assert np.allclose(shares.to_numpy(), 0.8)
    # a flow counts once it has run a whole window: before, one flow is NaN
    late = jain_over_time(_series({0: 5e6, 1: 5e6}, {0: 0.0, 1: 4.0}))
    assert late.loc[:4.9].isna().all() and np.allclose(late.loc[5.0:].to_numpy(), 1.0)


def test_a_multi_flow_run_has_a_fairness_plot(tmp_path: Path) -> None:
    two = LOSSY.replace('cc = "newreno"', 'cc = "newreno"\ncount = 2').replace(
        'duration = "6s"', 'duration = "3s"'
    )
    (tmp_path / "two.toml").write_text(two)
    (tmp_path / "one.toml").write_text(LOSSY.replace('duration = "6s"', 'duration = "3s"'))
    for name in ("two", "one"):
        res = wavelab("run", f"{name}.toml", "--out", name, "--quiet", cwd=tmp_path)
        assert res.returncode == 0, res.stderr
    assert (tmp_path / "two" / "jain.png").read_bytes()[:8] == PNG
    assert not (tmp_path / "one" / "jain.png").exists()
