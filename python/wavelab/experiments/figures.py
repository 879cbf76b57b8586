"""What the studies' figures share: how one is written to disk."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from wavelab.plot.figure_files import save_figure


def save(
    fig: Figure,
    path: Path,
    dpi: int = 110,
    rect: tuple[float, float, float, float] | None = None,
) -> Path:
    """Lays ``fig`` out (within ``rect`` of the figure, e.g. to leave room
    for a legend on top), writes it to ``path`` at ``dpi`` (whole or not at
    all, as every figure) and closes it."""
    fig.tight_layout(rect=rect)
    save_figure(fig, path, dpi)
    plt.close(fig)
    return path
