"""A comparison's folder (``wavelab compare --out``): ``comparison.csv``
(:meth:`~wavelab.comparison.runs.Comparison.table`), the overlaid series
(``series-rate``, ``series-cwnd``, ``series-rtt``, ``series-queue`` when a
run has a queue), ``rtt-cdf``, ``delay-cdf`` when a run keeps a packet log,
``box`` when an entry holds several runs,
and ``compare.json``, which lists the entries, the files and what was not
drawn and why. A folder is written only if it is empty, new, or a previous
comparison's (its ``compare.json``): only that comparison's files are
replaced, and a folder holding anything else is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from wavelab._util.files import write_atomically
from wavelab.comparison.runs import Comparison
from wavelab.errors import WavelabError
from wavelab.plot.figure_files import figure_format, save_figure
from wavelab.plot.style import style

MARKER = "compare.json"
"""The file that makes a folder a comparison's output."""

NO_DELAY = "one-way delay CDF: not drawn, no run keeps a packet log (log_packets = true)"


def check_out(out: Path) -> list[Path]:
    """The files of a previous comparison in ``out`` (to replace); a
    :class:`WavelabError` when ``out`` holds anything else."""
    if not out.exists():
        return []
    if not out.is_dir():
        raise WavelabError(f"--out {out}: not a folder")
    # hidden names are a writer's own (its lock, its temporary files)
    if not any(not p.name.startswith(".") for p in out.iterdir()):
        return []
    marker = out / MARKER
    if not marker.is_file():
        raise WavelabError(
            f"--out {out}: the folder is not empty and holds no previous comparison "
            f"({MARKER}); nothing was written: choose a new or empty folder"
        )
    try:
        files = json.loads(marker.read_text(encoding="utf-8")).get("files", [])
    except (OSError, ValueError, AttributeError) as e:
        raise WavelabError(f"{marker}: not a comparison's record ({e})") from None
    return [out / Path(str(f)).name for f in files]


def write(
    c: Comparison, out: Path, fmt: str = "png", dpi: int | None = None
) -> tuple[list[Path], list[str]]:
    """Writes the comparison to ``out`` (see the module description); the
    files written and the notes of what was not drawn."""
    old = check_out(out)
    out.mkdir(parents=True, exist_ok=True)
    ext = figure_format(fmt)
    files: list[Path] = []
    notes: list[str] = []
    csv = out / "comparison.csv"
    write_atomically(csv, c.table().to_csv(index=False).encode())
    files.append(csv)

    def put(name: str, fig: Figure) -> None:
        fig.tight_layout()
        files.append(save_figure(fig, out / f"{name}.{ext}", dpi=dpi))
        plt.close(fig)

    with style("wavelab"):
        for what in ("rate", "cwnd", "rtt", "queue"):
            if what == "queue" and not c.has_queue():
                notes.append("queue: not drawn, no run has a queue that held packets")
                continue
            put(f"series-{what}", c.plot_series(what))
        put("rtt-cdf", c.plot_cdf("rtt"))
        if c.has_delay():
            put("delay-cdf", c.plot_cdf("delay"))
        else:
            notes.append(NO_DELAY)
        if any(len(e.runs) > 1 for e in c.entries):
            fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
            c.plot_box("goodput_mbps", ax=axes[0])
            c.plot_box("rtt_p95_ms", ax=axes[1])
            put("box", fig)
        else:
            notes.append("box plots: not drawn, every entry is a single run (give a sweep's seeds)")
    record: dict[str, Any] = {
        "entries": [{"label": e.label, "source": e.source, "runs": len(e.runs)} for e in c.entries],
        "files": [f.name for f in files],
        "notes": notes,
    }
    for f in old:  # a previous comparison's figure this one did not draw
        if f not in files and f.is_file():
            f.unlink()
    write_atomically(out / MARKER, json.dumps(record, indent=2).encode())
    return [*files, out / MARKER], notes
