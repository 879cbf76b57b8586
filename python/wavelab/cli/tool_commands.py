"""Tools: ``wavelab bench`` (speed and memory) and ``wavelab bpf`` (the BPF
TCP Wave for stock Linux)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wavelab.errors import WavelabError


def cmd_bpf(args: argparse.Namespace) -> int:
    from wavelab.emulator import bpf

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
        from wavelab.bench import scaling
        from wavelab.results.ownership import refuse_foreign

        refuse_foreign(Path(args.scaling), own=scaling.FILES)
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
    ranges = []
    for case in [c for c in cases if c in CASES]:
        print(f"running {case}: {CASES[case][0]} ...", file=sys.stderr)
        runs = sorted((run_case(case) for _ in range(args.repeat)), key=lambda f: f.wall_s)
        rows.append(runs[(len(runs) - 1) // 2])  # the median run (the lower of two)
        ranges.append(f"{case} {runs[0].wall_s:.4f}-{runs[-1].wall_s:.4f}")
    if rows:
        print(format_table(rows))
        print(
            f"(each case's median run of {args.repeat}, each in a fresh process; "
            f"wall s ranges: {', '.join(ranges)})"
        )
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
    if "fork" in cases:
        from wavelab.bench.forking import fork_speedup

        print(f"running fork: {PYTHON_CASES['fork']} ...", file=sys.stderr)
        for f in fork_speedup():
            print(f.line())
    return 0
