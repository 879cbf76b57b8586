"""Reproductions of published experiments (``wavelab reproduce NAME``).

Each experiment is a module with a ``reproduce(out, quick, jobs, cluster,
cluster_timeout)`` function that builds its runs, runs them through the
study runner on the local cores or a Dask cluster into its store under
``out`` (:data:`STORES`; resumable: the same command again runs only what is
missing; :mod:`wavelab.experiments.runs`), reduces them to the study's
metrics, prints our figures beside the published ones, writes them as CSV
and Markdown (:mod:`wavelab.experiments.tables`), and draws the study's
figures (:mod:`wavelab.experiments.figures`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

EXPERIMENTS: dict[str, tuple[str, str]] = {
    "wave-page": (
        "wavelab.experiments.wave_page",
        "TCP Wave project page: one flow on 6 Mbit/s; two flows on 10 Mbit/s (Wave, BBR, CUBIC)",
    ),
    "dcnet2016": (
        "wavelab.experiments.dcnet2016",
        "DCNET 2016 vertical handover L1 <-> L2: Table 1 (recovery times) and Figures 2-7",
    ),
    "wsc-tcp": (
        "wavelab.experiments.wsc_tcp",
        "WSC-TCP thesis (Srinivasan 2016): WSC-TCP, its parts, CUBIC and Wave vs NewReno "
        "over lossy wireless end links with link-layer ARQ; gain vs loss rate",
    ),
    "satwlan": (
        "wavelab.experiments.satwlan",
        "GEO satellite + WLAN (Annese et al.): Table II and Figures 2-4, plus CUBIC, BBR, Wave",
    ),
    "starlink": (
        "wavelab.experiments.starlink",
        "Starlink-like LEO access (a new satellite every 15 s): BBR, BBRv3, CUBIC, NewReno, "
        "Westwood+, Wave, downlink and uplink, seeds with 95 % CIs, the minimum-RTT sawtooth",
    ),
    "aqm-handover": (
        "wavelab.experiments.aqm_handover",
        "Queue disciplines and ECN: drop-tail, CoDel, FQ-CoDel, PIE, DualPI2 under CUBIC, BBR, "
        "BBRv3, Wave, DCTCP and Prague across the DCNET handover and over GEO + WLAN",
    ),
    "handover-bakeoff": (
        "wavelab.experiments.handover_bakeoff",
        "Every approach to a vertical handover: TCP Wave, ETCPv1, CUBIC, BBR and MPTCP "
        "(full-mesh and backup, uncoupled CUBIC and LIA) across DCNET's and MobiWac's handoffs",
    ),
    "mobiwac2009": (
        "wavelab.experiments.mobiwac2009",
        "MobiWac 2009 vertical handoffs, 1-4 flows: regular TCP, ETCPv0, ETCPv1 "
        "(+ Wave, CUBIC), Figures 4-19",
    ),
    "rrul": (
        "wavelab.experiments.rrul",
        "Latency under load (flent's RRUL): a ping and a voice call beside 1, 4, 8 bulk flows "
        "of CUBIC, BBR, NewReno, Wave over 2 Mbit/s / 30 ms, drop-tail and FQ-CoDel",
    ),
}
STORES: dict[str, str] = {"mobiwac2009": "sweep"}
"""Where an experiment keeps its runs under its output directory, when not
in ``store`` (MobiWac 2009 is a grid: a sweep, with its runs table)."""

Reproduce = Callable[..., Path]
"""``reproduce(out, quick, jobs, cluster, cluster_timeout)``; those in
:data:`TRACED` also take ``traces=`` (a folder of measured paths)."""

TRACED = ("starlink",)
"""Experiments that can run over a folder of traces (``--traces DIR``)."""


EMULATED: dict[str, str] = {"dcnet2016": "wavelab.experiments.dcnet2016_emulated"}
"""Experiments with an emulated form (``wavelab reproduce NAME --emulate``):
the rows the kernel's congestion controls can run, on real packets."""


def emulated_experiment(name: str) -> Callable[[Path, bool, int | None], Path]:
    """The ``reproduce`` function of experiment ``name``'s emulated form."""
    from wavelab.errors import WavelabError

    if name not in EMULATED:
        known = "is not an experiment" if name not in EXPERIMENTS else "has no emulated form"
        raise WavelabError(f"{name!r} {known}; --emulate runs: {', '.join(EMULATED)}")
    module = importlib.import_module(EMULATED[name])
    fn: Callable[[Path, bool, int | None], Path] = module.reproduce
    return fn


def experiment(name: str) -> Reproduce:
    """The ``reproduce`` function of experiment ``name``."""
    from wavelab.errors import WavelabError

    if name not in EXPERIMENTS:
        raise WavelabError(f"{name!r} is not an experiment; choose one of {', '.join(EXPERIMENTS)}")
    module = importlib.import_module(EXPERIMENTS[name][0])
    fn: Reproduce = module.reproduce
    return fn
