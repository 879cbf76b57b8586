"""A link direction's capacity over time and the outage windows
(wavelab.capacity): what the capacity lines, the shaded outages and the
bottleneck's utilisation are computed from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from wavelab.analysis.metrics import unit
from wavelab.capacity import direction_capacity, outages


def _link(**extra: Any) -> dict[str, Any]:
    none = {"rate": None, "delay": None, "queue": None, "loss": None}
    link = {"name": "b", "rate": "10Mbit/s", "forward": dict(none), "reverse": dict(none)}
    link.update({"schedule": [], "outages": [], "handovers": [], **extra})
    return {"links": [link]}


def test_a_schedule_a_handover_and_an_outage_make_one_step_function() -> None:
    sc = _link(
        schedule=[
            {"at": "5s", "direction": "forward", "rate": "4Mbit/s"},
            {"at": "6s", "direction": "reverse", "rate": "1Mbit/s"},
        ],
        outages=[{"start": "8s", "duration": "500ms"}],
        handovers=[{"at": "steady", "outage": "1s", "rate": "20Mbit/s"}],
    )
    # the "steady" handover happened at 12 s, as the run's table says
    handovers = pd.DataFrame(
        {"link": ["b"], "planned": ["steady"], "time": [12.0], "outage": [1.0]}
    )
    c = direction_capacity(sc, 0, 20.0, handovers)
    assert c.times.tolist() == [0.0, 5.0, 8.0, 8.5, 12.0, 13.0]
    assert c.rates.tolist() == [10e6, 4e6, 0.0, 4e6, 0.0, 20e6]
    assert c.bits() == pytest.approx(10e6 * 5 + 4e6 * (3 + 3.5) + 20e6 * 7)
    assert c.up_seconds() == pytest.approx(18.5)
    assert c.bits(4.0, 6.0) == pytest.approx(10e6 + 4e6)
    assert c.at([0.0, 5.0, 8.2, 19.0]).tolist() == [10e6, 4e6, 0.0, 20e6]
    # the reverse direction has its own schedule entry, the same outages
    r = direction_capacity(sc, 1, 20.0, handovers)
    assert r.at([5.5, 7.0, 8.2, 12.5, 14.0]).tolist() == [10e6, 1e6, 0.0, 0.0, 20e6]
    xs, ys = c.steps(0.0, 20.0)
    assert xs[:4] == [0.0, 5.0, 5.0, 8.0] and ys[:4] == [10e6, 10e6, 4e6, 4e6]
    assert xs[-1] == 20.0 and ys[-1] == 20e6


def test_a_handover_that_never_happened_changes_nothing() -> None:
    sc = _link(handovers=[{"at": "steady", "outage": "1s", "rate": "20Mbit/s"}])
    never = pd.DataFrame(
        {"link": ["b"], "planned": ["steady"], "time": [float("nan")], "outage": [1.0]}
    )
    c = direction_capacity(sc, 0, 10.0, never)
    assert c.rates.tolist() == [10e6] and c.bits() == pytest.approx(1e8)
    assert outages(sc, never, None, 10.0) == {}


def test_a_break_before_make_handoff_takes_its_links_down() -> None:
    sc = {"links": [_link()["links"][0], {**_link()["links"][0], "name": "wlan"}]}
    handoffs = pd.DataFrame(
        {
            "node": ["m", "m"],
            "from": ["b", "wlan"],
            "to": ["wlan", "b"],
            "kind": ["break-before-make", "make-before-break"],
            "time": [3.0, 7.0],
            "disconnection": [0.5, 0.0],
            "held": ["lost", "delivered"],
        }
    )
    down = outages(sc, None, handoffs, 10.0)
    # the new link is down for the disconnection, the old one until the node is back
    assert [(w.start, w.end) for w in down[1]] == [(3.0, 3.5)]
    assert [(w.start, w.end) for w in down[0]] == [(3.0, 7.0)]
    assert direction_capacity(sc, 0, 10.0, None, handoffs).up_seconds() == pytest.approx(6.0)


def test_a_trace_gives_its_delivery_opportunities(tmp_path: Path) -> None:
    # two opportunities in the first 2 ms of every 4 ms: 1500 B x 500 per s
    trace = tmp_path / "link.trace"
    trace.write_text("1\n2\n4\n")
    sc = _link()
    sc["links"][0]["forward"]["trace"] = str(trace)
    c = direction_capacity(sc, 0, 3.0)
    # the trace repeats every 4 ms with 3 opportunities: 750 per second
    assert c.times.tolist() == [0.0, 1.0, 2.0]
    assert c.rates.tolist() == pytest.approx([750 * 1500 * 8] * 3, rel=2e-3)
    assert c.bits() == pytest.approx(3 * 750 * 1500 * 8, rel=2e-3)


def test_an_outage_process_leaves_the_capacity_unknown() -> None:
    sc = _link(outage_process={"up": "1s", "down": "100ms"})
    assert not direction_capacity(sc, 0, 10.0).known


def test_units_come_from_the_names() -> None:
    assert unit("rtt_p95_ms") == "ms" and unit("rtt_p95_ms:first") == "ms"
    assert unit("goodput_mbps") == "Mbit/s" and unit("delivered_mb:x") == "MB"
    assert unit("recovery_s") == "s" and unit("links[1].rate_bps") == "bit/s"
    assert unit("loss_rate") == "1" and unit("utilisation") == "1" and unit("jain") == "1"
    assert unit("retransmissions") is None and unit("bottleneck") is None


def test_a_csv_rate_trace_gives_its_steps(tmp_path: Path) -> None:
    trace = tmp_path / "rate.csv"
    trace.write_text("time,rate\n1s,4Mbit/s\n2.5,1000000\n")
    sc = _link()
    sc["links"][0]["forward"]["rate_trace"] = str(trace)
    c = direction_capacity(sc, 0, 4.0)
    # the configured 10 Mbit/s before the first point, the last one held
    assert c.times.tolist() == [0.0, 1.0, 2.5] and c.rates.tolist() == [10e6, 4e6, 1e6]
    assert c.bits() == pytest.approx(10e6 + 4e6 * 1.5 + 1e6 * 1.5)
    # the reverse direction has no trace
    assert direction_capacity(sc, 1, 4.0).rates.tolist() == [10e6]


def test_utilisation_of_a_run_on_a_rate_trace(tmp_path: Path) -> None:
    import wavelab
    from wavelab.analysis.metrics import flow_metrics

    (tmp_path / "rate.csv").write_text("0,8Mbit/s\n2s,2Mbit/s\n4s,8Mbit/s\n")
    text = """
name = "traced"
duration = "6s"
[[links]]
name = "access"
between = ["s", "r"]
rate = "100Mbit/s"
delay = "1ms"
[[links]]
name = "bottleneck"
between = ["r", "d"]
rate = "8Mbit/s"
delay = "20ms"
queue = "30pkt"
forward = { rate_trace = "rate.csv" }
[[flows]]
name = "bulk"
from = "s"
to = "d"
cc = "cubic"
"""
    (tmp_path / "t.toml").write_text(text)
    r = wavelab.run(wavelab.load_scenario(tmp_path / "t.toml"))
    m = flow_metrics(r.flows, r.links, r.run, r.scenario.normalized, r.handovers, r.handoffs)
    assert m["bottleneck"] == "bottleneck:forward"
    assert m["capacity_mb"] == pytest.approx((8e6 * 2 + 2e6 * 2 + 8e6 * 2) / 8e6)
    b = r.links.set_index(["link", "direction"]).loc[("bottleneck", "forward")]
    assert m["utilisation"] == pytest.approx(b["delivered_bytes"] * 8 / (36e6), rel=1e-12)
    # a bulk flow keeps the link busy, and never more than it could carry
    assert 0.7 < m["utilisation"] <= 1.0


def test_a_leo_link_gives_the_intervals_its_model_drew() -> None:
    import json

    from wavelab import _native
    from wavelab.scenario.builtin import builtin_scenario

    sc = builtin_scenario("starlink", changes={"duration": "40s"})
    normalized = sc.normalized
    intervals, windows = _native.leo_plan(json.dumps(normalized), 1) or ([], [])
    # reconfigurations at 12 and 27 s, each with a 50 ms outage
    assert [round(i[0], 9) for i in intervals] == [0.0, 12.0, 27.0]
    assert windows == [(12.0, 12.05), (27.0, 27.05)]
    for side in (0, 1):
        c = direction_capacity(normalized, 2 + side, 40.0)
        assert c.known
        assert c.times.tolist() == [0.0, 12.0, 12.05, 27.0, 27.05]
        rates = [i[2 + side] for i in intervals]
        assert c.rates.tolist() == [rates[0], 0.0, rates[1], 0.0, rates[2]]
    assert [(w.start, w.end) for w in outages(normalized)[1]] == windows
    # the core link has no model
    assert _native.leo_plan(json.dumps(normalized), 0) is None
