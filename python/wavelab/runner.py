"""Running a scenario: the Rust engine advances in steps so Python can show
progress and stop cleanly on Ctrl-C without losing what was simulated."""

from __future__ import annotations

import time
from collections.abc import Callable

from wavelab import _native
from wavelab.results import Results
from wavelab.scenario import Scenario

Progress = Callable[[float, float], None]
"""Called with (simulated seconds reached, total simulated seconds)."""


def run(
    scenario: Scenario,
    progress: Progress | bool = False,
    steps: int = 100,
) -> Results:
    """Runs a scenario and returns its results.

    ``progress`` is ``True`` for a progress bar on stderr, or a callback
    receiving (simulated seconds reached, total). A ``KeyboardInterrupt`` stops
    the run at the current step and returns the partial results with
    ``complete = False``.
    """
    sim = _native.Simulation(scenario.to_json())
    end = sim.end
    callback: Progress | None
    bar = None
    if progress is True:
        from tqdm import tqdm

        # disable=None: no bar when stderr is not a terminal (logs, CI)
        bar = tqdm(total=round(end, 3), unit="sim s", desc=scenario.name, leave=False, disable=None)

        def callback(now: float, total: float) -> None:
            assert bar is not None
            bar.update(round(now, 3) - bar.n)

    elif progress is False:
        callback = None
    else:
        callback = progress
    complete = True
    wall = time.perf_counter()
    try:
        for k in range(1, steps + 1):
            sim.run_until(end * k / steps)
            if callback:
                callback(sim.now, end)
    except KeyboardInterrupt:
        complete = False
    finally:
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - wall
    stats = sim.run_stats()
    stats["wall_seconds"] = wall
    return Results.from_native(scenario, sim.results(), stats, complete)
