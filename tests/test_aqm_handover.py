"""The queue-discipline study (``wavelab reproduce aqm-handover``): its
quick form's tables and figures, resumption, what the disciplines do to the
queue and the marks, and the runs it builds."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from wavelab import cli
from wavelab.experiments import aqm_handover as study


def test_the_quick_study_writes_its_tables_and_figures_and_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "aqm"
    assert cli.main(["reproduce", "aqm-handover", "--quick", "--out", str(out)]) == 0
    runs = pd.read_csv(out / "runs.csv")
    form = study.QUICK
    assert len(runs) == len(study.PATHS) * len(form.rows) * len(form.qdiscs)
    # nothing delivers more than the new link carries (a little slack: data
    # the receiver held before the new link came up)
    assert ((runs["goodput_share"] > 0) & (runs["goodput_share"] <= 1.02)).all()
    assert ((runs["link_busy"] > 0) & (runs["link_busy"] <= 1.0 + 1e-9)).all()
    # the recovery time is measured on the handover paths only
    assert runs[runs["path"] == "geo"]["recovery_s"].isna().all()
    # CoDel and FQ-CoDel keep CUBIC's queue shorter than the drop-tail buffer
    cubic = runs[runs["row"] == "cubic"].set_index(["path", "qdisc"])["queue_p95_ms"]
    for path in study.PATHS:
        for aqm in ("codel", "fq_codel"):
            assert cubic[(path, aqm)] < cubic[(path, "drop-tail")] / 2, (path, aqm)
    # marks only where the flow negotiated ECN and the discipline marks
    ecn = runs["row"].isin(["cubic-ecn", "dctcp"])
    assert (runs[~ecn]["marks"] == 0).all()
    assert (runs[ecn & (runs["qdisc"] == "drop-tail")]["marks"] == 0).all()
    assert (runs[ecn & (runs["qdisc"] == "codel")]["marks"] > 0).all()
    for name in ("plane.png", "recovery.png", "summary.md"):
        assert (out / name).stat().st_size > 0
    assert "## L1L2: to 90 % of the new link (s)" in (out / "summary.md").read_text()
    # started again, it runs nothing and measures the same
    capsys.readouterr()
    assert cli.main(["reproduce", "aqm-handover", "--quick", "--out", str(out)]) == 0
    assert "0 to run" in capsys.readouterr().err
    assert pd.read_csv(out / "runs.csv").equals(runs)


def test_each_run_puts_its_discipline_and_flow_on_the_bottleneck() -> None:
    runs = study.scenarios(study.FULL)
    assert len(runs) == len(study.PATHS) * len(study.ROWS) * len(study.QDISCS)
    for key, (path, row, qdisc) in study.cells(study.FULL).items():
        data = runs[key].normalized
        link = data["links"][1]
        discipline = link.get("qdisc")
        assert (discipline is None) if qdisc == "drop-tail" else discipline["discipline"] == qdisc
        flow = data["flows"][0]
        cc, ecn = study.ROWS[row]
        assert len(data["flows"]) == 1
        assert flow["cc"]["algorithm"] == cc
        assert flow["tcp"]["ecn"] is ecn
        assert flow["tcp"]["sack"] is (cc != "wave")
        if path != "geo":
            (handover,) = link["handovers"]
            assert handover["at"] == "60s"
