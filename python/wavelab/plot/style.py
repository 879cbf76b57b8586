"""How wavelab's figures look, in one place: the colour-blind-safe palette,
the fixed colour and marker of every congestion-control algorithm, the line
style that tells apart flows of one algorithm, and the matplotlib styles
(``wavelab`` for the screen, ``paper`` for a one-column figure).

The palette is Okabe and Ito's ("Color Universal Design", 2002; Wong,
Nature Methods 8:441, 2011): eight colours that stay distinct under
protanopia, deuteranopia and tritanopia. Each algorithm keeps its colour
and marker in every PNG, PDF and SVG and in the report (which receives
:func:`wavelab.plot.spec.report_spec` as JSON), whatever the other flows of the run are; the
marker tells algorithms apart in greyscale too. An algorithm not listed
(a custom one) gets a colour and marker from a hash of its name, so it too
keeps them from one figure to the next.

The matplotlib styles are plain ``rcParams`` dictionaries (:data:`STYLES`),
registered as ``plt.style.use("wavelab")`` and ``plt.style.use("wavelab-paper")``
when this module is imported. The plot functions set no font size of their
own: a style, the user's or wavelab's, decides.
"""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib
import matplotlib.style
from cycler import cycler

from wavelab.plot.figure_files import STYLE_NAMES

OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky blue": "#56B4E9",
    "bluish green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish purple": "#CC79A7",
    "grey": "#999999",
}
"""The eight colours of Okabe and Ito's palette, by their names, and the
grey that R's ``palette.colors("Okabe-Ito")`` adds as a ninth."""

PALETTE = [OKABE_ITO[c] for c in ("blue", "vermillion", "bluish green", "orange", "reddish purple",
                                  "sky blue", "black", "yellow")]  # fmt: skip
"""The palette in the order series take it (yellow last: thin lines of it
are faint on white)."""

GREY = "#7f7f7f"
"""Reference lines: capacity, thresholds."""
TOTAL = "#444444"
"""The sum over all flows."""


@dataclass(frozen=True)
class AlgorithmStyle:
    """How an algorithm is drawn: ``color`` (hex), ``marker`` (matplotlib)
    and ``symbol`` (the same marker's plotly name)."""

    color: str
    marker: str
    symbol: str


_MARKERS = {
    "o": "circle",
    "s": "square",
    "^": "triangle-up",
    "D": "diamond",
    "v": "triangle-down",
    "P": "cross",
    "X": "x",
    "*": "star",
    "h": "hexagon",
    "<": "triangle-left",
    "p": "pentagon",
    ">": "triangle-right",
    "H": "hexagon2",
    "8": "octagon",
}

ALGORITHM_STYLES: dict[str, AlgorithmStyle] = {
    name: AlgorithmStyle(OKABE_ITO[colour], marker, _MARKERS[marker])
    for name, colour, marker in (
        ("cubic", "blue", "o"),
        ("bbr", "vermillion", "s"),
        ("wave", "bluish green", "^"),
        ("newreno", "orange", "D"),
        ("reno", "reddish purple", "v"),
        ("westwood", "sky blue", "P"),
        ("tahoe", "grey", "X"),
        ("etcpv0", "yellow", "*"),
        ("etcpv1", "black", "h"),
        ("vegas", "reddish purple", "<"),
        ("wsc-tcp", "black", "p"),
        ("dctcp", "sky blue", ">"),
        ("prague", "bluish green", "H"),
        ("bbr3", "vermillion", "8"),
    )
}
"""The built-in algorithms' colours and markers: a marker each, and a colour
each for the first nine (also what the emulator's kernel algorithms of the
same names get); Vegas shares Reno's colour, WSC-TCP ETCPv1's, DCTCP
Westwood's, Prague Wave's and BBRv3 BBR v1's, each with a marker of its own."""

_ALIASES = {"westwood+": "westwood"}


def algorithm_style(name: str) -> AlgorithmStyle:
    """The colour and marker of algorithm ``name``: fixed for the built-in
    ones (:data:`ALGORITHM_STYLES`), from a hash of the name otherwise."""
    key = _ALIASES.get(name.lower(), name.lower())
    known = ALGORITHM_STYLES.get(key)
    if known is not None:
        return known
    h = zlib.crc32(key.encode())
    markers = list(_MARKERS)
    marker = markers[(h // len(PALETTE)) % len(markers)]
    return AlgorithmStyle(PALETTE[h % len(PALETTE)], marker, _MARKERS[marker])


FLOW_DASHES = [
    ("-", "solid"),
    ("-.", "dashdot"),
    ((0, (8, 3)), "longdash"),
    ((0, (8, 3, 1, 3)), "longdashdot"),
]
"""The line style of the first, second, ... flow of one algorithm in a run
(matplotlib, plotly); a flow's dashed and dotted secondary lines (ssthresh,
sending rate) keep the ``--`` and ``:`` that none of these use."""


@dataclass(frozen=True)
class FlowStyle:
    """How one flow of a run is drawn: its algorithm's colour and marker and
    the line style of its rank among the flows of that algorithm."""

    color: str
    marker: str
    symbol: str
    linestyle: Any
    dash: str


def flow_styles(algorithms: Sequence[str]) -> list[FlowStyle]:
    """The style of every flow, given each flow's algorithm in flow order."""
    seen: dict[str, int] = {}
    out = []
    for a in algorithms:
        s = algorithm_style(a)
        rank = seen.get(a, 0)
        seen[a] = rank + 1
        ls, dash = FLOW_DASHES[rank % len(FLOW_DASHES)]
        out.append(FlowStyle(s.color, s.marker, s.symbol, ls, dash))
    return out


STATE_COLORS = {
    "open": "#ffffff",
    "disorder": "#F9F3B0",  # yellow, light
    "cwr": "#CCE3F0",  # blue, light
    "recovery": "#F5D9A0",  # orange, light
    "loss": "#EEBB99",  # vermillion, light
}
"""The shading of a flow's recovery state behind its window (light tints of
the palette's yellow, blue, orange and vermillion)."""

HANDOFF_COLOR = OKABE_ITO["reddish purple"]
"""The dotted line at a handoff."""
OUTAGE_COLOR = GREY
"""The shading of a window when a link was down."""


def _base(width: float, height: float, text: float) -> dict[str, Any]:
    return {
        "figure.figsize": (width, height),
        "font.size": text,
        "axes.titlesize": text,
        "axes.titlelocation": "left",
        "axes.labelsize": text,
        "xtick.labelsize": text - 1,
        "ytick.labelsize": text - 1,
        "legend.fontsize": text - 1,
        "legend.title_fontsize": text - 1,
        "figure.titlesize": text + 1,
        "axes.prop_cycle": cycler(color=PALETTE),
        "axes.grid": True,
        "grid.alpha": 0.3,
        "legend.framealpha": 0.8,
    }


STYLES: dict[str, dict[str, Any]] = {
    "wavelab": {**_base(10.0, 3.2, 10.0)},
    "paper": {
        **_base(3.5, 2.2, 8.0),
        "lines.linewidth": 1.0,
        "lines.markersize": 4.0,
        "axes.linewidth": 0.6,
        "grid.linewidth": 0.4,
        "legend.handlelength": 1.6,
        "legend.borderpad": 0.3,
        "legend.labelspacing": 0.3,
        "pdf.fonttype": 42,  # TrueType in the PDF: editable, accepted by publishers
        "svg.fonttype": "none",
    },
}
"""The matplotlib styles: ``wavelab`` (a 10 in wide figure, 10 pt text;
what ``wavelab run`` and ``wavelab plot`` write) and ``paper`` (a 3.5 in
one-column figure with 8 pt text and 7 pt ticks and legends:
``wavelab plot --style paper``)."""

assert tuple(STYLES) == STYLE_NAMES

for _name, _rc in STYLES.items():
    matplotlib.style.library["wavelab" if _name == "wavelab" else f"wavelab-{_name}"] = (
        matplotlib.RcParams(_rc)
    )
matplotlib.style.available[:] = sorted(matplotlib.style.library)


def check_style(name: str) -> str:
    """``name`` if it is one of :data:`STYLES`; an error naming them otherwise."""
    from wavelab.errors import WavelabError

    if name not in STYLES:
        raise WavelabError(f"--style {name!r}: choose one of {', '.join(STYLES)}")
    return name


@contextlib.contextmanager
def style(name: str = "wavelab") -> Iterator[None]:
    """Figures made in the block follow style ``name`` (:data:`STYLES`)."""
    import matplotlib.pyplot as plt

    with plt.style.context(STYLES[check_style(name)]):
        yield
