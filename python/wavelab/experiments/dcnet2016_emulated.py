"""DCNET 2016 Table 1 on real packets (``wavelab reproduce dcnet2016 --emulate``).

The rows the kernel has, Linux's ``reno``, ``cubic`` and ``bbr``, through
the study's handover on the emulator (``docs/emulation.md``), beside
wavelab's simulation of the same scenarios and the paper's figure where it
has one. Each emulated scenario is the simulated study's cell with the
flow's ``cc`` naming the kernel's algorithm; its simulation replaces that
name with wavelab's model of it (:data:`wavelab.emulator.compare.MODEL`: the
kernel's ``reno``, Reno's window growth with NewReno's recovery, is
simulated as ``newreno``). Reno keeps the study's TCP settings (no SACK, as
the paper's ns-3.23 TCPs); CUBIC and BBR run with SACK, as in the simulated
study's extra rows and as Linux runs them.

Wall time decides two choices, both parameters of :class:`Plan`:

* the handover is at ``handover_at`` (30 s; 10 s with ``--quick``) for every
  row: the simulated study's 300 s for window-based rows on L2 -> L1 (the
  paper's rule, so that they fill L2 first) would be 12.5 minutes of wall
  time per run;
* each run lasts ``after`` seconds past the handover (120 s; 40 s with
  ``--quick``) instead of the simulated study's 450 s, so a recovery slower
  than that reads ">N".

The recovery time is the simulated study's, :func:`wavelab.analysis.recovery`
on the receiver's goodput, with ``R_ss`` from a run of the same length on
the new link alone (emulated for the emulated rows, simulated for the
simulated ones). Emulated runs whose release lateness exceeded the bound
are marked ``flagged`` in the table, never dropped silently.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from wavelab._util.table_text import table_text
from wavelab.analysis import handover_recovery as analysis
from wavelab.emulator.compare import flow_figure, simulation_of
from wavelab.experiments import dcnet2016 as study
from wavelab.experiments.figures import save
from wavelab.experiments.runs import emulate_runs, run_runs
from wavelab.experiments.tables import Markdown, Tables
from wavelab.results.frames import Results
from wavelab.scenario.builtin import builtin_scenario
from wavelab.scenario.loading import Scenario
from wavelab.sweep.study import StudyRun

KERNEL_ROWS: dict[str, tuple[str, dict[str, Any]]] = {
    "Reno": ("reno", {}),
    "CUBIC": ("cubic", {"sack": True}),
    "BBR": ("bbr", {"sack": True}),
}
"""Each emulated row: the kernel's algorithm and the TCP settings that differ
from the scenario's (the simulated study's ``TCP_OVERRIDES``)."""


@dataclass(frozen=True)
class Plan:
    """Which cells to run and for how long."""

    hts: tuple[float, ...] = study.HTS
    directions: tuple[str, ...] = study.DIRECTIONS
    variants: tuple[str, ...] = tuple(KERNEL_ROWS)
    handover_at: float = 30.0
    """T, the start of the handover (s), for every row."""
    after: float = 120.0
    """Seconds run after T."""

    @staticmethod
    def quick() -> Plan:
        """HT = 2 s, L1 -> L2, T = 10 s, 40 s after it: six runs of 50 s."""
        return Plan(hts=(2.0,), directions=("L1L2",), handover_at=10.0, after=40.0)

    @property
    def duration(self) -> float:
        return self.handover_at + self.after

    def cells(self) -> list[study.Cell]:
        return [
            study.Cell(v, ht, d) for v in self.variants for ht in self.hts for d in self.directions
        ]


def key(cell: study.Cell) -> str:
    return f"{KERNEL_ROWS[cell.variant][0]}-{cell.direction}-ht{cell.ht:g}"


def baseline_key(cell: study.Cell) -> str:
    return f"baseline-{KERNEL_ROWS[cell.variant][0]}-{cell.new}"


def _changes(cell: study.Cell, plan: Plan) -> dict[str, Any]:
    cc, tcp = KERNEL_ROWS[cell.variant]
    changes: dict[str, Any] = {"duration": f"{plan.duration:g}s", "flows[0].cc": cc}
    for k, v in tcp.items():
        changes[f"flows[0].tcp.{k}"] = v
    return changes


def _scenario(
    cell: study.Cell, plan: Plan, name: str, link: str, handovers: list[dict[str, str]]
) -> Scenario:
    """The study's scenario for emulation: its bottleneck starts as ``link``
    with ``handovers``, its flow runs the cell's kernel algorithm."""
    return builtin_scenario(
        "dcnet2016-handover",
        emulation=True,
        changes={
            "name": f"dcnet2016-emulated-{name}",
            "links[1].rate": study.LINKS[link]["rate"],
            "links[1].delay": study.LINKS[link]["delay"],
            "links[1].handovers": handovers,
            **_changes(cell, plan),
        },
    )


def cell_scenario(cell: study.Cell, plan: Plan) -> Scenario:
    """The emulation scenario of a cell: the link starts as the old one and
    hands over to the new one at T with an outage of HT."""
    handover = {"at": f"{plan.handover_at:g}s", "outage": f"{cell.ht:g}s", **study.LINKS[cell.new]}
    return _scenario(cell, plan, key(cell), cell.old, [handover])


def baseline_scenario(cell: study.Cell, plan: Plan) -> Scenario:
    """The emulation scenario on the new link alone (gives R_ss)."""
    return _scenario(cell, plan, baseline_key(cell), cell.new, [])


def scenarios(plan: Plan) -> dict[str, Scenario]:
    """Every emulated run: the cells and their baselines (one per row and new link)."""
    out: dict[str, Scenario] = {}
    for c in plan.cells():
        out[key(c)] = cell_scenario(c, plan)
        out.setdefault(baseline_key(c), baseline_scenario(c, plan))
    return out


LOW_R_SS = 0.5
"""A baseline whose R_ss is below this share of the new link's payload
capacity had not reached a steady rate within the run (Reno without SACK
on L2 repairs the losses of its slow-start overshoot one hole per round
trip for minutes): its cells are marked "?"."""


def default_jobs() -> int:
    """Emulations at once: one per two CPUs (each has a wire thread that
    spins before its deadlines, and the kernel's TCP work of its flows)."""
    return max(1, (os.cpu_count() or 1) // 2)


def _recovery(run: Results, base: Results, t0: float) -> tuple[float, float, float]:
    """(recovery s or NaN, horizon s, R_ss Mbit/s) on the receiver's goodput."""
    rec = analysis.recovery(run, base, t0, link_dir=study.BOTTLENECK_DIR)["goodput"]
    r_ss = analysis.steady_rate(analysis.cumulative(base, "goodput"))
    return (np.nan if rec.seconds is None else rec.seconds), rec.horizon, r_ss / 1e6


def measure(
    plan: Plan, emulated: Mapping[str, Results], simulated: Mapping[str, Results]
) -> pd.DataFrame:
    """One row per cell: the paper's recovery time, the simulation's and the
    emulation's, with the emulation's lateness and flag."""
    paper = study.paper_table()
    rows = []
    for c in plan.cells():
        t0 = plan.handover_at + c.ht
        sim_s, horizon, sim_rss = _recovery(simulated[key(c)], simulated[baseline_key(c)], t0)
        emu_s, _, emu_rss = _recovery(emulated[key(c)], emulated[baseline_key(c)], t0)
        match = paper[
            (paper["variant"] == c.variant)
            & (np.isclose(paper["ht_s"].astype(float), c.ht))
            & (paper["direction"] == c.direction)
        ]
        e = emulated[key(c)].run.get("emulation", {})
        base_e = emulated[baseline_key(c)].run.get("emulation", {})
        rows.append(
            {
                "variant": c.variant,
                "kernel_cc": KERNEL_ROWS[c.variant][0],
                "ht_s": c.ht,
                "direction": c.direction,
                "handover_s": plan.handover_at,
                "paper_s": float(match["recovery_s"].iloc[0]) if len(match) else np.nan,
                "simulated_s": sim_s,
                "emulated_s": emu_s,
                "horizon_s": horizon,
                "sim_r_ss_mbps": sim_rss,
                "emu_r_ss_mbps": emu_rss,
                "new_capacity_mbps": study._capacity(c.new) / 1e6,
                "lateness_p99_us": float(e.get("lateness_p99", np.nan)) * 1e6,
                "flagged": bool(e.get("flagged", False) or base_e.get("flagged", False)),
            }
        )
    return pd.DataFrame(rows)


def side_by_side(table: pd.DataFrame) -> pd.DataFrame:
    """A row per variant, a column per (HT, direction), each cell
    "emulated / simulated / paper" in seconds (">N": not recovered within N
    s; "!": the emulation was flagged; "?": that run's R_ss is below
    :data:`LOW_R_SS` of the new link's capacity, so its baseline had not
    reached a steady rate within the run and "recovered" means little)."""
    out: dict[str, dict[str, str]] = {}
    for _, r in table.iterrows():
        col = f"HT={r['ht_s']:g} {r['direction']}"
        paper = "-" if np.isnan(r["paper_s"]) else f"{r['paper_s']:g}"
        low = LOW_R_SS * r["new_capacity_mbps"]
        emu = study._fmt(r["emulated_s"], r["horizon_s"]) + ("!" if r["flagged"] else "")
        emu += "?" if r["emu_r_ss_mbps"] < low else ""
        sim = study._fmt(r["simulated_s"], r["horizon_s"])
        sim += "?" if r["sim_r_ss_mbps"] < low else ""
        out.setdefault(f"{r['variant']} ({r['kernel_cc']})", {})[col] = f"{emu} / {sim} / {paper}"
    frame = pd.DataFrame.from_dict(out, orient="index")
    order = [f"HT={ht:g} {d}" for ht in study.HTS for d in study.DIRECTIONS]
    frame = frame[[c for c in order if c in frame.columns]]
    frame.index.name = "variant (kernel)"
    return frame


def reproduce(out: Path, quick: bool, jobs: int | None, plan: Plan | None = None) -> Path:
    """Emulates the kernel's rows of Table 1 (``jobs`` at a time, default
    :func:`default_jobs`), simulates the same scenarios, and writes the table
    (``table1-emulated.md``/``.csv``, ``recovery-emulated.csv``) and one
    figure per cell (both runs of the flow); the emulations are kept in
    ``out/store-emulated``, the simulations in the simulated study's store
    (both resumable)."""
    plan = plan or (Plan.quick() if quick else Plan())
    out.mkdir(parents=True, exist_ok=True)
    emu_scenarios = scenarios(plan)
    print(
        f"emulating {len(emu_scenarios)} runs of {plan.duration:g} s, "
        f"{jobs or default_jobs()} at a time, then simulating them"
    )
    emulated = emulate_runs("dcnet2016-emulated", emu_scenarios, out, jobs or default_jobs())
    twins = {k: StudyRun(simulation_of(sc)) for k, sc in emu_scenarios.items()}
    simulated = run_runs("dcnet2016", twins, out, None).results
    table = measure(plan, emulated, simulated)
    wide = side_by_side(table)
    flagged = int(table["flagged"].sum())
    md = (
        Markdown()
        .lines("# DCNET 2016 Table 1 on real packets: recovery time (s)")
        .lines(
            "Each cell: emulated (Linux's algorithm) / simulated (wavelab's model of it) / paper.",
            f"Handover at T = {plan.handover_at:g} s for every row, {plan.after:g} s run after it;",
            "receiver goodput over a 1 s window first reaching 0.9 R_ss after T + HT;",
            "'>N': not recovered within N s; '!': the emulation's release lateness exceeded",
            "its bound (its timings are not the scenario's); '?': that run's R_ss (its",
            f"baseline's rate) is below {LOW_R_SS:g} of the new link's capacity, so it had not",
            "reached a steady rate within the run and the recovery time means little.",
        )
        .table(wide, index=True)
        .lines("## Every cell")
        .table(table, floatfmt=".3g")
    )
    tables = Tables(out)
    tables.csv("recovery-emulated.csv", table)
    tables.csv("table1-emulated.csv", wide, index=True)
    tables.markdown("table1-emulated.md", md)
    figures = out / "figures-emulated"
    figures.mkdir(exist_ok=True)
    for c in plan.cells():
        title = (
            f"DCNET 2016 {c.old} -> {c.new}, HT = {c.ht:g} s, {c.variant}: "
            "simulation (line) and Linux (dashes)"
        )
        fig = flow_figure(simulated[key(c)], emulated[key(c)], 0, title)
        save(fig, figures / f"{key(c)}.png")
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print("Recovery time (s), emulated / simulated / paper ('>N': not recovered within N s)")
        print(table_text(wide.reset_index()))
        if flagged:
            print(f"\nwarning: {flagged} emulated cells were flagged (lateness above the bound)")
    return out
