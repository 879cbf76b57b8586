"""``wavelab report``: one self-contained HTML page of a sweep, a run or a
reproduction.

Everything the page needs is inside the file: the plotly.js bundle of the
``plotly`` package, the page's own script and style (``report/assets/``),
the data as JSON, and the reproductions' PNG figures as data URLs. It opens
without a network, from a file, a mail attachment or a CI artifact.

What it shows:

* a **sweep** (``wavelab sweep --out DIR``): the per-run table (sortable,
  filterable; a click selects a run), a plot of any metric against any
  parameter (when the sweep varies the seed, each parameter point's mean
  over the seeds with its 95 % confidence interval as error bars, from
  ``seeds.parquet``, over the runs' points, where the point has
  :data:`wavelab.plot.spec.MIN_SEEDS` seeds or more; an interval stops at
  zero for a metric that cannot go below it), the throughput-delay plot
  (goodput against the p95 RTT or another delay, the delay axis reversed
  as Pantheon draws it; with seeds each parameter point's mean with its
  95 % intervals both ways, as ``wavelab plot DIR`` draws it), and the
  time series of the selected run;
* a **run** (``wavelab run --out DIR``): its summary and time series,
  and with workloads or ``output.delays`` the transfers' completion times
  (a table) and the figures of :mod:`wavelab.plot.traffic_plots`;
* **several runs** (``wavelab report A B [C ...]``, run folders, simulated
  or emulated): the table of :meth:`wavelab.Comparison.wide` (each metric of
  each run, its difference and ratio to the first) and each run's series;
* a **reproduction** (``wavelab reproduce NAME --out DIR``): its comparison
  tables (every CSV at the top of DIR), its figures, and the time series of
  its runs (those its store keeps tables of, ``DIR/store/runs/*``).

Wherever two runs or more are embedded, a list chooses the runs drawn
together, overlaid one colour per run (the palette's, in the order
chosen, as ``wavelab compare`` draws its figures).

Both sweep plots follow the rules of the PNGs
(:mod:`wavelab.plot.throughput_delay`): coloured and marked by the algorithm
when the sweep varies one (:func:`wavelab.plot.spec.is_algorithm_path`), an
axis of delays logarithmic when they span more than
:data:`wavelab.plot.spec.LOG_SPAN`, no interval from fewer than
:data:`wavelab.plot.spec.MIN_SEEDS` seeds.

What a run's time series holds: :mod:`wavelab.report.time_series`.
"""

from __future__ import annotations

import base64
import errno
import gzip
import html
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from wavelab._native import __version__
from wavelab._util.files import write_atomically
from wavelab.analysis.transfers import transfer_summary
from wavelab.errors import WavelabError
from wavelab.plot.spec import is_algorithm_path, report_spec
from wavelab.report.time_series import run_data, table_data
from wavelab.sweep.runs_table import SEEDS, typed_params

TRAFFIC_FIGURES = ("fct-cdf", "owd-cdf", "delays")
"""The figures of :mod:`wavelab.plot.traffic_plots` a run page shows when
the run directory has them."""

MAX_TABLE_ROWS = 20_000
"""Most rows of a sweep table embedded in the page."""


class ReportError(WavelabError):
    """The directory cannot be reported on."""


@dataclass
class _Page:
    kind: str
    title: str
    subtitle: str
    data: dict[str, Any]


def _png(path: Path) -> dict[str, str]:
    return {
        "title": path.stem.replace("_", " "),
        "src": "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode(),
    }


def _sweep_page(d: Path, max_runs: int) -> _Page:
    meta = json.loads((d / "sweep.json").read_text(encoding="utf-8"))
    table_path = d / "runs.parquet"
    if not table_path.exists():
        raise ReportError(f"{d}: the sweep has no runs.parquet yet (it never got to its end)")
    table = pd.read_parquet(table_path)
    params = [p for a in meta["axes"] for p in a["paths"]]
    typed = typed_params(table, params)
    ok = table[table["status"].astype(str).str.startswith("ok")]
    runs: dict[str, Any] = {}
    for row in ok.head(max_runs).itertuples(index=False):
        key = str(getattr(row, "run"))  # noqa: B009
        if key in runs:
            continue
        rd = d / "runs" / key
        if not (rd / "run.json").exists():
            continue
        values = table.loc[table["run"] == key, params].iloc[0]
        label = ", ".join(f"{p}={values[p]}" for p in params)
        runs[key] = run_data(rd, label)
    omitted = int(ok["run"].nunique()) - len(runs)
    shown = table.head(MAX_TABLE_ROWS)
    metrics = [
        c
        for c in table.columns
        if c not in params
        and c not in typed
        and c not in ("point", "run", "status", "error", "baseline_run")
        and pd.api.types.is_numeric_dtype(table[c])
    ]
    counts = table["status"].astype(str).value_counts().to_dict()
    status = ", ".join(f"{n} {s}" for s, n in counts.items())
    return _Page(
        "sweep",
        f"Sweep {meta.get('name', d.name)}",
        f"{len(table)} points ({status}); code {meta.get('code', '?')}; "
        f"{len(meta['axes'])} parameters",
        {
            "sweep": {
                **table_data(
                    shown,
                    "Runs",
                    ""
                    if len(shown) == len(table)
                    else f"the first {len(shown)} of {len(table)} rows",
                ),
                "params": params + typed,
                # the parameters that choose an algorithm: plots are
                # coloured and marked by them first
                "algorithm_params": [p for p in params if is_algorithm_path(p)],
                "metrics": metrics,
                "seeds": _seeds_data(d / SEEDS),
                "axes": meta["axes"],
            },
            "runs": runs,
            "omitted_runs": omitted,
        },
    )


def _seeds_data(path: Path) -> dict[str, Any] | None:
    """The seeds aggregate of a sweep (mean and 95 % interval per parameter
    point and metric), which the page draws as error bars; None without one."""
    if not path.exists():
        return None
    return table_data(pd.read_parquet(path), "Seeds aggregated")


def _run_page(d: Path) -> _Page:
    r = run_data(d)
    tables = []
    if (d / "summary.csv").exists():
        tables.append(table_data(pd.read_csv(d / "summary.csv"), "Summary"))
    if (d / "transfers.parquet").exists():
        fct = transfer_summary(pd.read_parquet(d / "transfers.parquet"))
        tables.append(table_data(fct, "Transfers", "completion times (s) and slowdowns"))
    # the traffic figures plot_all wrote (completion times, one-way delay, jitter)
    images = [_png(d / f"{n}.png") for n in TRAFFIC_FIGURES if (d / f"{n}.png").exists()]
    return _Page(
        "run",
        f"Run {r['name'] or d.name}",
        f"{len(r['flows'])} flows" + ("" if r["complete"] else "; interrupted (partial)"),
        {"tables": tables, "images": images, "runs": {d.name: r}},
    )


def _compare_page(dirs: Sequence[Path]) -> _Page:
    from wavelab.comparison import compare

    for d in dirs:
        if not (d / "run.json").is_file():
            raise ReportError(
                f"{d}: not a run folder (no run.json); a report of several runs takes "
                "the folders of `wavelab run` or `wavelab emulate`"
            )
    c = compare(list(dirs))
    runs = {e.label: run_data(d, e.label) for e, d in zip(c.entries, dirs, strict=True)}
    return _Page(
        "compare",
        "Comparison of " + ", ".join(c.labels),
        f"{len(dirs)} runs; differences and ratios to {c.labels[0]}",
        {"tables": [table_data(c.wide(), "Metrics compared")], "runs": runs},
    )


REPRODUCTION_RUNS = ("store/runs", "store-emulated/runs", "runs")
"""Where a reproduction's runs are, under its directory: its stores (the
study's, the emulated one's), or ``runs/`` (written by earlier versions)."""


def _reproduction_runs(d: Path) -> list[Path]:
    return [p.parent for where in REPRODUCTION_RUNS for p in sorted((d / where).glob("*/run.json"))]


def _reproduction_page(d: Path, max_runs: int) -> _Page:
    # the study's headline table first (table1.csv, comparison.csv), then the rest
    def headline(p: Path) -> tuple[int, str]:
        return (0 if p.stem.startswith(("table", "comparison")) else 1, p.name)

    tables = [
        table_data(pd.read_csv(p, keep_default_na=False), p.name)
        for p in sorted(d.glob("*.csv"), key=headline)
    ]
    images = [_png(p) for p in sorted(d.glob("*.png"))]
    dirs = _reproduction_runs(d)
    # a store's run directories are named by key; the scenario names them
    runs = {p.name: run_data(p) for p in dirs[:max_runs]}
    return _Page(
        "reproduction",
        f"Reproduction {d.name}",
        f"{len(tables)} tables, {len(images)} figures, {len(dirs)} runs",
        {"tables": tables, "images": images, "runs": runs, "omitted_runs": len(dirs) - len(runs)},
    )


def _asset(name: str) -> str:
    return resources.files("wavelab.report").joinpath("assets", name).read_text(encoding="utf-8")


def _plotly_js() -> str:
    try:
        from plotly.offline import get_plotlyjs
    except ImportError:
        raise ReportError("wavelab report needs the plotly package: pip install plotly") from None
    js: str = get_plotlyjs()
    return js


def build_page(directory: Path, max_runs: int = 200) -> _Page:
    """Reads a results directory (sweep, run or reproduction)."""
    d = directory
    if not d.is_dir():
        raise ReportError(f"{d}: no such directory")
    if max_runs < 0:
        raise ReportError(f"--max-runs {max_runs}: give 0 or more")
    try:
        if (d / "sweep.json").exists():
            return _sweep_page(d, max_runs)
        if (d / "run.json").exists():
            return _run_page(d)
        if _reproduction_runs(d):
            return _reproduction_page(d, max_runs)
    except (OSError, ValueError, KeyError) as e:
        raise ReportError(f"{d}: cannot read the results: {type(e).__name__}: {e}") from None
    raise ReportError(
        f"{d}: nothing to report: expected a sweep (sweep.json), a run (run.json) or a "
        "reproduction (store/runs/*/run.json)"
    )


def pack_run(run: dict[str, Any]) -> str:
    """A run's data as base64 of gzip-compressed JSON (what the page embeds)."""
    text = json.dumps(run, separators=(",", ":"), allow_nan=False)
    return base64.b64encode(gzip.compress(text.encode(), mtime=0)).decode()


def _script_json(data: Any) -> str:
    # JSON inside <script>: "</" would end the element early
    return json.dumps(data, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")


def render(page: _Page) -> str:
    """The HTML text of a page."""
    runs = page.data.get("runs", {})
    algorithms = {f["algorithm"] for r in runs.values() for f in r["flows"]}
    sweep = page.data.get("sweep")
    if sweep is not None:  # a sweep's algorithm parameters, whose runs may not be embedded
        cols = [i for i, c in enumerate(sweep["columns"]) if is_algorithm_path(c)]
        algorithms |= {str(row[i]) for row in sweep["rows"] for i in cols if row[i] is not None}
    payload = {
        "kind": page.kind,
        "title": page.title,
        "subtitle": page.subtitle,
        "generated": time.strftime("%Y-%m-%d %H:%M:%S"),
        "version": __version__,
        # the figures' titles, labels, colours and markers: those of the PNGs
        "spec": report_spec(sorted(algorithms)),
        **page.data,
        "runs": {k: {"label": r["label"], "packed": pack_run(r)} for k, r in runs.items()},
    }
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(page.title)} - wavelab</title>\n"
        f"<style>\n{_asset('report.css')}\n</style>\n"
        f"<script>\n{_plotly_js()}\n</script>\n"
        '</head>\n<body>\n<div id="app"></div>\n'
        f'<script id="report-data" type="application/json">{_script_json(payload)}</script>\n'
        f"<script>\n{_asset('report.js')}\n</script>\n</body>\n</html>\n"
    )


def write_report(directory: Path | Sequence[Path], out: Path, max_runs: int = 200) -> Path:
    """Writes the report of ``directory`` (or of several run folders, side
    by side) to ``out`` (atomically)."""
    if isinstance(directory, Path):
        page = build_page(directory, max_runs)
    elif len(directory) == 1:
        page = build_page(directory[0], max_runs)
    else:
        page = _compare_page(directory)
    text = render(page)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(out, text.encode("utf-8"))
    except OSError as e:
        why = "no space left on device" if e.errno == errno.ENOSPC else e.strerror or str(e)
        raise ReportError(f"{out}: cannot be written: {why}; nothing was written") from None
    return out
