"""The sweep workers' Parquet files, written straight from the native columns,
are byte-identical to the pandas path's."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from wavelab import _native
from wavelab.native_files import run_files
from wavelab.results import Results
from wavelab.scenario import builtin_scenario, from_toml

EVERY_TABLE = """
duration = "20s"
[[links]]
name = "access"
between = ["s", "r"]
rate = "100Mbit/s"
delay = "1ms"
[[links]]
name = "air"
between = ["r", "d"]
rate = "8Mbit/s"
delay = "40ms"
queue = "30pkt"
loss = { model = "bernoulli", p = 0.01 }
handovers = [{ at = "8s", outage = "1s", rate = "2Mbit/s", delay = "15ms" }]
[[flows]]
name = "bulk"
from = "s"
to = "d"
log_packets = true
[[flows]]
name = "short"
from = "s"
to = "d"
cc = "wave"
start = "2s"
size = "300kB"
"""


@pytest.mark.parametrize(
    "scenario",
    [from_toml(EVERY_TABLE), builtin_scenario("demo"), builtin_scenario("dcnet2016-handover")],
    ids=["every-table", "demo", "dcnet"],
)
def test_native_files_equal_the_pandas_path(scenario: object) -> None:
    sc = scenario
    assert hasattr(sc, "to_json")
    sim = _native.Simulation(sc.to_json())  # type: ignore[attr-defined]
    sim.run_until(sim.end)
    tables = sim.results()
    run = dict(sim.run_stats())
    expected = Results.from_native(sc, tables, run, True).to_files()  # type: ignore[arg-type]
    got, flows = run_files(sc, tables, run, True)  # type: ignore[arg-type]
    assert sorted(got) == sorted(expected)
    for name in expected:
        assert got[name] == expected[name], name
    pd.testing.assert_frame_equal(flows, pd.read_parquet(io.BytesIO(got["flows.parquet"])))
