"""Results are never silently mixed: a run or a sweep
refuses a directory that holds another scenario's results unless --force."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import SMALL, wavelab
from wavelab import from_toml
from wavelab.results.ownership import MixedResultsError, claim_run_dir
from wavelab.sweep.ownership import claim_sweep_dir

SHORT = SMALL.replace('duration = "3s"', 'duration = "1s"')
SWEEP = SHORT + "\n[sweep]\nseeds = 2\n"


def _error_line(res: subprocess.CompletedProcess[str]) -> str:
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    return res.stderr.strip().splitlines()[-1]


def test_a_run_with_changes_gets_its_own_default_directory(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(SHORT)
    plain = wavelab("run", "s.toml", "--quiet", "--no-plots", cwd=tmp_path)
    changed = wavelab("run", "s.toml", "--set", "flows[0].cc=cubic", "--no-plots", cwd=tmp_path)
    assert plain.returncode == 0 and changed.returncode == 0, changed.stderr
    dirs = sorted(p.name for p in (tmp_path / "results").iterdir())
    digest = from_toml(SHORT).with_changes({"flows[0].cc": "cubic"})
    from wavelab.results.ownership import scenario_digest

    assert dirs == ["small", f"small-{scenario_digest(digest.normalized)[:8]}"]
    # the run's tables (rtt_distribution.parquet among them), summary.csv, run.json
    assert f"wrote 8 files to results/{dirs[1]}/" in changed.stdout
    for d in dirs:
        meta = json.loads((tmp_path / "results" / d / "run.json").read_text())
        assert meta["scenario"]["flows"][0]["cc"]["algorithm"] == (
            "cubic" if d != "small" else "newreno"
        )


def test_a_run_refuses_another_scenarios_directory_unless_forced(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(SHORT)
    out = tmp_path / "out"
    assert wavelab("run", "s.toml", "--out", "out", cwd=tmp_path).returncode == 0
    before = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    # the same scenario again: replaced (runs are deterministic)
    again = wavelab("run", "s.toml", "--out", "out", "--quiet", "--no-plots", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    # another one: refused before it runs, nothing touched
    cubic = ["run", "s.toml", "--out", "out", "--set", "flows[0].cc=cubic"]
    res = wavelab(*cubic, "--set", "seed=9", cwd=tmp_path)
    assert _error_line(res) == (
        'error: out holds the results of another scenario (flows[0].cc.algorithm: "newreno" '
        'there, "cubic" here; seed: 7 there, 9 here); choose another --out, or add --force '
        "to replace them"
    )
    assert set(before) == {p.name for p in out.iterdir()}
    assert "rate.png" in before
    # --force clears wavelab's files (the old plots too) and nothing else
    (out / "notes.txt").write_text("mine")
    forced = wavelab(*cubic, "--no-plots", "--quiet", "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    names = {p.name for p in out.iterdir()}
    assert "rate.png" not in names and "notes.txt" in names and "run.json" in names
    meta = json.loads((out / "run.json").read_text())
    assert meta["scenario"]["flows"][0]["cc"]["algorithm"] == "cubic"


def test_runs_and_sweeps_do_not_share_a_directory(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(SHORT)
    (tmp_path / "sw.toml").write_text(SWEEP)
    assert wavelab("sweep", "sw.toml", "--out", "st", "--quiet", cwd=tmp_path).returncode == 0
    res = wavelab("run", "s.toml", "--out", "st", cwd=tmp_path)
    assert _error_line(res) == (
        "error: st holds a sweep's store; choose another --out, or add --force to remove it "
        "and write this run there"
    )
    assert wavelab("run", "s.toml", "--out", "rd", "--no-plots", cwd=tmp_path).returncode == 0
    res = wavelab("sweep", "sw.toml", "--out", "rd", cwd=tmp_path)
    assert _error_line(res) == (
        "error: rd holds the results of a single run (wavelab run); choose another --out, or "
        "add --force to remove them and start this sweep there"
    )
    assert not (tmp_path / "rd" / "index.jsonl").exists()


def test_a_sweep_resumes_its_own_store_and_refuses_another_scenarios(tmp_path: Path) -> None:
    (tmp_path / "sw.toml").write_text(SWEEP)
    assert wavelab("sweep", "sw.toml", "--out", "st", "--quiet", cwd=tmp_path).returncode == 0
    # more seeds of the same scenario: the store is reused and grows
    (tmp_path / "sw.toml").write_text(SWEEP.replace("seeds = 2", "seeds = 3"))
    grown = wavelab("sweep", "sw.toml", "--out", "st", "--quiet", cwd=tmp_path)
    assert grown.returncode == 0 and "1 runs ran, 2 reused" in grown.stderr, grown.stderr
    # another base scenario: refused, the store untouched
    index = (tmp_path / "st" / "index.jsonl").read_text()
    (tmp_path / "sw.toml").write_text(SWEEP.replace('rate = "10Mbit/s"', 'rate = "5Mbit/s"'))
    res = wavelab("sweep", "sw.toml", "--out", "st", cwd=tmp_path)
    assert _error_line(res) == (
        'error: st holds a sweep of another scenario (links[0].rate: "10Mbit/s" there, '
        '"5Mbit/s" here); choose another --out, or add --force to remove them and start '
        "this sweep there"
    )
    assert (tmp_path / "st" / "index.jsonl").read_text() == index
    forced = wavelab("sweep", "sw.toml", "--out", "st", "--quiet", "--force", cwd=tmp_path)
    assert forced.returncode == 0 and "2 runs ran, 0 reused" in forced.stderr, forced.stderr
    assert len((tmp_path / "st" / "index.jsonl").read_text().splitlines()) == 2


def test_unlabelled_results_and_files_are_handled_safely(tmp_path: Path) -> None:
    sc = from_toml(SHORT)
    # a directory of the user's own files is not wavelab's: refused, --force
    # or not, and never touched; hidden files alone do not count
    own = tmp_path / "own"
    own.mkdir()
    (own / "paper.tex").write_text("x")
    for claim in (claim_run_dir, claim_sweep_dir):
        with pytest.raises(MixedResultsError, match="holds nothing of wavelab's"):
            claim(own, sc.normalized, force=True)
    assert [p.name for p in own.iterdir()] == ["paper.tex"]
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / ".DS_Store").write_text("x")
    claim_run_dir(hidden, sc.normalized)
    # wavelab's files without the run.json that says whose they are
    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / "rate.png").write_bytes(b"png")
    with pytest.raises(MixedResultsError, match=r"do not say whose they are \(rate.png"):
        claim_run_dir(odd, sc.normalized)
    claim_run_dir(odd, sc.normalized, force=True)
    assert not (odd / "rate.png").exists()
    # a file where the directory should be
    f = tmp_path / "f"
    f.write_text("x")
    with pytest.raises(MixedResultsError, match="is a file, not a directory"):
        claim_run_dir(f, sc.normalized, force=True)


def test_the_python_api_refuses_too(tmp_path: Path) -> None:
    import wavelab

    a = wavelab.run(from_toml(SHORT), progress=False)
    b = wavelab.run(from_toml(SHORT).with_changes({"seed": 2}), progress=False)
    a.to_parquet(tmp_path / "o")
    a.to_parquet(tmp_path / "o")
    with pytest.raises(MixedResultsError, match="seed: 7 there, 2 here"):
        b.to_parquet(tmp_path / "o")
    b.to_parquet(tmp_path / "o", force=True)
    assert json.loads((tmp_path / "o" / "run.json").read_text())["scenario"]["seed"] == 2
