"""The queue discipline's state in the queue series, as the Results API,
the Parquet files, the run summary and the run plots carry it."""

from __future__ import annotations

import math
from pathlib import Path

import pyarrow.parquet as pq

import wavelab
from wavelab.plot import run_plots as plots

QDISC_COLUMNS = (
    "sojourn",
    "aqm_drops",
    "aqm_marks",
    "drop_prob",
    "prob_l",
    "codel_dropping",
    "codel_count",
)


def _run(name: str, duration: str = "10s") -> wavelab.Results:
    sc = wavelab.load_scenario(name)
    return wavelab.run(sc.with_changes({"duration": duration}))


def test_codel_with_ecn_counts_its_marks_in_every_table(tmp_path: Path) -> None:
    r = _run("bufferbloat-codel-ecn")
    q = r.queues
    for c in QDISC_COLUMNS:
        assert c in q, c
    data = q[q["dir"] == 0]
    marks = int(data["aqm_marks"].iloc[-1])
    links = r.links.set_index("dir")
    assert marks > 0
    assert marks == int(links.loc[0, "marked"]) == int(r.flows["ce_received"].iloc[0])
    assert (data["aqm_drops"] == 0).all()
    assert data["codel_dropping"].isin([0.0, 1.0]).all()
    assert data["drop_prob"].isna().all() and data["prob_l"].isna().all()
    # the sojourn is measured: positive once packets queue, below 0.1 s
    assert (data["sojourn"] > 0).any() and (data["sojourn"] < 0.1).all()
    # the summary carries the marks and the flow's ECN counters
    s = r.summary()
    assert int(s["marks"].iloc[0]) == marks and int(s["aqm_drops"].iloc[0]) == 0
    assert int(s["ce_received"].iloc[0]) == marks
    assert int(s["ecn_reductions"].iloc[0]) > 0
    # the Parquet file keeps the columns and their units
    r.to_parquet(tmp_path)
    schema = pq.read_schema(tmp_path / "queues.parquet")
    unit = {f.name: (f.metadata or {}).get(b"unit") for f in schema}
    assert unit["sojourn"] == b"s" and unit["drop_prob"] == b"1"
    assert unit["aqm_marks"] is None
    # the queue-delay plot draws the managed direction
    written = plots.plot_all(r, tmp_path / "plots")
    assert tmp_path / "plots" / "queue-delay.png" in written


def test_drop_tail_has_no_discipline_state_and_no_queue_delay_plot() -> None:
    r = _run("bufferbloat-drop-tail", "3s")
    q = r.queues
    for c in ("sojourn", "drop_prob", "prob_l", "codel_dropping", "codel_count"):
        assert q[c].isna().all(), c
    assert (q["aqm_drops"] == 0).all() and (q["aqm_marks"] == 0).all()
    assert plots.plot_queue_delay(r) is None


def test_pie_and_dualpi2_report_their_probabilities() -> None:
    pie = _run("bufferbloat-pie").queues
    p = pie[pie["dir"] == 0]["drop_prob"]
    assert p.notna().all() and (p > 0).any() and (p <= 1).all()
    dual = _run("bufferbloat-dualpi2").queues
    d = dual[dual["dir"] == 0]
    assert (d["prob_l"] > 0).any()
    coupled = (d["prob_l"] / 2) ** 2
    assert ((d["drop_prob"] - coupled).abs() < 1e-12).all()


def test_sweep_metrics_carry_marks_and_ecn_counters() -> None:
    from wavelab.analysis.metrics import flow_metrics

    r = _run("bufferbloat-codel-ecn", "5s")
    m = flow_metrics(r.flows, r.links, r.run, r.scenario.normalized)
    name = str(r.flows["name"].iloc[0])
    assert m["marks"] > 0 and m["aqm_drops"] == 0
    assert m["ce_received"] == m["marks"] == m[f"ce_received:{name}"]
    assert m["ecn_reductions"] > 0 and m["ecn_echoes"] >= m["ecn_reductions"]
    assert not math.isnan(m["loss_rate"])
