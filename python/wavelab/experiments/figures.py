"""What the studies' figures share: how one is written to disk."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.figure import Figure


def save(fig: Figure, path: Path) -> Path:
    """Lays ``fig`` out, writes it to ``path`` at 110 dpi and closes it."""
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
