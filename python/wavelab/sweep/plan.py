"""A sweep's plan: every point with its run key and, for a handover
scenario, the key of its baseline run (which gives R_ss); the distinct runs
they need, each once."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from wavelab.analysis.metrics import baseline_scenario
from wavelab.sweep.grid import Sweep
from wavelab.sweep.store import scenario_key

Log = Callable[[str], None]


@dataclass(frozen=True)
class PlannedPoint:
    """A point of the sweep and the runs it needs."""

    index: int
    params: dict[str, Any]
    key: str
    baseline: str | None
    """Key of the baseline run that gives R_ss (handover scenarios only)."""


@dataclass
class Plan:
    """Every point, and the distinct runs they need (a baseline shared by
    many points, or two points that are the same scenario, run once)."""

    points: list[PlannedPoint]
    runs: dict[str, tuple[int, bool]] = field(default_factory=dict)
    """Run key -> (index of a point that needs it, True if it is that point's baseline)."""

    @property
    def baselines(self) -> int:
        return sum(1 for _, is_base in self.runs.values() if is_base)


def plan_sweep(sweep: Sweep, log: Log | None = None) -> Plan:
    """Validates every point and computes its run keys (nothing runs)."""
    started = time.monotonic()
    plan = Plan([])
    for i in range(sweep.size):
        point = sweep.point(i)
        key = scenario_key(point.scenario)
        if key not in plan.runs or plan.runs[key][1]:
            # a point that is also another point's baseline runs as a point
            # (with the captures asked for)
            plan.runs[key] = (i, False)
        base = baseline_scenario(point.scenario)
        base_key = None
        if base is not None:
            base_key = scenario_key(base)
            plan.runs.setdefault(base_key, (i, True))
        plan.points.append(PlannedPoint(i, point.params, key, base_key))
        if log and i and i % 5000 == 0:
            log(f"planned {i:,} of {sweep.size:,} points ({time.monotonic() - started:.0f} s)")
    return plan
