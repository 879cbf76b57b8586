"""The numbers the README quotes cannot go stale: the demo's output is what
the demo prints (its counts and every figure of its tables; only the wall
time varies), each reproduction's figures in the README are the ones its
page in docs/ shows, and the TCP Wave page's comparison table is what
``wavelab reproduce wave-page`` writes (slow: the full reproduction), and
every run's summary table in README.md and docs/ is what that run prints."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT
from wavelab.cli.run_commands import _print_summary

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _console_block(text: str, command: str) -> list[str]:
    """The lines a ```console block shows after ``$ command``."""
    start = text.index(f"$ {command}\n") + len(f"$ {command}\n")
    return text[start : text.index("```", start)].rstrip("\n").splitlines()


def test_the_readmes_demo_output_is_what_the_demo_prints(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import wavelab
    from wavelab.scenario.builtin import demo_scenario

    res = wavelab.run(demo_scenario(), progress=False)
    _print_summary(res)
    printed = capsys.readouterr().out.rstrip("\n").splitlines()
    shown = _console_block(README, "wavelab demo")
    assert shown[: len(printed)] == printed
    counts = f"{res.run['packet_hops']:,} packet hops, {res.run['events']:,} events in "
    assert shown[len(printed) + 1].startswith(counts), shown[len(printed) + 1]


def _bullets(text: str) -> dict[str, str]:
    """The README's list of reproductions: per linked docs page, its bullet."""
    out = {}
    for m in re.finditer(r"^\* \[[^\]]+\]\((docs/[^)]+\.md)\)(.*?)(?=^\* |^$)", text, re.M | re.S):
        out[m.group(1)] = m.group(2)
    return out


NUMBER = re.compile(r"(?<![\w.])[+-]?\d+(?:,\d{3})*(?:\.\d+)?")


@pytest.mark.parametrize(
    "page",
    [
        "docs/experiments/dcnet2016.md",
        "docs/experiments/satwlan.md",
        "docs/experiments/wsc-tcp.md",
        "docs/experiments/mobiwac2009.md",
        "docs/algorithms/wave.md",
    ],
)
def test_every_number_of_a_readme_summary_is_on_its_page(page: str) -> None:
    bullet = _bullets(README)[page]
    text = (ROOT / page).read_text(encoding="utf-8")
    on_page = set(NUMBER.findall(text))
    # "21-51 %" and "0.5-10 s" are ranges: each end is a number of its own
    numbers = {n.lstrip("+") for n in NUMBER.findall(bullet.replace("-", " "))}
    missing = sorted(n for n in numbers if n not in on_page and f"+{n}" not in on_page)
    assert not missing, f"{page} does not show {missing}, which README.md quotes from it"


def test_the_readmes_reproductions_are_the_ones_that_exist() -> None:
    from wavelab.experiments import EXPERIMENTS

    named = set(re.findall(r"^\$ (?:sudo )?wavelab reproduce ([\w-]+)", README, re.M))
    assert named == set(EXPERIMENTS)


@pytest.mark.slow
def test_the_wave_page_table_is_what_the_reproduction_writes(tmp_path: Path) -> None:
    from wavelab.experiments import experiment

    experiment("wave-page")(tmp_path, False, None, None, None)
    written = (tmp_path / "comparison.md").read_text(encoding="utf-8").strip().splitlines()
    page = (ROOT / "docs" / "algorithms" / "wave.md").read_text(encoding="utf-8")
    stale = [row for row in written if row not in page.splitlines()]
    assert not stale, "docs/algorithms/wave.md shows other figures than these rows:\n" + "\n".join(
        stale
    )


def _doc_run_outputs() -> Any:
    sys.path.insert(0, str(ROOT / "scripts"))
    import doc_run_outputs

    return doc_run_outputs


BLOCKS = _doc_run_outputs().blocks()


@pytest.mark.parametrize(
    "block", BLOCKS, ids=[f"{b.path.relative_to(ROOT)}:{b.command}" for b in BLOCKS]
)
def test_a_run_output_the_docs_show_is_what_the_run_prints(block: Any) -> None:
    """Every summary table README.md and docs/ show under ``$ wavelab run``
    or ``$ wavelab demo`` (``scripts/doc_run_outputs.py --write`` rewrites
    them); one test per block, each a run of a second or less."""
    now = _doc_run_outputs().printed(block.command)
    if now is None:
        pytest.skip("the command needs a file the page writes first")
    assert now == block.shown, (
        f"{block.path.relative_to(ROOT)} shows another output of `wavelab {block.command}`: "
        "run scripts/doc_run_outputs.py --write and rewrite the prose around it"
    )


def test_the_readmes_sweep_counts_are_what_the_sweep_plans() -> None:
    """The README's ``wavelab sweep handover-grid`` block: its points,
    baselines, runs and table rows are the sweep's plan (the run itself
    takes 13 s; its rates and times are the machine's, not checked)."""
    from wavelab.sweep.grid import load_sweep
    from wavelab.sweep.plan import plan_sweep

    block = "\n".join(
        _console_block(
            README,
            "wavelab sweep handover-grid --out results/handover-grid     "
            "# a shipped sweep (sweeps/)",
        )
    )
    plan = plan_sweep(load_sweep("handover-grid"))
    m = re.search(r"handover-grid: (\d+) points and (\d+) baselines: (\d+) runs, 0 already", block)
    assert m is not None, block
    assert [int(g) for g in m.groups()] == [len(plan.points), plan.baselines, len(plan.runs)]
    assert f"{len(plan.runs)} runs ran, 0 reused from the store, 0 failed" in block
    assert f"runs.parquet and runs.csv ({len(plan.points)} rows)" in block


def test_the_listed_points_are_what_the_sweep_lists(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/scenarios.md's ``wavelab sweep handover-grid --list``: every row
    it shows (the run keys aside: they hash the build), the short names and
    the counts are what the command prints."""
    from wavelab.cli.study_commands import _list_points
    from wavelab.sweep.grid import load_sweep

    page = (ROOT / "docs" / "scenarios.md").read_text(encoding="utf-8")
    shown = _console_block(page, "wavelab sweep handover-grid --list")
    _list_points(load_sweep("handover-grid"))
    printed = capsys.readouterr().out.rstrip("\n").splitlines()

    def keyless(line: str) -> str:
        return line.rsplit(maxsplit=1)[0] if re.search(r" [0-9a-f]{16}$", line) else line

    rows = {keyless(line) for line in printed}
    assert shown[0] == printed[0]  # the header
    missing = [line for line in shown if line != "..." and keyless(line) not in rows]
    assert not missing, f"docs/scenarios.md lists other points: {missing}"
    assert shown[-3:] == printed[-3:]  # the short names and the counts
