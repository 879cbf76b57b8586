"""The capacity of a link direction over a run, and the windows when a link
was down, from the run's normalised scenario and its ``handovers`` and
``handoffs`` tables: what the rate plots draw as the capacity line and the
shaded outages, and what the bottleneck's utilisation divides by.

A direction's capacity at time ``t`` is its rate at ``t`` (the link's rate or
the direction's override, then every ``schedule`` entry and every handover
that happened, in time order, as the simulator applies them: a schedule entry
sets the directions it names, a handover both), and 0 while the link is down:
its ``outages``, a handover's disconnection (from the time the handovers
table says it happened), and the disconnection a break-before-make handoff of
a multi-homed node imposes on the link it moves to (plus, when the old link's
packets are ``held = "lost"``, the old link until the node comes back), as
``crates/model/src/compile.rs`` compiles them.

A direction with a CSV ``rate_trace`` has its steps (the configured rate
before the first point, the last one held to the end), read by the
simulator's own parser. A direction driven by a Mahimahi trace (read by
the simulator's parser too) has the trace's capacity: one
1,500-byte delivery opportunity per line (a millisecond), the trace repeated
over the run; the step function holds the capacity averaged over each second
(:data:`TRACE_STEP`), exact when integrated over whole seconds.

A link with an ``outage_process`` (outages drawn from the run's seed) is
down at times only the simulator knows: its capacity is ``known = False``,
the steps hold the rate as if it never went down, and the utilisation
computed from it is NaN rather than a guess.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from wavelab import _native

TRACE_STEP = 1.0
"""Seconds over which a trace's delivery opportunities are averaged."""
TRACE_MTU = 1500
"""Bytes per delivery opportunity of a Mahimahi trace (its MTU)."""
SIDES = ("forward", "reverse")


def _value(text: Any, unit: str) -> float:
    got = _native.quantity(str(text))
    if got is None or got[1] != unit:
        raise ValueError(f"{text!r} is not a value in {unit}")
    return got[0]


@dataclass(frozen=True)
class Outage:
    """A window when a link was down (both directions)."""

    start: float
    end: float
    label: str


@dataclass(frozen=True)
class Capacity:
    """A direction's capacity as a step function of time (see the module)."""

    name: str
    """``link:direction``."""
    times: np.ndarray[Any, Any]
    """Start of each step (seconds); the first is 0."""
    rates: np.ndarray[Any, Any]
    """Capacity (bit/s) from ``times[i]`` to ``times[i + 1]`` (the last to the end)."""
    end: float
    """End of the run (seconds)."""
    known: bool
    """False when the simulator alone knows when the link was down."""

    def at(self, t: Any) -> np.ndarray[Any, Any]:
        """The capacity (bit/s) at each time of ``t``."""
        i = np.searchsorted(self.times, np.asarray(t, dtype=float), side="right") - 1
        return np.asarray(self.rates[np.clip(i, 0, len(self.rates) - 1)], dtype=float)

    def bits(self, start: float = 0.0, end: float | None = None) -> float:
        """The integral of the capacity over [start, end] (bits): what the
        direction could have carried in that time while it was up."""
        stop = self.end if end is None else end
        edges = np.append(self.times, max(stop, float(self.times[-1])))
        lo = np.clip(edges[:-1], start, stop)
        hi = np.clip(edges[1:], start, stop)
        return float(np.sum(self.rates * (hi - lo)))

    def up_seconds(self, start: float = 0.0, end: float | None = None) -> float:
        """Seconds of [start, end] when the capacity was above 0."""
        stop = self.end if end is None else end
        edges = np.append(self.times, max(stop, float(self.times[-1])))
        lo = np.clip(edges[:-1], start, stop)
        hi = np.clip(edges[1:], start, stop)
        return float(np.sum((hi - lo)[self.rates > 0]))

    def steps(
        self, start: float = 0.0, end: float | None = None
    ) -> tuple[list[float], list[float]]:
        """The step function as a line to draw over [start, end]: (times, bit/s),
        a vertical segment at every change."""
        stop = self.end if end is None else end
        xs: list[float] = []
        ys: list[float] = []
        for i, r in enumerate(self.rates):
            a = float(self.times[i])
            b = float(self.times[i + 1]) if i + 1 < len(self.times) else stop
            a, b = max(a, start), min(b, stop)
            if b < a:
                continue
            xs += [a, b]
            ys += [float(r), float(r)]
        return xs, ys


Table = pd.DataFrame | Mapping[str, Any]
"""A run's table: a DataFrame, or its columns by name (a sweep's worker
passes :func:`wavelab.results.tables.table_columns`, not to build DataFrames)."""


def _rows(table: Table | None) -> int:
    if table is None:
        return 0
    if isinstance(table, pd.DataFrame):
        return len(table)
    return len(next(iter(table.values()))) if table else 0


def _records(table: Table | None) -> list[dict[str, Any]]:
    if table is None or not _rows(table):
        return []
    if isinstance(table, pd.DataFrame):
        return [{str(k): v for k, v in r.items()} for r in table.to_dict("records")]
    cols = {str(k): list(v) for k, v in table.items()}
    return [{k: v[i] for k, v in cols.items()} for i in range(_rows(table))]


def outages(
    normalized: Mapping[str, Any],
    handovers: Table | None = None,
    handoffs: Table | None = None,
    end: float = math.inf,
) -> dict[int, list[Outage]]:
    """The windows when each link (by index) was down (see the module), each
    ending by ``end``; links never down are absent."""
    links = list(normalized.get("links", []))
    names = [str(link.get("name") or f"link{i}") for i, link in enumerate(links)]
    index = {n: i for i, n in enumerate(names)}
    out: dict[int, list[Outage]] = {}

    def add(i: int, start: float, stop: float, label: str) -> None:
        stop = min(stop, end)
        if stop > start:
            out.setdefault(i, []).append(Outage(start, stop, label))

    for i, link in enumerate(links):
        for o in link.get("outages", []):
            start = _value(o["start"], "s")
            add(i, start, start + _value(o["duration"], "s"), f"outage ({names[i]})")
    for row in _records(handovers):
        t, length = float(row["time"]), float(row["outage"])
        if str(row["link"]) in index and not math.isnan(t) and length > 0:
            add(index[str(row["link"])], t, t + length, f"handover ({row['link']})")
    done = [r for r in _records(handoffs) if not math.isnan(float(r["time"]))]
    for k, r in enumerate(done):
        if str(r["kind"]) != "break-before-make":
            continue
        t = float(r["time"])
        src, dst = str(r["from"]), str(r["to"])
        if dst in index and float(r["disconnection"]) > 0:
            add(index[dst], t, t + float(r["disconnection"]), f"handoff ({r['node']})")
        if src in index and str(r.get("held", "")) == "lost":
            back = [g for g in done[k + 1 :] if g["node"] == r["node"] and str(g["to"]) == src]
            add(
                index[src],
                t,
                float(back[0]["time"]) if back else end,
                f"handoff ({r['node']} away)",
            )
    for i in range(len(links)):
        leo = _leo(normalized, i)
        for start, stop in leo[1] if leo is not None else []:
            add(i, start, stop, f"reconfiguration ({names[i]})")
    for spans in out.values():
        spans.sort(key=lambda w: (w.start, w.end))
    return out


def _leo(
    normalized: Mapping[str, Any], i: int
) -> tuple[list[tuple[float, float, float, float]], list[tuple[float, float]]] | None:
    """The path link ``i``'s LEO model draws (``_native.leo_plan``), or None
    (also for a scenario that no longer validates here, e.g. a trace file of
    another link gone since the run: its capacity is then not drawn)."""
    if not normalized["links"][i].get("leo"):
        return None
    try:
        return _native.leo_plan(json.dumps(dict(normalized)), i)
    except _native.ScenarioError:
        return None


def _trace_steps(path: Path, end: float) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    # the simulator's parser, with its checks (a second parser here once
    # read a trace the simulator had wrapped around differently)
    raw, period = _native.mahimahi_trace(str(path))
    ms = np.frombuffer(raw, dtype="<u8").astype(np.float64)
    n = max(1, math.ceil(end / TRACE_STEP))
    starts = np.arange(n) * TRACE_STEP
    # opportunities before each step's edge, the trace repeated every `period` ms
    edges = np.append(starts, n * TRACE_STEP) * 1e3

    def before(t_ms: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
        loops = np.floor(t_ms / period)
        rest = t_ms - loops * period
        found: np.ndarray[Any, Any] = loops * len(ms) + np.searchsorted(ms, rest, side="left")
        return found

    counts = np.diff(before(edges))
    return starts, counts * TRACE_MTU * 8 / TRACE_STEP


def direction_capacity(
    normalized: Mapping[str, Any],
    direction: int,
    end: float,
    handovers: Table | None = None,
    handoffs: Table | None = None,
) -> Capacity:
    """The capacity of direction ``direction`` (2 x link + 0 forward, 1
    reverse) over [0, end] (see the module)."""
    i, side = direction // 2, direction % 2
    link = normalized["links"][i]
    name = str(link.get("name") or f"link{i}")
    label = f"{name}:{SIDES[side]}"
    override = link.get(SIDES[side]) or {}
    trace = override.get("trace")
    rate_trace = override.get("rate_trace")
    leo = _leo(normalized, i)
    known = not link.get("outage_process") and (leo is not None or not link.get("leo"))
    if leo is not None:
        # one rate per interval between the LEO model's reconfigurations
        times = np.array([row[0] for row in leo[0]])
        rates = np.array([row[2 + side] for row in leo[0]])
    elif trace:
        times, rates = _trace_steps(Path(str(trace)), end)
    elif rate_trace:
        # the configured rate before the first point, the last one held (a
        # schedule or handover may not change a traced rate)
        points = _native.rate_trace(str(rate_trace))
        first = _value(override.get("rate") or link["rate"], "bit/s")
        times = np.array([0.0] + [t for t, _ in points])
        rates = np.array([first] + [r for _, r in points])
    else:
        changes: list[tuple[float, int, float]] = []  # (time, order, rate)
        mine = [r for r in _records(handovers) if str(r["link"]) == name]
        for k, (spec, row) in enumerate(zip(link.get("handovers", []), mine, strict=False)):
            t = float(row["time"])
            if spec.get("rate") is not None and not math.isnan(t):
                changes.append((t, k, _value(spec["rate"], "bit/s")))
        for k, e in enumerate(link.get("schedule", [])):
            covers = e.get("direction", "both") in ("both", SIDES[side])
            if covers and e.get("rate") is not None:
                # the simulator sorts by time, a link's handovers before its schedule
                changes.append((_value(e["at"], "s"), 10_000 + k, _value(e["rate"], "bit/s")))
        changes.sort(key=lambda c: (c[0], c[1]))
        times = np.array([0.0] + [c[0] for c in changes])
        first = _value(override.get("rate") or link["rate"], "bit/s")
        rates = np.array([first] + [c[2] for c in changes])
    down = outages(normalized, handovers, handoffs, end).get(i, [])
    if down:
        cuts = sorted({0.0, *times.tolist(), *(w.start for w in down), *(w.end for w in down)})
        at = np.array(cuts)
        j = np.clip(np.searchsorted(times, at, side="right") - 1, 0, len(rates) - 1)
        new_rates = rates[j].astype(float)
        for w in down:
            new_rates[(at >= w.start) & (at < w.end)] = 0.0
        times, rates = at, new_rates
    # one step per distinct time (the last change at an instant wins)
    last = np.append(times[1:] != times[:-1], True)
    return Capacity(label, times[last], rates[last].astype(float), end, known)


def bottleneck_direction(links: Table) -> int | None:
    """The bottleneck of a run's links table: the direction where packets
    waited longest on average (ties: the slowest, then the first); None if no
    direction carried a packet or the table has no queueing delay."""
    if "queue_delay_mean" not in links:
        return None
    sent = np.asarray(links["sent_packets"])
    delay = np.asarray(links["queue_delay_mean"], dtype=float)
    rate = np.asarray(links["rate"], dtype=float)
    best: tuple[bool, float, bool, float] | None = None
    found = None
    for i in np.flatnonzero(sent > 0):
        q, r = float(delay[i]), -float(rate[i])
        # largest delay first, then the slowest; NaN after any number
        key = (
            not math.isnan(q),
            0.0 if math.isnan(q) else q,
            not math.isnan(r),
            0.0 if math.isnan(r) else r,
        )
        if best is None or key > best:
            best, found = key, int(i)
    return None if found is None else int(np.asarray(links["dir"])[found])
