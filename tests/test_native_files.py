"""The sweep workers' Parquet files, written straight from the native columns,
are byte-identical to the pandas path's."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from conftest import LOSSY
from wavelab import _native
from wavelab.results import Results
from wavelab.results.native_files import run_files
from wavelab.scenario import builtin_scenario, from_toml

# the shared lossy path (packet log on), plus a handover and a second flow
EVERY_TABLE = (
    LOSSY.replace(
        'loss = { model = "bernoulli", p = 0.01 }',
        'loss = { model = "bernoulli", p = 0.01 }\n'
        'handovers = [{ at = "3s", outage = "1s", rate = "2Mbit/s", delay = "15ms" }]',
    )
    + """
[[flows]]
name = "short"
from = "s"
to = "d"
cc = "wave"
start = "1s"
size = "300kB"
"""
)


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


def test_many_link_directions() -> None:
    # 150 links: 300 directions, more categories than one byte holds
    hops = "\n".join(
        f'[[links]]\nbetween = ["n{i}", "n{i + 1}"]\nrate = "100Mbit/s"\ndelay = "1ms"'
        for i in range(150)
    )
    sc = from_toml(f'duration = "1s"\n{hops}\n[[flows]]\nfrom = "n0"\nto = "n150"\n')
    sim = _native.Simulation(sc.to_json())
    sim.run_until(sim.end)
    tables = sim.results()
    run = dict(sim.run_stats())
    expected = Results.from_native(sc, tables, run, True).to_files()
    got, _ = run_files(sc, tables, run, True)
    assert got["queues.parquet"] == expected["queues.parquet"]


def test_run_files_carry_units_and_nullable_counters() -> None:
    """A run's Parquet fields carry their unit, as a sweep's do; the
    counters are nullable integers in every run (an emulation's unknown
    ones are nulls), and a float a driver could not know is a null."""
    import pyarrow.parquet as pq

    sc = from_toml(EVERY_TABLE)
    sim = _native.Simulation(sc.to_json())
    sim.run_until(sim.end)
    tables = sim.results()
    got, flows = run_files(sc, tables, dict(sim.run_stats()), True)
    schema = pq.read_schema(io.BytesIO(got["flows.parquet"]))
    unit = {f.name: (f.metadata or {}).get(b"unit") for f in schema}
    assert unit["goodput"] == b"bit/s" and unit["bytes_sent"] == b"B"
    assert unit["completion_time"] == b"s" and unit["retransmissions"] is None
    links = pq.read_schema(io.BytesIO(got["links.parquet"]))
    assert links.field("rate").metadata == {b"unit": b"bit/s"}
    assert flows["retransmissions"].dtype == "UInt64"
    # the bulk flow never completes: a null in the file, NaN in pandas
    table = pq.read_table(io.BytesIO(got["flows.parquet"]))
    assert table.column("completion_time").null_count == 1
    assert flows["completion_time"].isna().sum() == 1
