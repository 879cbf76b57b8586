"""Running a scenario on real packets: the emulator (``crates/net``) between
network namespaces, on the wall clock, with the kernel's TCP.

The run happens in threads of the native module; Python waits for it in
short slices, so the progress bar moves in wall time and Ctrl-C (or
SIGTERM) stops it with what it measured kept. Everything the run creates
(namespaces, TUN devices, processes) belongs to this process and is gone
when the run ends, however it ends; see ``docs/emulation.md``.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from wavelab import _native
from wavelab.errors import WavelabError
from wavelab.results.frames import Results
from wavelab.runner.captures import add_captures
from wavelab.runner.simulate import Progress
from wavelab.scenario.loading import Scenario, from_dict

SPIN = 50e-6
"""Seconds before each deadline the wire thread stops sleeping and spins."""
LATENESS_BOUND = 500e-6
"""The 99th percentile of lateness above which a run is flagged."""


def unavailable() -> str | None:
    """``None`` if this process can emulate, else what it lacks (root, the
    TUN driver, iproute2)."""
    return _native.emulation_unavailable()


def for_emulation(scenario: Scenario) -> Scenario:
    """The scenario validated for the emulator (kernel congestion controls)."""
    if scenario.emulation:
        return scenario
    return from_dict(scenario.data, scenario.source, emulation=True, folder=scenario.folder)


@contextmanager
def stop_on_termination() -> Iterator[None]:
    """While inside, SIGTERM and SIGHUP (a killed parent, a closed terminal)
    stop a run the way Ctrl-C does, so its results are written; the process
    also gets SIGTERM when its parent dies."""

    def interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    old = {s: signal.signal(s, interrupt) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        _native.terminate_with_parent()
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def start(
    scenario: Scenario,
    captures: Mapping[str, str | Path] | None = None,
    realtime: bool = True,
    spin: float = SPIN,
    lateness_bound: float = LATENESS_BOUND,
    logs: Path | None = None,
) -> _native.Emulation:
    """Sets up and starts an emulation of ``scenario`` (seconds for ``spin``
    and ``lateness_bound``); raises :class:`WavelabError` naming what is
    wrong (the scenario's field, or what the machine lacks)."""
    sc = for_emulation(scenario)
    try:
        # as written: what the kernel cannot apply is noted only if it is set
        emu = _native.Emulation(
            json.dumps(sc.data),
            realtime=realtime,
            spin_us=spin * 1e6,
            lateness_bound_us=lateness_bound * 1e6,
            logs=str(logs) if logs else None,
        )
    except _native.ScenarioError as e:
        raise WavelabError(f"{sc.name}: {e}") from None
    add_captures(emu, sc.name, captures)
    if logs is not None:
        logs.mkdir(parents=True, exist_ok=True)
    try:
        emu.start()
    except OSError as e:
        raise WavelabError(f"{sc.name}: {e}") from None
    return emu


def collect(
    scenario: Scenario,
    emu: _native.Emulation,
    complete: bool,
    captures: Mapping[str, str | Path] | None = None,
) -> Results:
    """The results of a finished (or stopped) emulation."""
    try:
        tables, stats, emulation = emu.finish()
    except RuntimeError as e:
        raise WavelabError(f"{scenario.name}: {e}") from None
    run: dict[str, Any] = dict(stats)
    run["wall_seconds"] = emulation["wall_seconds"]
    run["mode"] = "emulation"
    run["emulation"] = emulation
    if captures:
        run["captures"] = [
            {**done, "path": str(path)}
            for done, path in zip(emu.finish_captures(), captures.values(), strict=True)
        ]
    return Results.from_native(for_emulation(scenario), tables, run, complete)


@contextmanager
def deferred_interrupts() -> Iterator[list[bool]]:
    """While inside, SIGINT, SIGTERM and SIGHUP set the yielded flag instead
    of raising (main thread only), so that a run started is always stopped
    and gathered, however early the signal comes."""
    flag = [False]
    if threading.current_thread() is not threading.main_thread():
        yield flag
        return

    def note(signum: int, frame: Any) -> None:
        flag[0] = True

    old = {s: signal.signal(s, note) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        yield flag
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def emulate(
    scenario: Scenario,
    progress: Progress | bool = False,
    captures: Mapping[str, str | Path] | None = None,
    realtime: bool = True,
    spin: float = SPIN,
    lateness_bound: float = LATENESS_BOUND,
    logs: Path | None = None,
) -> Results:
    """Runs ``scenario`` on real packets and returns its results: the tables
    of a simulation (from the kernel's TCP_INFO and the emulated links), plus
    ``releases`` and ``run["emulation"]`` (lateness percentiles, whether the
    run is flagged, real-time priority, settings the kernel did not apply).

    ``progress`` is ``True`` for a progress bar in wall time, or a callback
    receiving (seconds reached, total). Ctrl-C (and SIGTERM, SIGHUP) stop the
    run and return what it measured with ``complete = False``. Needs root and
    ``/dev/net/tun`` (:func:`unavailable` says what is missing).
    """
    bar = None
    callback: Progress | None = None
    with deferred_interrupts() as interrupted:
        emu = start(scenario, captures, realtime, spin, lateness_bound, logs)
        end = emu.end
        if progress is True:
            from wavelab._util.progress_bars import progress_bar

            bar = progress_bar(
                total=round(end, 1), unit="s", desc=f"{scenario.name} (wall clock)", leave=False
            )

            def callback(now: float, total: float) -> None:
                assert bar is not None
                bar.update(round(min(now, total), 1) - bar.n)

        elif progress is not False:
            callback = progress
        try:
            while not emu.wait(0.2):
                if interrupted[0]:
                    emu.stop()
                elif callback:
                    callback(emu.now, end)
        finally:
            if bar is not None:
                bar.close()
        return collect(scenario, emu, not interrupted[0], captures)


def emulate_many(
    scenarios: Mapping[str, Scenario],
    jobs: int,
    progress: bool = True,
    on_done: Callable[[str, Results], None] | None = None,
) -> dict[str, Results]:
    """Runs the scenarios as emulations, ``jobs`` at a time in this process
    (each in namespaces of its own), and returns their results by key;
    ``on_done(key, results)`` is called as each one finishes (to store it at
    once). A ``KeyboardInterrupt`` stops the runs in flight and raises once
    their resources are released."""
    if jobs < 1:
        raise WavelabError(f"--jobs {jobs} must be at least 1")
    pending = list(scenarios.items())
    running: dict[str, tuple[Scenario, _native.Emulation]] = {}
    out: dict[str, Results] = {}
    total = sum(for_emulation(sc).duration for sc in scenarios.values())
    bar = None
    if progress:
        from wavelab._util.progress_bars import progress_bar

        bar = progress_bar(total=round(total), unit="s", desc="emulated")
    done_seconds = 0.0
    try:
        while pending or running:
            while pending and len(running) < jobs:
                key, sc = pending.pop(0)
                running[key] = (sc, start(sc))
            time.sleep(0.2)
            for key in [k for k, (_, e) in running.items() if e.wait(0)]:
                sc, emu = running.pop(key)
                out[key] = collect(sc, emu, True)
                if on_done is not None:
                    on_done(key, out[key])
                done_seconds += for_emulation(sc).duration
            if bar is not None:
                now = done_seconds + sum(e.now for _, e in running.values())
                bar.update(round(now) - bar.n)
    except KeyboardInterrupt:
        for _, emu in running.values():
            emu.stop()
        for _, emu in running.values():
            emu.wait(10.0)
        raise
    finally:
        if bar is not None:
            bar.close()
    return {k: out[k] for k in scenarios}


def cleanup(all_runs: bool = False) -> list[tuple[int, str, int]]:
    """Kills what emulations left running (processes of flows' commands
    whose run is gone, or of any run with ``all_runs``); returns (pid,
    command line, owner pid) of each."""
    return _native.emulation_cleanup(all_runs)
