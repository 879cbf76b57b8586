"""benches/linux_agreement.py's printing of repeated emulations and its
choice of cells, against made-up measurements (the benchmark itself needs
root and real time)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "linux_agreement", ROOT / "benches" / "linux_agreement.py"
    )
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["linux_agreement"] = mod
    spec.loader.exec_module(mod)
    return mod


def row(recovery: list[float], sim: float) -> dict[str, object]:
    """A table row with ``recovery`` measured over the repeats (NaN: not
    within the run) and the simulated seeds all at ``sim``; steady rates
    equal."""
    values = np.array(recovery, dtype=float)
    finite = np.isfinite(values).any()
    out: dict[str, object] = {"cc": "bbr", "direction": "L1L2", "ht_s": 0.5}
    for m, emu, s in (
        ("recovery_s", values, sim),
        ("steady_mbps", np.array([7.0] * len(recovery)), 7.0),
        ("timeouts", np.array([1.0] * len(recovery)), 1.0),
    ):
        ok = finite or m != "recovery_s"
        out[f"emu_{m}"] = float(np.nanmedian(emu)) if ok else np.nan
        out[f"emu_{m}_min"] = float(np.nanmin(emu)) if ok else np.nan
        out[f"emu_{m}_max"] = float(np.nanmax(emu)) if ok else np.nan
        out[f"sim_{m}"] = s
        out[f"sim_{m}_min"] = s
        out[f"sim_{m}_max"] = s
    out["horizon_s"] = 59.5
    out["flagged"] = 0
    out["load"] = "/".join(["5.0"] * len(recovery))
    out["recovery_ratio"] = sim / out["emu_recovery_s"]  # type: ignore[operator]
    out["steady_ratio"] = 1.0
    return out


def test_repeats_print_the_median_and_the_range(bench: ModuleType) -> None:
    t = pd.DataFrame([row([7.9, 9.4, 8.3], 8.5)])
    shown = bench.printable(t)
    assert shown.iloc[0]["recovery s: Linux"] == "8.3 (7.9-9.4)"
    assert shown.iloc[0]["ratio"] == "1.02"
    # one run, or repeats that agree: the value alone
    t = pd.DataFrame([row([7.9], 10.0)])
    shown = bench.printable(t)
    assert shown.iloc[0]["recovery s: Linux"] == "7.9"
    assert shown.iloc[0]["ratio"] == "1.27 *"
    assert bench.summary(t) == (
        "1 of 2 ratios within 15%, 2 within 2x (recovery and steady rate; '*': beyond 15%)"
    )


def test_each_repeat_is_a_run_of_its_own(bench: ModuleType) -> None:
    cells = [bench.Cell("bbr", "L1L2", 0.5)]
    scs = bench.scenarios(cells, 20.0, 10.0)
    assert sorted(scs) == ["baseline-bbr-L2", "bbr-L1L2-ht0.5"]
    runs = bench.repeats(scs, 3)
    assert len(runs) == 6
    names = {sc.name for sc in runs.values()}
    assert len(names) == 6, names
    assert runs["bbr-L1L2-ht0.5#2"].name == "linux-agreement-bbr-L1L2-ht0.5-r2"


def test_the_simulated_seeds_print_their_range(bench: ModuleType) -> None:
    r = row([7.9, 9.4, 8.3], 8.5)
    r["sim_recovery_s_min"], r["sim_recovery_s_max"] = 8.0, 9.0
    shown = bench.printable(pd.DataFrame([r]))
    assert shown.iloc[0]["sim"] == "8.5 (8.0-9.0)"
    # a table from before the seeds: the one simulated value
    old = {
        k: v
        for k, v in row([7.9], 10.0).items()
        if not (k.startswith("sim_") and k.endswith(("_min", "_max")))
    }
    assert bench.printable(pd.DataFrame([old])).iloc[0]["sim"] == "10.0"


def test_each_seed_is_a_run_of_its_own(bench: ModuleType) -> None:
    scs = bench.scenarios([bench.Cell("reno", "L2L1", 2.0)], 20.0, 10.0)
    runs = bench.seeded(scs, 3)
    assert len(runs) == 6
    assert runs["reno-L2L1-ht2#2"].name == "linux-agreement-reno-L2L1-ht2-s3"
    assert runs["reno-L2L1-ht2#2"].data["seed"] == 3
    assert len({sc.name for sc in runs.values()}) == 6


def test_the_command_line_chooses_the_cells(bench: ModuleType) -> None:
    _, cells = bench.parse([])
    assert len(cells) == 18
    args, cells = bench.parse(
        ["--cc", "bbr", "--direction", "L1L2", "--ht", "0.5", "2", "--repeat", "3"]
    )
    assert [c.key for c in cells] == ["bbr-L1L2-ht0.5", "bbr-L1L2-ht2"]
    assert args.repeat == 3
    assert args.seeds == 5
    _, cells = bench.parse(["--quick", "--cc", "reno"])
    assert [c.key for c in cells] == ["reno-L1L2-ht2"]
    with pytest.raises(SystemExit):
        bench.parse(["--direction", "L3L1"])
