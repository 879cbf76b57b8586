"""Commands on many runs: ``wavelab sweep``, ``reproduce``, ``report`` and
``plot``."""

from __future__ import annotations

import argparse
import errno
import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from wavelab._util.folder_lock import check_free, folder_lock
from wavelab._util.progress_bars import status
from wavelab._util.table_text import table_text
from wavelab.cli.signals import INTERRUPTED
from wavelab.errors import WavelabError
from wavelab.plot.figure_files import figure_dpi, figure_format
from wavelab.results.frames import Results
from wavelab.results.ownership import refuse_foreign

if TYPE_CHECKING:
    from wavelab.sweep.grid import Sweep

Command = Callable[[argparse.Namespace], int]


def holding(folder: Callable[[argparse.Namespace], Path | None]) -> Callable[[Command], Command]:
    """A command that holds the lock of the folder ``folder(args)`` returns
    (None: none) while it runs."""

    def wrap(command: Command) -> Command:
        @functools.wraps(command)
        def locked(args: argparse.Namespace) -> int:
            out = folder(args)
            if out is None:
                return command(args)
            with folder_lock(out):
                return command(args)

        return locked

    return wrap


def cmd_sweep(args: argparse.Namespace) -> int:
    """``wavelab sweep``."""
    from wavelab.sweep.backends import DaskCluster, LocalPool
    from wavelab.sweep.grid import load_sweep
    from wavelab.sweep.runner import run_sweep, summary_line

    sweep = load_sweep(args.sweep)
    if args.list:
        _list_points(sweep)
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
            print(table_text(outcome.table[cols]))
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
        return INTERRUPTED if outcome.interrupted else 2
    if outcome.failed:
        print(
            f"error: {len(outcome.failed)} runs failed (status 'failed' in runs.csv)",
            file=sys.stderr,
        )
        return 1
    return 0


def _list_points(sweep: Sweep) -> None:
    """``wavelab sweep --list``: the points, each parameter under the short
    name :func:`wavelab.load_results` gives its column (``[sweep.names]``,
    else the path's last field where no other parameter ends so), then
    which path each short name stands for."""
    from wavelab.sweep.names import column_names
    from wavelab.sweep.plan import plan_sweep

    plan = plan_sweep(sweep)
    columns = column_names(sweep.param_names, sweep.names)
    table = pd.DataFrame(
        [
            {"point": p.index, **{columns[k]: v for k, v in p.params.items()}, "run": p.key}
            for p in plan.points
        ]
    )
    with pd.option_context("display.width", 200, "display.max_rows", 10_000):
        print(table_text(table))
    short = [f"{name} = {path}" for path, name in columns.items() if name != path]
    if short:
        print("\nparameters: " + ", ".join(short))
    extra = f" (+{plan.baselines} baselines)" if plan.baselines else ""
    print(f"\n{len(plan.points)} points{extra}, {len(plan.runs)} distinct runs")


def cmd_report(args: argparse.Namespace) -> int:
    """``wavelab report``."""
    from wavelab.report.page import write_report

    dirs = [Path(r) for r in args.results]
    if len(dirs) > 1 and not args.out:
        raise WavelabError("--out: give the HTML file of a report of several runs")
    out = Path(args.out) if args.out else dirs[0] / "report.html"
    for d in dirs:
        if not d.is_dir():
            raise WavelabError(f"{d}: no such directory")
        check_free(d)  # not results another process is writing
    with folder_lock(out.parent):
        status(f"rendering the report of {', '.join(str(d) for d in dirs)} ...")
        path = write_report(dirs, out, max_runs=args.max_runs)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB)")
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    """``wavelab plot``: the figures are written under the output folder's
    lock, each whole or not at all; a write error is one line."""
    d = Path(args.results)
    out = Path(args.out) if args.out else d
    check_free(d)  # not results another process is writing
    if args.out:
        refuse_foreign(out)
    try:
        with folder_lock(out):
            return _plot(args, d)
    except OSError as e:
        why = "no space left on device" if e.errno == errno.ENOSPC else e.strerror or str(e)
        raise WavelabError(
            f"{out}: cannot write the plots: {why}; each plot written is whole, "
            "the others are as they were"
        ) from None


def _plot(args: argparse.Namespace, d: Path) -> int:
    from wavelab.plot.run_plots import plot_all

    if (d / "runs.parquet").exists() and not (d / "run.json").exists():
        # a sweep: its throughput-delay plot
        from wavelab.plot.style import style
        from wavelab.plot.throughput_delay import plot_throughput_delay

        out = (Path(args.out) if args.out else d) / f"throughput-delay.{figure_format(args.format)}"
        out.parent.mkdir(parents=True, exist_ok=True)
        with figure_dpi(args.dpi), style(args.style):
            plot_throughput_delay(d, out, delay=args.delay)
        print(out)
        return 0
    if not (d / "run.json").exists():
        raise WavelabError(f"{d}: no results here (expected run.json written by `wavelab run`)")
    window = None
    if args.start is not None or args.end is not None:
        window = (args.start or 0.0, args.end if args.end is not None else float("inf"))
        if window[0] >= window[1]:
            raise WavelabError(f"--start {window[0]:g} is not before --end {window[1]:g}")
    files = plot_all(
        Results.read_parquet(d),
        Path(args.out) if args.out else d,
        window,
        args.format,
        args.dpi,
        args.style,
    )
    for f in files:
        print(f)
    return 0


def _reproduce_out(args: argparse.Namespace) -> Path:
    if args.out:
        return Path(args.out)
    # measured paths are another study than drawn ones: their own folder
    name: str = args.experiment + ("-traces" if args.traces else "")
    return Path("results") / name


@holding(lambda args: None if args.list or not args.experiment else _reproduce_out(args))
def cmd_reproduce(args: argparse.Namespace) -> int:
    """``wavelab reproduce``."""
    from wavelab.experiments import EXPERIMENTS, STORES, TRACED, experiment
    from wavelab.experiments.runs import EMULATED_STORE, STORE
    from wavelab.plot.style import style

    if args.list or not args.experiment:
        for name, (_, what) in EXPERIMENTS.items():
            print(f"{name:12} {what}")
        return 0
    out = _reproduce_out(args)
    # a reproduction's folder holds its store(s) beside its figures
    refuse_foreign(out, own={STORE, EMULATED_STORE, *STORES.values()})
    if args.cluster and args.jobs:
        raise WavelabError("--jobs is for the local pool; a --cluster runs on its workers")
    if args.traces and (args.experiment not in TRACED or args.emulate):
        raise WavelabError(f"--traces: only {', '.join(TRACED)} runs over traces (simulated)")
    if args.emulate:
        from wavelab.emulator.runs import unavailable
        from wavelab.experiments import emulated_experiment

        if args.cluster:
            raise WavelabError("--emulate runs on this machine; it does not take --cluster")
        emulated = emulated_experiment(args.experiment)
        why = unavailable()
        if why is not None:
            raise WavelabError(f"--emulate: {why}")
        with style():  # the palette of every wavelab figure
            emulated(out, args.quick, args.jobs)
    else:
        run_experiment = experiment(args.experiment)
        traced = {"traces": Path(args.traces)} if args.traces else {}
        with style():
            run_experiment(out, args.quick, args.jobs, args.cluster, args.cluster_timeout, **traced)
    store = f"{out / STORES.get(args.experiment, 'store')}/"
    if args.emulate:
        store = f"{out / 'store-emulated'}/ and {out / 'store'}/"
    print(
        f"\nwrote the comparison and the figures to {out}/, every run to its store {store} "
        "(the same command again reuses them)"
    )
    return 0
