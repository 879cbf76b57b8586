"""The boundary between the engine and a Python congestion control,
randomized (cargo-fuzz cannot drive an interpreter): classes built from a
seeded random plan set their window, threshold, pacing rate, timer and
metrics to hostile values (negative, zero, fractions, 1e30, infinities,
NaN, 2**200, strings, None, booleans, lists, objects whose ``__float__`` or
``__repr__`` raise, a 1 MB string), raise any exception from any method, or
return anything. Whatever they do, a run returns its results: complete, or
stopped with one short message naming the class and the method, never a
panic or a traceback of the engine, and the same plan gives the same
results. ``WAVELAB_PYCC_CASES`` sets the number of plans (default 40)."""

from __future__ import annotations

import math
import os
import random
from typing import Any

import pytest

import wavelab
from wavelab.custom_cc import Ack, Congestion, Start
from wavelab.scenario import from_toml

SCENARIO = """
duration = "4s"
[[links]]
between = ["a", "b"]
rate = "10Mbit/s"
delay = "10ms"
queue = "40pkt"
loss = {{ model = "bernoulli", p = 0.01 }}
[[flows]]
from = "a"
to = "b"
cc = "{name}"
tcp = {{ sack = {sack} }}
"""


class FloatRaises:
    def __float__(self) -> float:
        raise RuntimeError("no float")

    def __repr__(self) -> str:
        return "FloatRaises()"


class ReprRaises:
    def __float__(self) -> float:
        return -5.0

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


HOSTILE: list[Any] = [
    -1,
    0,
    0.5,
    1,
    1e30,
    math.inf,
    -math.inf,
    math.nan,
    2**64,
    2**200,
    -(2**70),
    "10",
    "x" * 1_000_000,
    None,
    True,
    [1460],
    FloatRaises(),
    ReprRaises(),
]
"""Values a class may leave in cwnd, ssthresh, pacing_rate, timer, a metric."""

ERRORS: list[type[BaseException]] = [
    ValueError,
    ZeroDivisionError,
    RecursionError,
    MemoryError,
    AttributeError,
    StopIteration,
    ArithmeticError,
]

METHODS = ("on_ack", "on_congestion", "on_timer", "on_established", "set_mss", "on_recovery_exit")


def plan(seed: int) -> dict[str, Any]:
    """A random class: per method what it does, at which call, and what the
    class has (pacing, a timer, metrics)."""
    r = random.Random(seed)

    def act() -> tuple[str, int, Any]:
        kind = r.choice(["normal", "normal", "set", "raise", "return"])
        at = r.choice([1, 2, 50, 400])
        what: Any = None
        if kind == "set":
            what = (r.choice(["cwnd", "ssthresh", "pacing_rate", "timer", "m"]), r.choice(HOSTILE))
        elif kind == "raise":
            what = r.choice(ERRORS)
        elif kind == "return":
            what = r.choice(HOSTILE)
        return kind, at, what

    return {
        "methods": {m: act() for m in METHODS if r.random() < 0.8 or m == "on_ack"},
        "pacing": r.random() < 0.3,
        "timer": r.random() < 0.3,
        "metrics": r.random() < 0.5,
        "sack": r.random() < 0.5,
    }


def make_class(p: dict[str, Any]) -> type:
    """The class of plan ``p``."""

    class Random:
        metrics = ("m",) if p["metrics"] else ()

        def __init__(self, start: Start) -> None:
            self.mss = start.mss
            self.cwnd: Any = 10 * start.mss
            self.ssthresh: Any = None
            self.m: Any = 0.0
            self.calls: dict[str, int] = {}
            if p["pacing"]:
                self.pacing_rate: Any = 5e6
            if p["timer"]:
                self.timer: Any = 0.5

        def _do(self, method: str, now: float | None) -> Any:
            n = self.calls[method] = self.calls.get(method, 0) + 1
            kind, at, what = p["methods"][method]
            if kind == "normal" or n < at:
                if method == "on_ack":
                    self.cwnd = min(self.cwnd + self.mss, 200 * self.mss)
                if method == "on_timer" and now is not None:
                    self.timer = now + 0.2
                return None
            if kind == "set":
                name, value = what
                setattr(self, name, value)
                return None
            if kind == "raise":
                raise what(f"{method} call {n}")
            return what

    for name in p["methods"]:
        if name == "set_mss":

            def method(self: Any, mss: int) -> Any:
                return self._do("set_mss", None)

        elif name == "on_timer":

            def method(self: Any, now: float) -> Any:  # type: ignore[misc]
                return self._do("on_timer", now)

        else:

            def method(self: Any, now: float, event: Any, _name: str = name) -> Any:  # type: ignore[misc]
                return self._do(_name, now)

        setattr(Random, name, method)
    if "on_congestion" not in p["methods"]:

        def on_congestion(self: Any, now: float, event: Congestion) -> None:
            self.cwnd = max(self.cwnd // 2, 2 * self.mss)

        Random.on_congestion = on_congestion  # type: ignore[attr-defined]
    return Random


CASES = int(os.environ.get("WAVELAB_PYCC_CASES", "40"))


@pytest.mark.parametrize("seed", range(CASES))
def test_any_class_ends_in_results_or_one_short_message(seed: int) -> None:
    p = plan(seed)
    name = f"test-random-{seed}"
    wavelab.register_cc(name, make_class(p), replace=True)
    sc = from_toml(SCENARIO.format(name=name, sack=str(p["sack"]).lower()))
    first = wavelab.run(sc)
    again = wavelab.run(sc)
    for res in (first, again):
        assert len(res.flows) == 1 and res.run["simulated"] > 0
        stopped = res.run.get("stopped")
        if stopped is None:
            assert res.complete
            continue
        assert not res.complete
        assert stopped.startswith(f'congestion control "{name}": make_class.<locals>.Random'), (
            stopped
        )
        # one message of bounded length, whatever the class left behind
        assert len(stopped) < 2_000, stopped[:300]
        assert "panicked" not in stopped and "PanicException" not in stopped, stopped
    # the same plan, the same run
    assert first.run.get("stopped") == again.run.get("stopped")
    assert first.flows.equals(again.flows)
    assert first.series.equals(again.series)


def test_the_plans_reach_every_kind_of_boundary() -> None:
    # the randomized cases above are worth something only if they break
    # the class in every way: count what the plans do
    kinds = {"set": set(), "raise": set(), "return": 0}  # type: ignore[var-annotated]
    for seed in range(CASES):
        for kind, _, what in plan(seed)["methods"].values():
            if kind == "set":
                kinds["set"].add(what[0])
            elif kind == "raise":
                kinds["raise"].add(what)
            elif kind == "return":
                kinds["return"] += 1
    assert kinds["set"] == {"cwnd", "ssthresh", "pacing_rate", "timer", "m"}
    assert len(kinds["raise"]) >= 5 and kinds["return"] > 5


def test_an_ack_with_every_field_reads_back_as_documented() -> None:
    # the event objects the engine passes are plain, typed values
    seen: list[Ack] = []

    class Keeps:
        def __init__(self, start: Start) -> None:
            self.cwnd = 10 * start.mss
            self.ssthresh = None

        def on_ack(self, now: float, ack: Ack) -> None:
            if len(seen) < 50:
                seen.append(ack)

        def on_congestion(self, now: float, event: Congestion) -> None:
            pass

    wavelab.register_cc("test-random-keeps", Keeps, replace=True)
    wavelab.run(from_toml(SCENARIO.format(name="test-random-keeps", sack="true")))
    assert len(seen) == 50
    for a in seen:
        assert isinstance(a.bytes_acked, int) and a.bytes_acked >= 0
        assert a.rtt is None or (isinstance(a.rtt, float) and a.rtt > 0)
        assert a.state in ("open", "disorder", "recovery", "loss")


def test_a_timer_left_in_the_past_stops_the_run_instead_of_looping() -> None:
    # on_timer that does not move the deadline would be called again at the
    # same instant forever: the run stops with the class's error instead
    class Stuck:
        def __init__(self, start: Start) -> None:
            self.cwnd = 10 * start.mss
            self.ssthresh = None
            self.timer = 0.5

        def on_ack(self, now: float, ack: Ack) -> None:
            pass

        def on_congestion(self, now: float, event: Congestion) -> None:
            pass

        def on_timer(self, now: float) -> None:
            pass

    wavelab.register_cc("test-random-stuck", Stuck, replace=True)
    res = wavelab.run(from_toml(SCENARIO.format(name="test-random-stuck", sack="true")))
    stopped = res.run.get("stopped")
    assert not res.complete and stopped is not None
    assert "Stuck.on_timer left timer = 0.5 s" in stopped, stopped
