"""Commands on one scenario: ``wavelab run``, ``demo``, ``emulate``,
``compare``, ``validate``, ``scenarios`` and ``algorithms``."""

from __future__ import annotations

import argparse
import contextlib
import errno
import sys
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from wavelab._native import algorithms
from wavelab._util.files import commit, file_name, inside, temporary_name
from wavelab._util.folder_lock import check_free, folder_lock
from wavelab._util.progress_bars import status
from wavelab._util.table_text import BULK, MISSING, table_text
from wavelab.cli.signals import INTERRUPTED
from wavelab.errors import WavelabError
from wavelab.plot.figure_files import check_dpi, figure_format
from wavelab.results.frames import Results
from wavelab.results.ownership import foreign_files, replacing, scenario_digest
from wavelab.results.summary import NETWORK_COLUMNS, RUN_COLUMNS
from wavelab.runner.captures import capture_file_name
from wavelab.runner.simulate import run
from wavelab.scenario.builtin import (
    builtin_names,
    builtin_scenario,
    builtin_toml,
    demo_scenario,
    demo_toml,
    load_scenario_or_builtin,
)
from wavelab.scenario.field_paths import PathError
from wavelab.scenario.flow_rows import flow_row_specs
from wavelab.scenario.loading import Scenario, load_scenario
from wavelab.scenario.toml_text import check_toml_bounds, check_toml_size

DEFAULT_ROOT = Path("results")
"""Where ``wavelab run`` writes when no ``--out`` is given: ``results/NAME``."""


def default_run_dir(name: str) -> Path:
    """``results/<file_name(name)>``: where ``wavelab run`` writes by default."""
    return inside(DEFAULT_ROOT, file_name(name))


def _parse_value(path: str, text: str) -> Any:
    """A ``--set`` value: a TOML value if it parses as one, else a string;
    refused if it exceeds a bound of a scenario file (checked before the
    parser sees it: a dotted key in an inline table is quadratic to parse)."""
    toml = f"v = {text}"
    check_toml_size(len(toml.encode("utf-8", errors="replace")), f"--set {path}: ", WavelabError)
    check_toml_bounds(toml, f"--set {path}: ", WavelabError)
    try:
        return tomllib.loads(toml)["v"]
    except tomllib.TOMLDecodeError:
        return text


def parse_sets(sets: Sequence[str]) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    for item in sets:
        if "=" not in item:
            raise WavelabError(
                f"--set {item!r}: write PATH=VALUE, e.g. --set links[1].rate=8Mbit/s"
            )
        path, value = item.split("=", 1)
        changes[path.strip()] = _parse_value(path.strip(), value.strip())
    return changes


def _apply_sets(sc: Scenario, sets: Sequence[str]) -> Scenario:
    changes = parse_sets(sets)
    try:
        return sc.with_changes(changes) if changes else sc
    except PathError as e:
        raise WavelabError(f"--set {e}") from None


RTT_COLUMNS = ("flow", "min_rtt_ms", "rtt_mean_ms", "rtt_p50_ms", "rtt_p95_ms", "rtt_p99_ms")
"""The summary's RTT block (the flow's name, then its RTT figures)."""


def _print_summary(res: Results) -> None:
    """The summary as three blocks: per flow its counters, per flow its RTT,
    and one line of the run's figures (the bottleneck's, and Jain's index
    with two flows or more)."""
    frame = res.summary()
    rtt = list(RTT_COLUMNS[1:])
    # the ECN counters only when the run had ECN (a count above zero)
    quiet = [
        c
        for c in ("ecn_echoes", "ecn_reductions", "ce_received")
        if c in frame and not (frame[c].fillna(0) > 0).any()
    ]
    network = [c for c in NETWORK_COLUMNS if c in frame]
    counters = frame.drop(columns=[c for c in (*rtt, *RUN_COLUMNS, *quiet, *network) if c in frame])
    if "completion_s" in counters:
        # a bulk flow has no completion to reach: "bulk", where a sized flow
        # that did not finish reads "not reached"
        # (a UDP or ping flow has none either: it sends by its pattern)
        sized = _sized_flows(res)
        if len(sized) == len(counters):
            done = counters["completion_s"].tolist()
            counters["completion_s"] = [
                MISSING if s is None else v if s else BULK for v, s in zip(done, sized, strict=True)
            ]
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(table_text(counters))
        print(table_text(frame[list(RTT_COLUMNS)]))
        if network:
            # each flow's data packets at the network: loss, one-way delay, jitter
            print(table_text(frame[["flow", *network]]))
    # no line when the run has no bottleneck figures (an emulation's links
    # table has no queueing delay)
    if "bottleneck" in frame and len(frame) and isinstance(frame["bottleneck"].iloc[0], str):
        print(_run_line(frame.iloc[0]))


def _sized_flows(res: Results) -> list[bool | None]:
    """Per flow (replicas expanded, in flow order), whether the scenario
    gives it a ``size`` to transfer (None: a UDP or ping flow)."""
    return [
        None if spec.get("transport") in ("udp", "ping") else spec.get("size") is not None
        for spec in flow_row_specs(res.scenario.normalized)
    ]


def _run_line(row: pd.Series) -> str:
    """``run: bottleneck ...`` with the run's figures of the summary."""

    def fmt(v: float, digits: int) -> str:
        return "n/a" if pd.isna(v) else f"{v:.{digits}f}"

    parts = [
        f"run: bottleneck {row['bottleneck']}",
        f"queue_delay_mean_ms {fmt(row['queue_delay_mean_ms'], 2)}",
        f"queue_delay_p95_ms {fmt(row['queue_delay_p95_ms'], 2)}",
        f"loss_rate {fmt(row['loss_rate'], 5)}",
        f"utilisation {fmt(row['utilisation'], 4)}",
    ]
    # a queue discipline's signals, when it gave any (drop-tail gives none)
    signals = [(c, row.get(c)) for c in ("aqm_drops", "marks")]
    if any(not pd.isna(v) and v > 0 for _, v in signals):
        parts += [f"{c} {int(v)}" for c, v in signals if not pd.isna(v)]
    if not pd.isna(row["jain"]):
        parts.append(f"jain {row['jain']:.4f}")
    return "  ".join(parts)


Runner = Callable[[Scenario, bool, dict[str, Path]], Results]
"""Runs a scenario with a progress bar (or not) and captures."""


def _simulate(sc: Scenario, progress: bool, captures: dict[str, Path]) -> Results:
    return run(sc, progress=progress, captures=captures)


def _run_and_write(
    sc: Scenario,
    out: Path,
    plots: bool,
    quiet: bool,
    pcap: Sequence[str] = (),
    force: bool = False,
    runner: Runner = _simulate,
    figures: tuple[str, int, str] = ("png", 110, "wavelab"),
) -> Results:
    """Runs ``sc`` and writes its results into ``out``, holding the folder's
    lock from the check to the last file (another writer is refused, and
    refuses this one). ``out`` must not hold another scenario's results
    unless ``force`` (checked before the run, so nothing is computed for
    nothing; see ``ownership``); those stay until the new results are
    written, and come back if they cannot be (a full disk), so the folder
    holds the old results or the new ones, never a mix. Every file appears
    whole or not at all (written under a temporary name, renamed when
    complete). ``figures`` is the plots' format, resolution and style (``--format``,
    ``--dpi``, ``--style``)."""
    figure_format(figures[0])  # both checked before the run, not after it
    check_dpi(figures[1])
    with folder_lock(out):
        return _run_and_write_locked(sc, out, plots, quiet, pcap, force, runner, figures)


def _run_and_write_locked(
    sc: Scenario,
    out: Path,
    plots: bool,
    quiet: bool,
    pcap: Sequence[str],
    force: bool,
    runner: Runner,
    figures: tuple[str, int, str],
) -> Results:
    others = foreign_files(out, sc.normalized, force)

    final = {t: inside(out, capture_file_name(t)) for t in dict.fromkeys(pcap)}
    pending = {t: temporary_name(p) for t, p in final.items()}
    failed_captures = []
    try:
        res = runner(sc, not quiet, pending)
        files: list[Path] = []
        try:
            with replacing(out, others):
                if not quiet:
                    what = "tables and plots" if plots else "tables"
                    status(f"writing the {what} to {out}/ ...")
                files = res.to_parquet(out)
                for c in res.run.get("captures", []):
                    tmp = Path(c["path"])
                    path = final[c["target"]]
                    c["path"] = str(path)
                    if "error" in c:
                        # the tables are this run's: a capture of an earlier
                        # run must not stay beside them
                        path.unlink(missing_ok=True)
                        failed_captures.append(c)
                        continue
                    try:
                        commit(tmp, path)
                    except OSError as e:
                        c["error"] = e.strerror or str(e)
                        failed_captures.append(c)
                        continue
                    files.append(path)
                    if not quiet:
                        print(f"capture {c['target']}: {c['packets']:,} packets -> {path}")
                if plots:
                    from wavelab.plot.run_plots import plot_all

                    files += plot_all(
                        res, out, fmt=figures[0], dpi=figures[1], style_name=figures[2]
                    )
        except OSError as e:
            if others:
                kept = "the results that were there are kept as they were"
            elif files:
                kept = "the tables were written, the plots not all (each file is whole)"
            else:
                kept = "the files there are as they were"
            raise WavelabError(f"{out}: cannot write the results: {_reason(e)}; {kept}") from None
    finally:
        for tmp in pending.values():
            with contextlib.suppress(OSError):
                tmp.unlink()
    stopped = res.run.get("stopped")
    if not res.complete and not stopped:
        print(
            f"interrupted at {res.run['simulated']:.3f} s of {sc.duration:g} s; "
            f"the partial results were written to {out}",
            file=sys.stderr,
        )
    if not quiet:
        _print_summary(res)
        if res.emulated:
            print(f"\n{_emulation_line(res)}; wrote {len(files)} files to {out}/")
        else:
            print(
                f"\n{res.run['packet_hops']:,} packet hops, {res.run['events']:,} events "
                f"in {res.run['wall_seconds']:.2f} s; wrote {len(files)} files to {out}/"
            )
    if res.emulated:
        _emulation_warnings(res)
    if failed_captures:
        c = failed_captures[0]
        raise WavelabError(
            f"{c['path']}: the capture could not be written ({c['error']}); "
            f"the run's results were written to {out}/"
        )
    if stopped:
        raise WavelabError(f"{stopped}; the partial results were written to {out}/")
    return res


def _reason(e: OSError) -> str:
    """An ``OSError``'s reason in plain words (no file name: the caller names the folder)."""
    if e.errno == errno.ENOSPC:
        return "no space left on device"
    if e.errno == errno.EROFS:
        return "read-only file system"
    return e.strerror or str(e)


def _emulation_line(res: Results) -> str:
    """An emulation's figures in one line."""
    e = res.run["emulation"]
    rt = (
        f"real-time priority {e['realtime']}"
        if e.get("realtime") is not None
        else f"no real-time priority ({e.get('realtime_refused', '')})"
    )
    return (
        f"{res.run['packet_hops']:,} packet hops on the emulated links in "
        f"{e['wall_seconds']:.1f} s; release lateness p50 {e['lateness_p50'] * 1e6:.1f} us, "
        f"p99 {e['lateness_p99'] * 1e6:.1f} us, p99.9 {e['lateness_p999'] * 1e6:.1f} us, "
        f"max {e['lateness_max'] * 1e6:.0f} us ({rt}; load {' '.join(e['loadavg'].split()[:3])})"
    )


def _emulation_warnings(res: Results) -> None:
    """Notes, flow errors and the lateness flag of an emulation, on stderr."""
    e = res.run["emulation"]
    for n in e.get("notes", []):
        print(f"note: {n}", file=sys.stderr)
    for n in e.get("errors", []):
        print(f"error: {n}", file=sys.stderr)
    if e.get("realtime_demotions"):
        print(
            f"note: real-time priority was given up in {e['realtime_demotions']} windows of "
            "100 ms to stay under the kernel's real-time limit (docs/emulation.md)",
            file=sys.stderr,
        )
    if e.get("flagged"):
        print(
            f"warning: the release lateness exceeded its bound (p99 "
            f"{e['lateness_p99'] * 1e6:.0f} us > {e['lateness_bound'] * 1e6:.0f} us): this "
            "run's timings are not the scenario's; it is flagged in run.json",
            file=sys.stderr,
        )


def cmd_emulate(args: argparse.Namespace) -> int:
    """``wavelab emulate``."""
    from wavelab.emulator import runs as emulator

    if args.cleanup:
        found = emulator.cleanup(all_runs=False)
        for pid, cmdline, owner in found:
            print(f"killed {pid} ({cmdline}), left by emulation {owner}")
        print(
            f"{len(found)} process{'es' if len(found) != 1 else ''} left by earlier emulations; "
            "their namespaces and devices go with them"
        )
        return 0
    if not args.scenario:
        raise WavelabError("give a scenario (file or built-in name), or --cleanup")
    for name, value in (("--spin", args.spin), ("--lateness-bound", args.lateness_bound)):
        if not value >= 0:
            raise WavelabError(f"{name} {value:g}: give microseconds, at least 0")
    # the changes apply before validation: a shipped scenario's default
    # algorithm (NewReno) is one the kernel does not have
    try:
        sc = load_scenario_or_builtin(args.scenario, emulation=True, changes=parse_sets(args.set))
    except PathError as e:
        raise WavelabError(f"--set {e}") from None
    out = Path(args.out) if args.out else Path("results") / f"{sc.name}-emulated"
    why = emulator.unavailable()
    if why:
        raise WavelabError(why)
    sim = None
    if args.compare:
        from wavelab.emulator.compare import simulation_of

        sim = simulation_of(sc)  # refused before the emulation runs, not after

    def runner(sc: Scenario, progress: bool, captures: dict[str, Path]) -> Results:
        with emulator.stop_on_termination():
            return emulator.emulate(
                sc,
                progress=progress,
                captures=captures,
                realtime=not args.no_realtime,
                spin=args.spin * 1e-6,
                lateness_bound=args.lateness_bound * 1e-6,
                logs=out,
            )

    res = _run_and_write(
        sc,
        out,
        not args.no_plots,
        args.quiet,
        args.pcap,
        force=args.force,
        runner=runner,
        figures=(args.format, args.dpi, args.style),
    )
    if sim is not None and res.complete:
        sim_res = _run_and_write(sim, out / "simulation", False, True, force=args.force)
        _write_comparison(sim_res, res, out / "compare")
    return 0 if res.complete else INTERRUPTED


def _write_comparison(sim: Results, emu: Results, out: Path) -> None:
    from wavelab.emulator.compare import write

    try:
        with folder_lock(out):
            c, files = write(sim, emu, out)
    except OSError as e:
        raise WavelabError(
            f"{out}: cannot write the comparison: {_reason(e)}; no file was left half-written"
        ) from None
    with pd.option_context("display.width", 160, "display.max_rows", 200):
        print(c.table.to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    if c.flagged:
        print(f"warning: {c.flagged}", file=sys.stderr)
    print(f"wrote {len(files)} files to {out}/")


def _simulation_and_emulation(args: argparse.Namespace) -> tuple[Results, Results] | None:
    """The two runs of ``compare SIMULATION EMULATION``, read, when the
    arguments are those (a run folder each, the second emulated, no label);
    None for any other comparison."""
    if len(args.runs) != 2 or args.label:
        return None
    dirs = [Path(a) for a in args.runs]
    if not all((d / "run.json").is_file() for d in dirs):
        return None
    runs = []
    for d in dirs:
        check_free(d)  # not results another process is writing
        runs.append(Results.read_parquet(d))
    sim, emu = runs
    if sim.emulated or not emu.emulated:
        return None
    return sim, emu


def cmd_compare(args: argparse.Namespace) -> int:
    """``wavelab compare``."""
    pair = _simulation_and_emulation(args)
    if pair is not None:
        sim, emu = pair
        if sim.scenario.normalized["links"] != emu.scenario.normalized["links"]:
            print("warning: the two runs' links differ", file=sys.stderr)
        out = Path(args.out) if args.out else Path(args.runs[1]) / "compare"
        _write_comparison(sim, emu, out)
        return 0
    from wavelab.comparison import Comparison, resolve
    from wavelab.comparison.output import check_out, write

    out = Path(args.out) if args.out else DEFAULT_ROOT / "compare"
    check_out(out)  # refused before anything is read
    for a in args.runs:
        if Path(a).is_dir():
            check_free(Path(a))
    c = Comparison(resolve(args.runs, args.label))
    try:
        with folder_lock(out):
            files, notes = write(c, out)
    except OSError as e:
        raise WavelabError(
            f"{out}: cannot write the comparison: {_reason(e)}; each file written is whole"
        ) from None
    prefix, _ = c.short_labels()
    if prefix:
        print(f"runs: {', '.join(c.labels)} (headed below without {prefix!r})")
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(c.wide().to_string(index=False, float_format=_figure, na_rep="-"))
    for entry in c.entries:
        if len(entry.runs) > 1:
            print(f"{entry.label}: the mean over {len(entry.runs)} runs")
    for note in notes:
        print(note)
    print(f"wrote {len(files)} files to {out}/")
    return 0


def _figure(x: float) -> str:
    """A table figure for the terminal: four significant digits, no
    exponent for everyday magnitudes, ``-`` for none."""
    if x != x:
        return "-"
    if x == 0 or 1e-4 <= abs(x) < 1e7:
        return f"{x:.4g}" if abs(x) < 1e4 else f"{x:,.0f}"
    return f"{x:.3e}"


def cmd_run(args: argparse.Namespace) -> int:
    """``wavelab run``."""
    if args.cc_file:
        from wavelab.custom_cc import load_cc_file

        for f in args.cc_file:
            load_cc_file(f)
    sc = _apply_sets(load_scenario_or_builtin(args.scenario), args.set)
    # a scenario's name is a label: results/<a safe directory name made of it>;
    # a variant (--set) gets a directory of its own, named after its scenario
    out = Path(args.out) if args.out else default_run_dir(sc.name)
    if not args.out and args.set:
        out = out.with_name(f"{out.name}-{scenario_digest(sc.normalized)[:8]}")
    res = _run_and_write(
        sc,
        out,
        not args.no_plots,
        args.quiet,
        args.pcap,
        force=args.force,
        figures=(args.format, args.dpi, args.style),
    )
    return 0 if res.complete else INTERRUPTED


def cmd_demo(args: argparse.Namespace) -> int:
    """``wavelab demo``."""
    if args.show:
        print(demo_toml(), end="")
        return 0
    sc = demo_scenario()
    out = Path(args.out)
    res = _run_and_write(
        sc, out, True, args.quiet, force=args.force, figures=(args.format, args.dpi, args.style)
    )
    return 0 if res.complete else INTERRUPTED


def cmd_validate(args: argparse.Namespace) -> int:
    """``wavelab validate``."""
    failed = 0
    for path in args.scenarios:
        try:
            sc = load_scenario(path)
            n_links, n_flows = len(sc.normalized["links"]), len(sc.normalized["flows"])
            links = f"{n_links} link{'s' if n_links != 1 else ''}"
            flows = f"{n_flows} flow{'s' if n_flows != 1 else ''}"
            print(f"{path}: ok ({links}, {flows}, {sc.duration:g} s)")
        except WavelabError as e:
            print(f"error: {e}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0


def cmd_scenarios(args: argparse.Namespace) -> int:
    """``wavelab scenarios``."""
    if args.name:
        print(builtin_toml(args.name), end="")
        return 0
    for name in builtin_names():
        sc = builtin_scenario(name)
        print(f"{name:24} {sc.normalized.get('description') or ''}")
    return 0


def cmd_algorithms(_args: argparse.Namespace) -> int:
    """``wavelab algorithms``."""
    for a in algorithms():
        print(a)
    return 0
