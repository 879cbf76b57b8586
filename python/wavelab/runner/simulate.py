"""Running a scenario: the Rust engine advances in steps so Python can show
progress and stop cleanly on Ctrl-C without losing what was simulated."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from wavelab import _native
from wavelab._util.progress_bars import progress_bar
from wavelab.errors import ScenarioFileError, WavelabError, check_type
from wavelab.results.frames import Results
from wavelab.runner.captures import add_captures, check_captures
from wavelab.scenario.loading import Scenario

Progress = Callable[[float, float], None]
"""Called with (simulated seconds reached, total simulated seconds)."""


def run(
    scenario: Scenario,
    progress: Progress | bool = False,
    steps: int = 100,
    captures: Mapping[str, str | Path] | None = None,
) -> Results:
    """Runs a scenario and returns its results.

    ``progress`` is ``True`` for a progress bar on stderr, or a callback
    receiving (simulated seconds reached, total). A ``KeyboardInterrupt`` stops
    the run at the current step and returns the partial results with
    ``complete = False``.

    ``captures`` maps capture targets (``"flow:NAME"``, ``"link:NAME"``,
    ``"link:NAME:forward"`` or a bare flow or link name) to pcap files to
    write (see ``crates/model/src/capture.rs``). What each capture wrote, or the
    error that stopped it (a full disk), is in ``results.run["captures"]``;
    an error there never costs the run's results. A target that names nothing
    raises :class:`WavelabError` before the run starts.

    A run whose packet log reaches its limit (``crates/model/src/limits.rs``)
    stops there: its results are returned with ``complete = False`` and the
    reason in ``results.run["stopped"]``.

    Arguments of the wrong type raise :class:`wavelab.errors.ArgumentError`;
    a scenario the schema refuses (a hand-built :class:`Scenario`) raises
    :class:`ScenarioFileError`.
    """
    check_type(
        "run(scenario)",
        scenario,
        Scenario,
        "a Scenario (from wavelab.load_scenario, from_toml or from_dict)",
    )
    if not (progress is True or progress is False or callable(progress)):
        check_type("run(progress)", progress, bool, "True, False or a callback(now, total)")
    check_type("run(steps)", steps, int, "a whole number of steps")
    if steps < 1:
        raise WavelabError(f"run(steps): {steps} must be at least 1")
    check_captures("run(captures)", captures)
    try:
        sim = _native.Simulation(scenario.to_json())
    except _native.ScenarioError as e:
        where = f"{scenario.source}: " if scenario.source else f"{scenario.name}: "
        raise ScenarioFileError(f"{where}{e}") from None
    add_captures(sim, scenario.name, captures)
    end = sim.end
    callback: Progress | None
    bar = None
    if progress is True:
        # on a terminal or in a notebook; not in a log (CI)
        bar = progress_bar(total=round(end, 3), unit="sim s", desc=scenario.name, leave=False)

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
            if sim.stopped is not None:
                complete = False
                break
    except KeyboardInterrupt:
        complete = False
    finally:
        if bar is not None:
            bar.close()
    wall = time.perf_counter() - wall
    stats: dict[str, Any] = dict(sim.run_stats())
    stats["wall_seconds"] = wall
    if sim.stopped is not None:
        stats["stopped"] = sim.stopped
    if captures:
        stats["captures"] = _finish_captures(sim, captures)
    return Results.from_native(scenario, sim.results(), stats, complete)


def _finish_captures(
    sim: _native.Simulation, captures: Mapping[str, str | Path]
) -> list[dict[str, Any]]:
    """Flushes the captures; a write error (a full disk) is recorded, not raised."""
    out = []
    for done, path in zip(sim.finish_captures(), captures.values(), strict=True):
        out.append({**done, "path": str(path)})
    return out
