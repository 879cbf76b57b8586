"""How figures are written: their format (``--format``), their resolution
(``--dpi``), the names of their styles (``--style``), and atomically, like
every other file wavelab writes."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from wavelab._util.files import write_atomically
from wavelab.errors import WavelabError

FIGURE_FORMATS = ("png", "pdf", "svg")
"""The formats plots are written in (``--format``): PNG for a screen, PDF and
SVG (vector) for papers."""

STYLE_NAMES = ("wavelab", "paper")
"""The matplotlib styles figures are drawn in (``--style``): ``wavelab`` for
a screen, ``paper`` for a one-column figure (:mod:`wavelab.plot.style`)."""

_DPI: ContextVar[int] = ContextVar("wavelab_figure_dpi", default=110)


@contextlib.contextmanager
def figure_dpi(dpi: int) -> Iterator[None]:
    """Figures saved in the block (without a ``dpi`` of their own) are
    rendered at ``dpi`` dots per inch (``--dpi``; 110 by default)."""
    token = _DPI.set(check_dpi(dpi))
    try:
        yield
    finally:
        _DPI.reset(token)


def check_dpi(dpi: int) -> int:
    """``dpi`` if it is a whole number from 20 to 1200; an error otherwise."""
    if not isinstance(dpi, int) or isinstance(dpi, bool) or not 20 <= dpi <= 1200:
        raise WavelabError(f"--dpi {dpi!r}: give a whole number from 20 to 1200")
    return dpi


def figure_format(fmt: str) -> str:
    """``fmt`` if it is one of :data:`FIGURE_FORMATS`; an error naming them otherwise."""
    if fmt not in FIGURE_FORMATS:
        raise WavelabError(f"--format {fmt!r}: choose one of {', '.join(FIGURE_FORMATS)}")
    return fmt


def save_figure(fig: Any, path: Path, dpi: int | None = None) -> Path:
    """Renders a matplotlib figure and writes it atomically to ``path``
    (the format follows the suffix; the resolution is ``dpi``, else that of
    the enclosing :func:`figure_dpi`, else 110)."""
    buf = io.BytesIO()
    fig.savefig(buf, dpi=dpi or _DPI.get(), format=path.suffix.lstrip(".") or "png")
    return write_atomically(path, buf.getvalue())


def write_figure(fig: Any, path: str | Path | None, own: bool) -> None:
    """What every plot function does last: writes ``fig`` to ``path`` if
    one is given (:func:`save_figure`) and then, if the figure is the
    function's own (no ``ax`` was passed in), closes it; a figure drawn
    into the caller's axes stays open for the caller."""
    if path is None:
        return
    save_figure(fig, Path(path))
    if own:
        import matplotlib.pyplot as plt

        plt.close(fig)
