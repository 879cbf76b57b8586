"""Progress bars that show where a person watches: on a terminal, and in a
Jupyter notebook (whose output is no terminal).

``tqdm.auto`` draws a notebook widget where ipywidgets is installed and
text bars elsewhere; ``disable=None`` (no bar when stderr is not a
terminal: logs, CI) hid every bar in a notebook, so there the bar is on.
"""

from __future__ import annotations

import sys
import warnings
from typing import Any


def in_notebook() -> bool:
    """True in a Jupyter kernel (an IPython kernel process)."""
    return "ipykernel" in sys.modules


def progress_bar(**kwargs: Any) -> Any:
    """A ``tqdm.auto`` bar with ``kwargs``, shown on a terminal and in a
    notebook, not in a log file (the caller's ``disable`` wins)."""
    from tqdm import TqdmWarning

    with warnings.catch_warnings():
        # tqdm warns that its notebook bar is experimental, or, without
        # ipywidgets, that it draws text bars instead (which show)
        warnings.simplefilter("ignore", TqdmWarning)
        from tqdm.auto import tqdm

        kwargs.setdefault("disable", False if in_notebook() else None)
        return tqdm(**kwargs)


def watched() -> bool:
    """Whether a person watches stderr: a terminal, or a notebook."""
    return in_notebook() or sys.stderr.isatty()


def status(message: str) -> None:
    """Says on stderr what a phase that takes seconds and has no bar of its
    own is doing (writing plots, measuring runs, rendering a report), where
    a person watches (:func:`watched`); a log gets only the results."""
    if watched():
        print(message, file=sys.stderr, flush=True)
