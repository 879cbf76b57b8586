"""The ``wavelab`` command line."""

from __future__ import annotations

import argparse
import contextlib
import sys
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from wavelab import __version__, algorithms, pipe
from wavelab.arrow_memory import use_system_allocator
from wavelab.errors import WavelabError
from wavelab.outputs import (
    FIGURE_FORMATS,
    check_dpi,
    commit,
    default_run_dir,
    figure_dpi,
    figure_format,
    inside,
    temporary_name,
)
from wavelab.ownership import claim_run_dir, scenario_digest
from wavelab.paths import PathError
from wavelab.results import RUN_COLUMNS, Results
from wavelab.runner import run
from wavelab.scenario import (
    Scenario,
    builtin_names,
    builtin_scenario,
    demo_scenario,
    demo_toml,
    load_scenario,
    load_scenario_or_builtin,
)


def _parse_value(text: str) -> Any:
    """A ``--set`` value: a TOML value if it parses as one, else a string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _parse_sets(sets: Sequence[str]) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    for item in sets:
        if "=" not in item:
            raise WavelabError(
                f"--set {item!r}: write PATH=VALUE, e.g. --set links[1].rate=8Mbit/s"
            )
        path, value = item.split("=", 1)
        changes[path.strip()] = _parse_value(value.strip())
    return changes


def _apply_sets(sc: Scenario, sets: Sequence[str]) -> Scenario:
    changes = _parse_sets(sets)
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
    counters = frame.drop(columns=[c for c in (*rtt, *RUN_COLUMNS) if c in frame])
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(counters.to_string(index=False))
        print(frame[list(RTT_COLUMNS)].to_string(index=False))
    # no line when the run has no bottleneck figures (an emulation's links
    # table has no queueing delay)
    if "bottleneck" in frame and len(frame) and isinstance(frame["bottleneck"].iloc[0], str):
        print(_run_line(frame.iloc[0]))


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
    figures: tuple[str, int] = ("png", 110),
) -> Results:
    """Runs ``sc`` and writes its results into ``out``, which must not hold
    another scenario's results unless ``force`` (checked before the run, so
    nothing is computed for nothing; see ``ownership``). Every file appears
    whole or not at all (written under a temporary name, renamed when
    complete): a full disk leaves the previous files, never empty ones.
    ``figures`` is the plots' format and resolution (``--format``, ``--dpi``)."""
    from wavelab.backends import capture_file_name

    figure_format(figures[0])  # both checked before the run, not after it
    check_dpi(figures[1])

    claim_run_dir(out, sc.normalized, force)

    final = {t: inside(out, capture_file_name(t)) for t in dict.fromkeys(pcap)}
    if final:
        out.mkdir(parents=True, exist_ok=True)
    pending = {t: temporary_name(p) for t, p in final.items()}
    try:
        res = runner(sc, not quiet, pending)
        try:
            files = res.to_parquet(out)
        except OSError as e:
            raise WavelabError(f"{out}: cannot write the results: {e.strerror or e}") from None
        failed_captures = []
        for c in res.run.get("captures", []):
            tmp = Path(c["path"])
            path = final[c["target"]]
            c["path"] = str(path)
            if "error" in c:
                # the tables are this run's: a capture of an earlier run
                # must not stay beside them
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
    finally:
        for tmp in pending.values():
            with contextlib.suppress(OSError):
                tmp.unlink()
    if plots:
        from wavelab.plots import plot_all

        try:
            files += plot_all(res, out, fmt=figures[0], dpi=figures[1])
        except OSError as e:
            raise WavelabError(
                f"{out}: cannot write the plots: {e.strerror or e}; the tables were written"
            ) from None
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
    from wavelab import emulator

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
        sc = load_scenario_or_builtin(args.scenario, emulation=True, changes=_parse_sets(args.set))
    except PathError as e:
        raise WavelabError(f"--set {e}") from None
    out = Path(args.out) if args.out else Path("results") / f"{sc.name}-emulated"
    why = emulator.unavailable()
    if why:
        raise WavelabError(why)
    sim = None
    if args.compare:
        from wavelab.compare import simulation_of

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
        figures=(args.format, args.dpi),
    )
    if sim is not None and res.complete:
        sim_res = _run_and_write(sim, out / "simulation", False, True, force=args.force)
        _write_comparison(sim_res, res, out / "compare")
    return 0 if res.complete else 130


def _write_comparison(sim: Results, emu: Results, out: Path) -> None:
    from wavelab.compare import write

    c, files = write(sim, emu, out)
    with pd.option_context("display.width", 160, "display.max_rows", 200):
        print(c.table.to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    if c.flagged:
        print(f"warning: {c.flagged}", file=sys.stderr)
    print(f"wrote {len(files)} files to {out}/")


def cmd_compare(args: argparse.Namespace) -> int:
    """``wavelab compare``."""
    runs = []
    for d in (Path(args.simulation), Path(args.emulation)):
        if not (d / "run.json").exists():
            raise WavelabError(f"{d}: no results here (expected run.json)")
        runs.append(Results.read_parquet(d))
    sim, emu = runs
    if sim.emulated or not emu.emulated:
        raise WavelabError(
            "give a simulation's results first and an emulation's second "
            f"({args.simulation} is {'an emulation' if sim.emulated else 'a simulation'}, "
            f"{args.emulation} is {'an emulation' if emu.emulated else 'a simulation'})"
        )
    if sim.scenario.normalized["links"] != emu.scenario.normalized["links"]:
        print("warning: the two runs' links differ", file=sys.stderr)
    out = Path(args.out) if args.out else Path(args.emulation) / "compare"
    _write_comparison(sim, emu, out)
    return 0


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
        figures=(args.format, args.dpi),
    )
    return 0 if res.complete else 130


def cmd_sweep(args: argparse.Namespace) -> int:
    """``wavelab sweep``."""
    from wavelab.backends import DaskCluster, LocalPool
    from wavelab.sweep import load_sweep
    from wavelab.sweep_runner import plan_sweep, run_sweep, summary_line

    sweep = load_sweep(args.sweep)
    if args.list:
        plan = plan_sweep(sweep)
        table = pd.DataFrame([{"point": p.index, **p.params, "run": p.key} for p in plan.points])
        with pd.option_context("display.width", 200, "display.max_rows", 10_000):
            print(table.to_string(index=False))
        extra = f" (+{plan.baselines} baselines)" if plan.baselines else ""
        print(f"\n{len(plan.points)} points{extra}, {len(plan.runs)} distinct runs")
        return 0
    if not args.out:
        raise WavelabError("--out DIR is required: where the runs and the table go")
    if args.cluster and args.jobs:
        raise WavelabError("--jobs is for the local pool; a --cluster runs on its workers")
    backend = (
        DaskCluster(args.cluster, args.cluster_timeout) if args.cluster else LocalPool(args.jobs)
    )
    try:
        outcome = run_sweep(
            sweep, Path(args.out), backend, args.pcap, progress=not args.quiet, force=args.force
        )
    finally:
        backend.close()
    if not args.quiet and len(outcome.table) <= 40:
        cols = [c for c in outcome.table.columns if ":" not in c and c not in ("events",)]
        with pd.option_context("display.width", 200, "display.max_columns", 30):
            print(outcome.table[cols].to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    print(summary_line(outcome), file=sys.stderr)
    if outcome.files:
        print(f"wrote {Path(args.out) / 'runs.parquet'} and runs.csv ({len(outcome.table)} rows)")
        if any(f.name == "seeds.parquet" for f in outcome.files):
            print(
                f"wrote {Path(args.out) / 'seeds.parquet'} and seeds.csv "
                "(mean and 95 % CI per point)"
            )
    if outcome.stopped:
        print(f"error: {outcome.stopped}", file=sys.stderr)
        return 130 if outcome.interrupted else 2
    if outcome.failed:
        print(
            f"error: {len(outcome.failed)} runs failed (status 'failed' in runs.csv)",
            file=sys.stderr,
        )
        return 1
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    """``wavelab report``."""
    from wavelab.report import write_report

    d = Path(args.results)
    out = Path(args.out) if args.out else d / "report.html"
    path = write_report(d, out, max_runs=args.max_runs)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB)")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """``wavelab demo``."""
    if args.show:
        print(demo_toml(), end="")
        return 0
    sc = demo_scenario()
    out = Path(args.out)
    res = _run_and_write(
        sc, out, True, args.quiet, force=args.force, figures=(args.format, args.dpi)
    )
    return 0 if res.complete else 130


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


def cmd_plot(args: argparse.Namespace) -> int:
    """``wavelab plot``."""
    from wavelab.plots import plot_all

    d = Path(args.results)
    if (d / "runs.parquet").exists() and not (d / "run.json").exists():
        # a sweep: its throughput-delay plot
        from wavelab.sweep_plots import plot_throughput_delay

        out = (Path(args.out) if args.out else d) / f"throughput-delay.{figure_format(args.format)}"
        out.parent.mkdir(parents=True, exist_ok=True)
        with figure_dpi(args.dpi):
            print(plot_throughput_delay(d, out, delay=args.delay))
        return 0
    if not (d / "run.json").exists():
        raise WavelabError(f"{d}: no results here (expected run.json written by `wavelab run`)")
    window = None
    if args.start is not None or args.end is not None:
        window = (args.start or 0.0, args.end if args.end is not None else float("inf"))
        if window[0] >= window[1]:
            raise WavelabError(f"--start {window[0]:g} is not before --end {window[1]:g}")
    files = plot_all(
        Results.read_parquet(d), Path(args.out) if args.out else d, window, args.format, args.dpi
    )
    for f in files:
        print(f)
    return 0


def cmd_scenarios(args: argparse.Namespace) -> int:
    """``wavelab scenarios``."""
    if args.name:
        from wavelab.scenario import builtin_toml

        print(builtin_toml(args.name), end="")
        return 0
    for name in builtin_names():
        sc = builtin_scenario(name)
        print(f"{name:24} {sc.normalized.get('description') or ''}")
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    """``wavelab reproduce``."""
    from wavelab.experiments import EXPERIMENTS, SWEEP_EXPERIMENTS, experiment

    if args.list or not args.experiment:
        for name, (_, what) in EXPERIMENTS.items():
            print(f"{name:12} {what}")
        return 0
    out = Path(args.out) if args.out else Path("results") / args.experiment
    if args.emulate:
        from wavelab.emulator import unavailable
        from wavelab.experiments import emulated_experiment

        if args.cluster:
            raise WavelabError("--emulate runs on this machine; it does not take --cluster")
        reproduce = emulated_experiment(args.experiment)
        why = unavailable()
        if why is not None:
            raise WavelabError(f"--emulate: {why}")
    else:
        reproduce = experiment(args.experiment)
    if args.cluster:
        if args.jobs:
            raise WavelabError("--jobs is for the local pool; a --cluster runs on its workers")
        if args.experiment not in SWEEP_EXPERIMENTS:
            raise WavelabError(
                f"--cluster: {args.experiment} runs on the local cores only; "
                f"{', '.join(SWEEP_EXPERIMENTS)} can run on a Dask cluster"
            )
        reproduce(out, args.quick, None, args.cluster, args.cluster_timeout)  # type: ignore[call-arg]
    else:
        reproduce(out, args.quick, args.jobs)
    if args.experiment in SWEEP_EXPERIMENTS:
        print(
            f"\nwrote the comparison and the figures to {out}/, every run's metrics to {out}/sweep/"
        )
    else:
        print(f"\nwrote the comparison, the figures and every run's results to {out}/")
    return 0


def cmd_algorithms(_args: argparse.Namespace) -> int:
    """``wavelab algorithms``."""
    for a in algorithms():
        print(a)
    return 0


def cmd_bpf(args: argparse.Namespace) -> int:
    from wavelab import bpf

    if args.action == "build":
        print(f"built {bpf.build()}")
        return 0
    return bpf.run_loader([args.action, *args.options])


def cmd_bench(args: argparse.Namespace) -> int:
    """``wavelab bench``."""
    from wavelab.bench import (
        CASES,
        PYTHON_CASES,
        custom_cc,
        format_layer_table,
        format_table,
        python_overhead,
        reproduce_memory,
        run_case,
        sweep,
    )

    if args.scaling:
        from wavelab import scaling

        try:
            points = scaling.measure(quick=args.quick, repeat=args.repeat)
            csv, png = scaling.write(points, Path(args.scaling))
        except OSError as e:
            raise WavelabError(f"--scaling {args.scaling}: {e}") from e
        print(format_table([p.figures for p in points]))
        print(f"wrote {csv} and {png}")
        return 0
    if args.quick:
        raise WavelabError("--quick goes with --scaling DIR")
    cases = args.case or [*CASES, *PYTHON_CASES]
    for case in cases:
        if case not in CASES and case not in PYTHON_CASES:
            choices = ", ".join([*CASES, *PYTHON_CASES])
            raise WavelabError(f"--case {case!r} is not a benchmark; choose from {choices}")
    if args.repeat < 1:
        raise WavelabError(f"--repeat {args.repeat} must be at least 1")
    rows = []
    for case in [c for c in cases if c in CASES]:
        print(f"running {case}: {CASES[case][0]} ...", file=sys.stderr)
        best = min((run_case(case) for _ in range(args.repeat)), key=lambda f: f.wall_s)
        rows.append(best)
    if rows:
        print(format_table(rows))
    layer = []
    if "python-overhead" in cases:
        print(f"running python-overhead: {PYTHON_CASES['python-overhead']} ...", file=sys.stderr)
        layer.extend(python_overhead(args.repeat))
    if "sweep" in cases:
        print(f"running sweep: {PYTHON_CASES['sweep']} ...", file=sys.stderr)
        layer.append(sweep(args.sweep_runs, args.jobs))
    if layer:
        if rows:
            print()
        print(format_layer_table(layer))
    if "custom-cc" in cases:
        print(f"running custom-cc: {PYTHON_CASES['custom-cc']} ...", file=sys.stderr)
        print(custom_cc(args.repeat).lines())
    if "reproduce-memory" in cases:
        print(f"running reproduce-memory: {PYTHON_CASES['reproduce-memory']} ...", file=sys.stderr)
        print(reproduce_memory().line())
    return 0


def _figure_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--format",
        default="png",
        choices=FIGURE_FORMATS,
        help="the plots' file format (default png; pdf and svg are vector, for papers)",
    )
    p.add_argument(
        "--dpi", type=int, default=110, help="the plots' resolution in dots per inch (default 110)"
    )


def _run_options(p: argparse.ArgumentParser, cc: str) -> None:
    """The options `run` and `emulate` share."""
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help=f"change a field before running, e.g. --set flows[0].cc={cc} (repeatable)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="write even if the output directory holds another scenario's results "
        "(wavelab's files there are removed first)",
    )
    p.add_argument("--no-plots", action="store_true", help="skip the plots")
    _figure_options(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    p.add_argument(
        "--pcap",
        action="append",
        default=[],
        metavar="FLOW_OR_LINK",
        help="write a pcap of a flow's sender (flow:NAME) or of a link (link:NAME, "
        "link:NAME:forward); a bare name works when unambiguous (repeatable)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for documentation and tests)."""
    p = argparse.ArgumentParser(
        prog="wavelab",
        description="Simulate TCP over changing links: run scenarios and sweeps, emulate "
        "them on real packets, plot, report and benchmark.",
    )
    p.add_argument("--version", action="version", version=f"wavelab {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)

    r = sub.add_parser("run", help="run a scenario file; write results and plots")
    r.add_argument("scenario", help="scenario file (TOML), or a built-in scenario's name")
    r.add_argument("--out", help="output directory (default results/NAME)")
    _run_options(r, "reno")
    r.add_argument(
        "--cc-file",
        action="append",
        default=[],
        metavar="FILE.py",
        help="first run this Python file, which registers congestion controls written "
        "in Python (docs/custom-cc.md; repeatable)",
    )
    r.set_defaults(func=cmd_run)

    em = sub.add_parser(
        "emulate",
        help="run a scenario on real packets: kernel TCP between network namespaces, "
        "the links on the wall clock (root)",
    )
    em.add_argument("scenario", nargs="?", help="scenario file (TOML), or a built-in's name")
    em.add_argument("--out", help="output directory (default results/NAME-emulated)")
    _run_options(em, "cubic")
    em.add_argument(
        "--no-realtime",
        action="store_true",
        help="do not ask for real-time priority for the thread that releases packets",
    )
    em.add_argument(
        "--spin",
        type=float,
        default=50.0,
        metavar="US",
        help="microseconds before each release the thread stops sleeping and spins (default 50)",
    )
    em.add_argument(
        "--lateness-bound",
        type=float,
        default=500.0,
        metavar="US",
        help="flag the run if the 99th percentile of release lateness exceeds this "
        "(microseconds, default 500)",
    )
    em.add_argument(
        "--compare",
        action="store_true",
        help="also simulate the scenario and compare (OUT/simulation, OUT/compare)",
    )
    em.add_argument(
        "--cleanup",
        action="store_true",
        help="kill what earlier runs left behind (see docs/emulation.md) and exit",
    )
    em.set_defaults(func=cmd_emulate)

    cmp = sub.add_parser(
        "compare", help="put a simulation and an emulation of one scenario side by side"
    )
    cmp.add_argument("simulation", help="results directory of `wavelab run`")
    cmp.add_argument("emulation", help="results directory of `wavelab emulate`")
    cmp.add_argument("--out", help="where to write the comparison (default EMULATION/compare)")
    cmp.set_defaults(func=cmd_compare)

    sw = sub.add_parser(
        "sweep", help="run every point of a sweep file; store each run, write a table"
    )
    sw.add_argument("sweep", help="sweep file (a scenario with a [sweep] table), or a built-in")
    sw.add_argument("--out", help="results directory (also the store: re-runs resume)")
    sw.add_argument("--jobs", type=int, help="parallel local runs (default: all cores)")
    sw.add_argument(
        "--cluster", metavar="ADDRESS", help="run on a Dask scheduler, e.g. tcp://host:8786"
    )
    sw.add_argument(
        "--cluster-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how long to wait for the scheduler and a worker (default 10)",
    )
    sw.add_argument(
        "--pcap",
        action="append",
        default=[],
        metavar="FLOW_OR_LINK",
        help="also write this capture for every run (see `wavelab run --pcap`)",
    )
    sw.add_argument(
        "--force",
        action="store_true",
        help="use --out even if it holds another scenario's results or sweep "
        "(wavelab's files there are removed first)",
    )
    sw.add_argument("--list", action="store_true", help="print the points and exit")
    sw.add_argument("--quiet", action="store_true", help="no progress bar or table")
    sw.set_defaults(func=cmd_sweep)

    rep = sub.add_parser(
        "report", help="write a self-contained HTML report of a sweep, run or reproduction"
    )
    rep.add_argument("results", help="directory of `wavelab sweep`, `run` or `reproduce`")
    rep.add_argument("--out", help="HTML file (default RESULTS/report.html)")
    rep.add_argument(
        "--max-runs",
        type=int,
        default=200,
        help="embed the time series of at most this many runs (default 200)",
    )
    rep.set_defaults(func=cmd_report)

    d = sub.add_parser("demo", help="run the built-in demo scenario and write its plots")
    d.add_argument("--out", default="demo-results", help="output directory (default demo-results)")
    d.add_argument("--show", action="store_true", help="print the demo scenario's TOML and exit")
    d.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    _figure_options(d)
    d.add_argument(
        "--force",
        action="store_true",
        help="write even if --out holds other results (wavelab's files there are removed first)",
    )
    d.set_defaults(func=cmd_demo)

    v = sub.add_parser("validate", help="check scenario files without running them")
    v.add_argument("scenarios", nargs="+", help="scenario files")
    v.set_defaults(func=cmd_validate)

    pl = sub.add_parser(
        "plot",
        help="redraw the plots of a run's directory; a sweep's: its throughput-delay plot",
    )
    pl.add_argument("results", help="directory written by `wavelab run` or `wavelab sweep`")
    pl.add_argument(
        "--delay",
        default="rtt_p95_ms",
        help="a sweep's delay axis: a column of runs.parquet (default rtt_p95_ms; "
        "e.g. queue_delay_p95_ms)",
    )
    pl.add_argument("--out", help="where to write the plots (default: the results directory)")
    _figure_options(pl)
    pl.add_argument("--start", type=float, help="plot from this simulated time (s)")
    pl.add_argument("--end", type=float, help="plot up to this simulated time (s)")
    pl.set_defaults(func=cmd_plot)

    sc = sub.add_parser("scenarios", help="list the built-in scenarios, or print one")
    sc.add_argument("name", nargs="?", help="print this scenario's TOML")
    sc.set_defaults(func=cmd_scenarios)

    a = sub.add_parser("algorithms", help="list the congestion-control algorithms")
    a.set_defaults(func=cmd_algorithms)

    rp = sub.add_parser("reproduce", help="reproduce a published experiment (list: --list)")
    rp.add_argument("experiment", nargs="?", help="experiment name, e.g. wave-page")
    rp.add_argument("--out", help="output directory (default results/NAME)")
    rp.add_argument("--quick", action="store_true", help="a shorter version, for demos")
    rp.add_argument("--jobs", type=int, help="parallel runs (default: all cores)")
    rp.add_argument("--list", action="store_true", help="list the experiments")
    rp.add_argument(
        "--emulate",
        action="store_true",
        help="run the rows the kernel has on real packets (root; dcnet2016; "
        "--jobs default: one emulation per two cores)",
    )
    rp.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="run on a Dask scheduler, e.g. tcp://host:8786 (experiments run as sweeps)",
    )
    rp.add_argument(
        "--cluster-timeout",
        type=float,
        metavar="SECONDS",
        help="seconds to wait for the scheduler and a first worker (default 10)",
    )
    rp.set_defaults(func=cmd_reproduce)

    b = sub.add_parser("bench", help="measure simulator speed and memory (prints figures)")
    b.add_argument("--case", action="append", help="run only this case (repeatable)")
    b.add_argument("--repeat", type=int, default=3, help="runs per case; the fastest is shown")
    b.add_argument(
        "--sweep-runs", type=int, default=1000, help="runs in the sweep case (default 1000)"
    )
    b.add_argument("--jobs", type=int, help="workers for the sweep case (default: all cores)")
    b.add_argument(
        "--scaling",
        metavar="DIR",
        help="instead of the cases: measure wall time against flows, link rate and "
        "simulated time; write DIR/scaling.csv and DIR/scaling.png",
    )
    b.add_argument("--quick", action="store_true", help="with --scaling: small grids only")
    b.set_defaults(func=cmd_bench)

    bp = sub.add_parser(
        "bpf",
        help="TCP Wave for stock Linux: load, unload, status of the BPF congestion control",
        description="TCP Wave as a BPF struct_ops congestion control in the running kernel "
        "(root, kernel 5.13+ with BTF). `build` compiles the loader from the source "
        "checkout; `load` takes the scenario's Wave parameters, e.g. "
        "`wavelab bpf load --variant linux-4.12 --beta 200ms`.",
    )
    bp.add_argument("action", choices=["load", "unload", "status", "check", "build"])
    bp.add_argument("options", nargs=argparse.REMAINDER, help="passed to wavelab-bpf")
    bp.set_defaults(func=cmd_bpf)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``wavelab`` command."""
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    original = sys.stdout
    quiet = pipe.install()
    use_system_allocator()
    try:
        if not argv:
            # `wavelab` alone: what it can do, not an error
            parser.print_help()
            return 0
        args = parser.parse_args(argv)
        try:
            code: int = args.func(args)
        except WavelabError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("interrupted", file=sys.stderr)
            return 130
        return code
    finally:
        sys.stdout.flush()
        if not quiet.closed_by_reader:
            sys.stdout = original


if __name__ == "__main__":
    sys.exit(main())
