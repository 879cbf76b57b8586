"""Hostile input: each failure a hostile-input review found, reproduced, as a test. Bad files and
bad arguments get a plain error (a WavelabError, or its ArgumentError
subclass for a wrong type), never a traceback, a crash or a silently changed
value; sizes are checked before memory is spent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import wavelab
from conftest import wavelab as wavelab_cli
from wavelab.errors import ArgumentError, ScenarioFileError, WavelabError
from wavelab.scenario import MAX_DEPTH, Scenario, from_dict, from_toml, load_scenario
from wavelab.sweep import MAX_POINTS, load_sweep

BASE = """
duration = "10s"

[[links]]
between = ["a", "b"]
rate = "10Mbit/s"
delay = "10ms"

[[flows]]
from = "a"
to = "b"
"""


def error_of(text: str) -> str:
    with pytest.raises(ScenarioFileError) as e:
        from_toml(text)
    return str(e.value)


# ----- sizes are checked before memory is spent ------------------------------------


def sweep_file(tmp_path: Path, table: str) -> Path:
    p = tmp_path / "sweep.toml"
    p.write_text(BASE + "\n[sweep]\n" + table)
    return p


def limited(code: str, cpu_seconds: int = 15) -> subprocess.CompletedProcess[str]:
    """Runs Python ``code`` with at most 3 GB of address space, so a sweep
    that expands before checking its size fails (MemoryError) instead of
    eating the machine's memory (it grew at ~180 MB/s), and at most
    ``cpu_seconds`` of CPU time (the kernel stops it with SIGXCPU): a bound
    the machine's load does not move, where a wall-clock one would."""
    prelude = (
        "import resource; soft, hard = resource.getrlimit(resource.RLIMIT_AS); "
        "resource.setrlimit(resource.RLIMIT_AS, (3 << 30, hard)); "
        f"resource.setrlimit(resource.RLIMIT_CPU, ({cpu_seconds}, {cpu_seconds} + 5)); "
    )
    return subprocess.run(
        [sys.executable, "-c", prelude + code],
        capture_output=True,
        text=True,
        timeout=600,  # a hang, not a speed bound
    )


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("seeds = 100000000000", "seeds = 100,000,000,000 (at most 1,000,000 points)"),
        (
            '"seed" = { from = 1, to = 2, count = 1000000000 }',
            "count = 1,000,000,000 values (at most 1,000,000)",
        ),
        ('"seed" = { from = 1, to = inf, step = 1 }', "to = Infinity is not a finite number"),
        ('"seed" = { from = 0, to = 1e300, step = 1e-300 }', "values (at most 1,000,000)"),
        (
            'seeds = 1000\n"flows[0].count" = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n'
            '"links[0].delay" = { from = "1ms", to = "200ms", count = 200 }',
            "the sweep has more than 1,000,000 points",
        ),
    ],
)
def test_sweep_sizes_are_computed_before_anything_is_expanded(
    tmp_path: Path, table: str, message: str
) -> None:
    p = sweep_file(tmp_path, table)
    done = limited(
        "from wavelab.sweep import load_sweep, SweepError\n"
        f"try:\n    load_sweep({str(p)!r})\nexcept SweepError as e:\n    print(e)\n"
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert message in done.stdout, done.stdout
    # and from the command line, with --list too
    res = wavelab_cli("sweep", str(p), "--list")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert message in res.stderr


def test_too_many_flows_are_refused_by_validate(tmp_path: Path) -> None:
    # `flows[0].count = 100000000` passed validate; the run aborted (signal 6)
    p = tmp_path / "many.toml"
    p.write_text(BASE + "count = 100000000\n")
    res = wavelab_cli("validate", str(p))
    assert res.returncode == 1
    assert "flows[0].count: 100000000 makes 100000000 flows in all (at most 100000)" in res.stderr
    assert MAX_POINTS == 1_000_000


# ----- values are never silently changed ---------------------------------------------


def test_out_of_range_durations_are_refused_as_written() -> None:
    # `delay = "1e30s"` saturated to 2^64 - 1 ns; `duration = "1e20h"` was
    # reported as an output.interval problem
    assert error_of(BASE.replace('"10ms"', '"1e30s"')) == (
        'links[0].delay: "1e30s" is too long (at most 1000000000s, about 31.7 years)'
    )
    assert error_of(BASE.replace('"10s"', '"1e20h"')) == (
        'duration: "1e20h" is too long (at most 1000000000s, about 31.7 years)'
    )


def test_steady_earliest_after_latest_is_refused() -> None:
    # `steady = { earliest = "8s", latest = "2s" }` was accepted and the
    # handover happened at 2 s
    text = BASE.replace(
        'delay = "10ms"',
        'delay = "10ms"\nhandovers = [{ at = "steady", outage = "1s", '
        'steady = { earliest = "8s", latest = "2s" } }]',
    )
    assert error_of(text) == (
        "links[0].handovers[0].steady.latest: 2s is before steady.earliest (8s)"
    )


def test_two_flows_with_one_name_are_refused() -> None:
    # they were accepted, and in a sweep their per-flow columns collided
    text = BASE.replace('to = "b"', 'to = "b"\nname = "f"') + (
        '\n[[flows]]\nname = "f"\nfrom = "a"\nto = "b"\n'
    )
    assert error_of(text) == (
        'flows[1].name: "f" is already the name of flows[0]; flow names must be unique'
    )


# ----- no tracebacks ------------------------------------------------------------------


def test_deep_nesting_is_refused_before_any_recursion(tmp_path: Path) -> None:
    # 1,000 nested tables gave a RecursionError in the NaN walk; 500 nested
    # arrays one inside the TOML parser
    dotted = ".".join(["t"] * 1000) + " = 1\n"
    arrays = "x = " + "[" * 500 + "]" * 500 + "\n"
    tables = "x = " + "{ a = " * 400 + "1" + " }" * 400 + "\n"
    for text in (BASE + dotted, BASE + arrays, BASE + tables):
        message = error_of(text)
        assert f"nest more than {MAX_DEPTH} deep" in message, message
    deep: dict[str, object] = {"v": 1}
    for _ in range(1000):
        deep = {"t": deep}
    with pytest.raises(ScenarioFileError, match=f"nest more than {MAX_DEPTH} deep"):
        from_dict({**from_toml(BASE).data, "x": deep})
    # the same from the command line, for a scenario and for a sweep file
    for name, text in (("deep.toml", BASE + arrays), ("deep-sweep.toml", BASE + dotted)):
        p = tmp_path / name
        p.write_text(text + ("\n[sweep]\nseeds = 2\n" if "sweep" in name else ""))
        args = ("sweep", str(p), "--list") if "sweep" in name else ("validate", str(p))
        res = wavelab_cli(*args)
        assert res.returncode in (1, 2) and "Traceback" not in res.stderr
        assert "deep" in res.stderr
    # a legitimately nested value still works (a table inside a list of tables)
    from_toml(BASE.replace('delay = "10ms"', 'delay = "10ms"\nloss = { model = "none" }'))


def test_public_functions_check_their_argument_types(small_file: Path) -> None:
    sc = load_scenario(small_file)
    cases = [
        (lambda: wavelab.run(str(small_file)), "run(scenario): takes a Scenario"),  # type: ignore[arg-type]
        (lambda: wavelab.run(None), "run(scenario): takes a Scenario"),  # type: ignore[arg-type]
        (lambda: wavelab.run(sc, steps="3"), "run(steps)"),  # type: ignore[arg-type]
        (lambda: wavelab.run(sc, captures=["x"]), "run(captures)"),  # type: ignore[arg-type]
        (lambda: wavelab.run(sc, progress="yes"), "run(progress)"),  # type: ignore[arg-type]
        (lambda: from_toml(42), "the TOML text"),  # type: ignore[arg-type]
        (lambda: from_dict("duration = 1"), "from_dict(data)"),  # type: ignore[arg-type]
        (lambda: load_scenario(None), "load_scenario(path)"),  # type: ignore[arg-type]
        (lambda: load_sweep(3), "load_sweep(ref)"),  # type: ignore[arg-type]
        (lambda: sc.with_changes(["seed"]), "with_changes(changes)"),  # type: ignore[arg-type]
        (lambda: sc.with_changes({1: 2}), "with_changes(changes)"),  # type: ignore[dict-item]
        (lambda: Scenario("x", {}), "Scenario(data)"),  # type: ignore[arg-type]
    ]
    for call, where in cases:
        with pytest.raises(ArgumentError) as e:
            call()
        assert str(e.value).startswith(where), str(e.value)
        assert isinstance(e.value, WavelabError) and isinstance(e.value, TypeError)
    with pytest.raises(WavelabError, match="steps"):
        wavelab.run(sc, steps=0)


def test_toml_as_bytes_is_read_as_utf8() -> None:
    # `from_toml(bytes)` raised TypeError inside tomllib
    assert from_toml(BASE.encode()).duration == 10.0
    with pytest.raises(ScenarioFileError, match="not UTF-8"):
        from_toml(b"\xff\xfe")


def test_a_hand_built_scenario_the_schema_refuses_raises_a_wavelab_error() -> None:
    # it raised _native.ScenarioError, which is not a WavelabError
    good = from_toml(BASE)
    bad = dict(good.normalized, duration="0s")
    with pytest.raises(ScenarioFileError, match="duration: must be above zero"):
        wavelab.run(Scenario(bad, bad))


def test_reading_results_from_a_directory_without_them_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(WavelabError, match="no results here"):
        wavelab.Results.read_parquet(tmp_path)


def test_the_address_space_limit_helper_limits(tmp_path: Path) -> None:
    """The memory guard of the sweep-size tests works: allocating 8 GB
    fails under it (otherwise those tests would prove nothing)."""
    done = limited("b = bytearray(8 << 30)")
    assert done.returncode != 0 and "MemoryError" in done.stderr


def test_a_run_whose_packet_log_fills_up_stops_and_keeps_its_results(
    small_file: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The packet log's row limit (20 M rows; 1,000 here) stops the run with
    an error naming log_packets; `wavelab run` writes what was simulated and
    exits with 2."""
    from wavelab import _native, cli

    real = _native.Simulation

    def limited(json: str) -> _native.Simulation:
        sim = real(json)
        sim._set_log_limit(1_000)
        return sim

    monkeypatch.setattr(_native, "Simulation", limited)
    res = wavelab.run(load_scenario(small_file))
    assert not res.complete
    assert res.run["stopped"].startswith("log_packets: the packet log reached")
    assert 1_000 <= len(res.packets) < 4_000
    assert 0 < res.run["simulated"] < 3.0
    out = tmp_path / "out"
    code = cli.main(["run", str(small_file), "--out", str(out), "--quiet", "--no-plots"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "error: log_packets: the packet log reached" in err
    assert f"the partial results were written to {out}/" in err
    assert (out / "packets.parquet").exists()
    assert json.loads((out / "run.json").read_text())["complete"] is False
