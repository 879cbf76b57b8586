"""The ``wavelab`` command's argument parser: its commands and options."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from typing import Any

from wavelab._native import __version__
from wavelab.plot.figure_files import FIGURE_FORMATS, STYLE_NAMES

Command = Callable[[argparse.Namespace], int]
"""What a command runs with its parsed arguments; its exit code."""

_COMMAND_MODULES = {
    "cmd_algorithms": "run_commands",
    "cmd_compare": "run_commands",
    "cmd_demo": "run_commands",
    "cmd_emulate": "run_commands",
    "cmd_run": "run_commands",
    "cmd_scenarios": "run_commands",
    "cmd_validate": "run_commands",
    "cmd_plot": "study_commands",
    "cmd_report": "study_commands",
    "cmd_reproduce": "study_commands",
    "cmd_sweep": "study_commands",
    "cmd_bench": "tool_commands",
    "cmd_bpf": "tool_commands",
}
"""Which module of :mod:`wavelab.cli` holds each command's function."""


def command(name: str) -> Command:
    """The command function ``name``, imported when it runs: the modules of
    the commands import pandas and pyarrow (0.6 s), which ``--help``, a
    mistyped option and the commands that read no table do not need."""
    module = f"wavelab.cli.{_COMMAND_MODULES[name]}"

    def run(args: argparse.Namespace) -> int:
        func: Command = getattr(importlib.import_module(module), name)
        return func(args)

    run.__name__ = run.__qualname__ = name
    return run


class _Parser(argparse.ArgumentParser):
    """An argument parser that takes options only as spelled in full: with
    argparse's default, ``--cc cubic`` on ``run`` would be read as the only
    option it abbreviates (``--cc-file cubic``) and ``--quic`` as ``--quick``,
    so a typo would silently change what runs. Subcommands' parsers are of
    this class too (``add_subparsers`` makes them of the parent's class)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)


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
    p.add_argument(
        "--style",
        default="wavelab",
        choices=STYLE_NAMES,
        help="the plots' look: wavelab (10 in wide, for a screen; the default) or paper "
        "(3.5 in wide with 8 pt text, for a one-column figure)",
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
    p = _Parser(
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
    r.set_defaults(func=command("cmd_run"))

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
    em.set_defaults(func=command("cmd_emulate"))

    cmp = sub.add_parser(
        "compare",
        help="put runs side by side: overlaid series, RTT CDFs, box plots, metric differences",
        description="Compares run folders (simulated or emulated) or a sweep's or study's "
        "runs (DIR, or DIR:key=value[,key=value] to select; a store whose runs differ in "
        "their algorithm gives one entry per algorithm). Two arguments SIMULATION EMULATION "
        "of one scenario keep the simulation-against-emulation table (default "
        "EMULATION/compare).",
    )
    cmp.add_argument("runs", nargs="+", metavar="RUN", help="run folder, or store[:selector]")
    cmp.add_argument(
        "--label",
        action="append",
        default=[],
        help="label of an entry, once per entry in order (default: the folder's name)",
    )
    cmp.add_argument(
        "--out",
        help="where to write the comparison (default results/compare; "
        "EMULATION/compare for a simulation and an emulation)",
    )
    cmp.set_defaults(func=command("cmd_compare"))

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
    sw.set_defaults(func=command("cmd_sweep"))

    rep = sub.add_parser(
        "report", help="write a self-contained HTML report of a sweep, run or reproduction"
    )
    rep.add_argument(
        "results",
        nargs="+",
        help="directory of `wavelab sweep`, `run` or `reproduce`; or several run folders, "
        "compared and overlaid",
    )
    rep.add_argument(
        "--out", help="HTML file (default RESULTS/report.html; required for several runs)"
    )
    rep.add_argument(
        "--max-runs",
        type=int,
        default=200,
        help="embed the time series of at most this many runs (default 200)",
    )
    rep.set_defaults(func=command("cmd_report"))

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
    d.set_defaults(func=command("cmd_demo"))

    v = sub.add_parser("validate", help="check scenario files without running them")
    v.add_argument("scenarios", nargs="+", help="scenario files")
    v.set_defaults(func=command("cmd_validate"))

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
    pl.set_defaults(func=command("cmd_plot"))

    sc = sub.add_parser("scenarios", help="list the built-in scenarios, or print one")
    sc.add_argument("name", nargs="?", help="print this scenario's TOML")
    sc.set_defaults(func=command("cmd_scenarios"))

    a = sub.add_parser("algorithms", help="list the congestion-control algorithms")
    a.set_defaults(func=command("cmd_algorithms"))

    rp = sub.add_parser("reproduce", help="reproduce a published experiment (list: --list)")
    rp.add_argument("experiment", nargs="?", help="experiment name, e.g. wave-page")
    rp.add_argument(
        "--out", help="output directory (default results/NAME; its store: the same command resumes)"
    )
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
        help="run on a Dask scheduler, e.g. tcp://host:8786 (not with --emulate)",
    )
    rp.add_argument(
        "--traces",
        metavar="DIR",
        help="starlink: run over the LeoReplayer pairs in DIR (bw_N.txt with delay_N.txt) "
        "instead of the LEO model (default --out results/starlink-traces)",
    )
    rp.add_argument(
        "--cluster-timeout",
        type=float,
        metavar="SECONDS",
        help="seconds to wait for the scheduler and a first worker (default 10)",
    )
    rp.set_defaults(func=command("cmd_reproduce"))

    b = sub.add_parser("bench", help="measure simulator speed and memory (prints figures)")
    b.add_argument("--case", action="append", help="run only this case (repeatable)")
    b.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="runs (or interleaved rounds) per case; the median and range are shown",
    )
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
    b.set_defaults(func=command("cmd_bench"))

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
    bp.set_defaults(func=command("cmd_bpf"))
    return p
