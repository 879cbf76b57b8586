"""Your own congestion control (docs/custom-cc.md): the Rust example
registered under its name, the same algorithm as a Python class, and what
happens when a Python algorithm fails."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import wavelab
from wavelab.custom_cc import Ack, Congestion, Start
from wavelab.errors import ScenarioFileError, WavelabError
from wavelab.scenario import Scenario, load_scenario

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "cc"

import wavelab.examples.vegas  # noqa: E402 - registers "py-vegas"


def scenario(cc: Any, **changes: Any) -> Scenario:
    return load_scenario(EXAMPLE / "vegas.toml").with_changes({"flows[0].cc": cc, **changes})


def test_both_examples_are_algorithms() -> None:
    names = wavelab.algorithms()
    assert "vegas" in names and "py-vegas" in names
    assert names.index("newreno") < names.index("vegas")


@pytest.mark.parametrize("queue", ["87pkt", "12pkt"])
def test_the_python_class_gives_the_rust_examples_run_bit_for_bit(queue: str) -> None:
    # 12 packets of buffer: slow start overflows it, so losses, fast
    # retransmits and timeouts go through on_congestion too
    rust = wavelab.run(scenario("vegas", **{"links[1].queue": queue}))
    py = wavelab.run(scenario("py-vegas", **{"links[1].queue": queue}))
    assert py.complete and "stopped" not in py.run
    assert list(py.flows["algorithm"]) == ["py-vegas"]
    pd.testing.assert_frame_equal(rust.series, py.series)
    pd.testing.assert_frame_equal(rust.queues, py.queues)
    cols = [c for c in rust.flows.columns if c != "algorithm"]
    pd.testing.assert_frame_equal(rust.flows[cols], py.flows[cols])
    # Vegas's state is in the time series, and it is Vegas: the queue stays short
    s = py.series
    assert {"cc_base_rtt", "cc_diff"} <= set(s.columns)
    late = s[s["time"] >= 15]
    assert late["cc_diff"].between(0, 4.5).all()
    if queue == "12pkt":
        assert int(py.flows["retransmissions"].iloc[0]) > 0


def test_parameters_reach_the_constructor_and_bad_ones_are_named() -> None:
    wide = wavelab.run(scenario({"algorithm": "py-vegas", "alpha": 6, "beta": 8}))
    narrow = wavelab.run(scenario("py-vegas"))
    assert wide.series["cc_diff"].iloc[-1] > narrow.series["cc_diff"].iloc[-1] + 2
    with pytest.raises(ScenarioFileError) as e:
        scenario({"algorithm": "py-vegas", "alpha": 4})
    assert "flows[0].cc" in str(e.value)
    assert "beta: 3 must be at least alpha (4)" in str(e.value)
    with pytest.raises(ScenarioFileError) as e:
        scenario({"algorithm": "py-vegas", "delta": 1})
    assert "Vegas(...) raised TypeError" in str(e.value)
    assert "delta" in str(e.value)


class Base:
    """A fixed window; subclasses break it in one way each."""

    metrics: tuple[str, ...] = ()

    def __init__(self, start: Start) -> None:
        self.cwnd = 10 * start.mss
        self.ssthresh: int | None = None
        self.acks = 0

    def on_ack(self, now: float, ack: Ack) -> None:
        self.acks += 1

    def on_congestion(self, now: float, event: Congestion) -> None:
        pass


class Raises(Base):
    def on_ack(self, now: float, ack: Ack) -> None:
        self.acks += 1
        if self.acks == 500:
            raise ZeroDivisionError("the 500th ACK")


class BadWindow(Base):
    def on_ack(self, now: float, ack: Ack) -> None:
        self.acks += 1
        if self.acks == 300:
            self.cwnd = -1


class BadMetric(Base):
    metrics = ("acks", "oops")

    def __init__(self, start: Start) -> None:
        super().__init__(start)
        self.oops = "text"


wavelab.register_cc("test-raises", Raises, replace=True)
wavelab.register_cc("test-bad-window", BadWindow, replace=True)
wavelab.register_cc("test-bad-metric", BadMetric, replace=True)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("test-raises", "Raises.on_ack at "),
        ("test-bad-window", "BadWindow.on_ack at "),
        ("test-bad-metric", "BadMetric.oops (listed in metrics) = 'text' is not a number"),
    ],
)
def test_a_failing_class_stops_the_run_with_an_error_naming_it(name: str, expected: str) -> None:
    res = wavelab.run(scenario(name))
    assert not res.complete
    stopped = res.run["stopped"]
    assert f'congestion control "{name}"' in stopped and expected in stopped, stopped
    if name == "test-raises":
        assert "raised ZeroDivisionError: the 500th ACK" in stopped
        assert "test_custom_cc.py" in stopped  # where, from the traceback
    if name == "test-bad-window":
        assert "left cwnd = -1 is not a number of bytes of at least 1" in stopped
    # what was simulated before the failure is kept, and the run stopped early
    assert 0 < res.run["simulated"] < 30
    assert len(res.series) > 0


def test_the_cli_writes_the_partial_results_and_says_which_method_failed(
    tmp_path: Path,
) -> None:
    plugin = tmp_path / "broken.py"
    plugin.write_text(
        "import wavelab\n"
        "@wavelab.congestion_control('broken')\n"
        "class Broken:\n"
        "    def __init__(self, start):\n"
        "        self.cwnd, self.ssthresh = 10 * start.mss, None\n"
        "    def on_ack(self, now, ack):\n"
        "        if now > 2:\n"
        "            {}['missing']\n"
        "    def on_congestion(self, now, event):\n"
        "        pass\n"
    )
    out = tmp_path / "out"
    cmd = [sys.executable, "-c", "import sys; from wavelab.cli import main; sys.exit(main())"]
    done = subprocess.run(
        [
            *cmd,
            *("run", str(EXAMPLE / "vegas.toml"), "--set", "flows[0].cc=broken"),
            *("--cc-file", str(plugin), "--out", str(out), "--no-plots", "--quiet"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert 'congestion control "broken": Broken.on_ack at 2.' in done.stderr
    assert "raised KeyError: 'missing'" in done.stderr
    assert "(" + str(plugin) + ", line 8: {}['missing'])" in done.stderr
    assert "partial results were written" in done.stderr
    assert (out / "series.parquet").is_file()
    # a file that does not load is named, without a traceback of wavelab's
    bad = tmp_path / "bad.py"
    bad.write_text("import nothing_of_the_kind\n")
    done = subprocess.run(
        [*cmd, "run", "demo", "--cc-file", str(bad), "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert f"--cc-file {bad}: ModuleNotFoundError" in done.stderr


def test_registration_errors_are_clear() -> None:
    with pytest.raises(WavelabError, match="already registered"):
        wavelab.register_cc("test-raises", Raises)
    with pytest.raises(WavelabError, match="built-in algorithm"):
        wavelab.register_cc("reno", Raises)
    with pytest.raises(WavelabError, match="no method on_congestion"):

        class NoLoss:
            def on_ack(self, now: float, ack: Ack) -> None:
                pass

        wavelab.register_cc("test-no-loss", NoLoss)
    with pytest.raises(WavelabError, match="not a tuple of attribute names"):

        class BadNames(Base):
            metrics = "acks"  # type: ignore[assignment]

        wavelab.register_cc("test-bad-names", BadNames)


def test_same_scenario_same_results() -> None:
    a = wavelab.run(scenario("py-vegas"))
    b = wavelab.run(scenario("py-vegas"))
    assert np.array_equal(a.series["cwnd"].to_numpy(), b.series["cwnd"].to_numpy())
    pd.testing.assert_frame_equal(a.series, b.series)


def test_results_of_an_algorithm_this_process_does_not_know_can_be_read(tmp_path: Path) -> None:
    # written by a process that registered "py-vegas"; read where it is not
    wavelab.run(scenario("py-vegas")).to_parquet(tmp_path / "run")
    code = (
        "import sys, wavelab\n"
        "assert 'py-vegas' not in wavelab.algorithms()\n"
        "r = wavelab.Results.read_parquet(sys.argv[1])\n"
        "cc = r.scenario.normalized['flows'][0]['cc']\n"
        "print(r.flows['algorithm'].iloc[0], cc['algorithm'])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "run")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["py-vegas", "py-vegas"]
    # and the plots of it
    cli = "import sys; from wavelab.cli import main; sys.exit(main())"
    done = subprocess.run(
        [sys.executable, "-c", cli, "plot", str(tmp_path / "run"), "--out", str(tmp_path / "p")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "p" / "algorithm.png").is_file()


GUIDE = ROOT / "docs" / "custom-cc.md"


def guide_signatures() -> dict[str, list[str]]:
    """Each Python method of the guide's table (its third column), as
    written there: name -> the parameters after ``self``."""
    found: dict[str, list[str]] = {}
    for line in GUIDE.read_text().splitlines():
        cells = line.split("|")
        if len(cells) < 4:
            continue
        for name, params in re.findall(r"`(\w+)\(self((?:, \w+)*)\)`", cells[3]):
            found[name] = [p.strip() for p in params.split(",") if p.strip()]
    return found


def class_from_the_guide(calls: list[tuple[str, int]]) -> type:
    """A class with every method of the guide's table, each taking exactly
    the parameters the guide gives (no defaults, no ``*args``), recording
    its calls; it grows like Reno, halves on congestion and keeps a timer
    running every 50 ms so that ``on_timer`` is due."""
    sigs = guide_signatures()
    lines = [
        "class FromTheGuide:",
        "    def __init__(self, start):",
        "        self.mss = start.mss",
        "        self.cwnd = start.initial_cwnd * start.mss",
        "        self.ssthresh = None",
        "        self.timer = 0.05",
    ]
    body = {
        "on_ack": "self.cwnd += self.mss if ack.may_grow_window else 0",
        "on_congestion": "self.cwnd = self.ssthresh = max(2 * self.mss, event.flight_size // 2)",
        "on_timer": "self.timer = now + 0.05",
        "set_mss": "self.mss = mss",
    }
    for name, params in sigs.items():
        lines.append(f"    def {name}(self, {', '.join(params)}):")
        lines.append(f"        calls.append(({name!r}, {len(params)}))")
        lines.append(f"        {body.get(name, 'pass')}")
    namespace: dict[str, Any] = {"calls": calls}
    exec("\n".join(lines), namespace)
    cls: type = namespace["FromTheGuide"]
    return cls


def test_the_engine_calls_each_method_as_the_guide_writes_it() -> None:
    sigs = guide_signatures()
    assert set(sigs) == {
        "on_ack",
        "on_congestion",
        "set_mss",
        "on_established",
        "on_timer",
        "on_recovery_exit",
        "on_path_change",
    }, sigs
    assert sigs["on_timer"] == ["now"], "the guide's on_timer takes the time alone"
    calls: list[tuple[str, int]] = []
    wavelab.register_cc("test-from-the-guide", class_from_the_guide(calls), replace=True)
    # a 12-packet buffer: slow start overflows it, so congestion events and
    # fast recoveries come too
    res = wavelab.run(scenario("test-from-the-guide", **{"links[1].queue": "12pkt"}))
    assert res.complete, res.run.get("stopped")
    called = {name for name, _ in calls}
    # no driver reports a path change yet (the guide says so); every other
    # method was called, with the guide's arguments (a wrong count would
    # have stopped the run with a TypeError)
    assert called == set(sigs) - {"on_path_change"}, called
    assert all(n == len(sigs[name]) for name, n in calls)
