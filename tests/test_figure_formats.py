"""Plots as PNG, PDF or SVG, at any resolution (--format
and --dpi)."""

from __future__ import annotations

import struct
from pathlib import Path

from conftest import LOSSY, wavelab

SHORT = LOSSY.replace('duration = "6s"', 'duration = "2s"')


def _png_width(path: Path) -> int:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width: int = struct.unpack(">I", data[16:20])[0]
    return width


def test_plots_in_every_format_and_resolution(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(SHORT)
    assert wavelab("run", "s.toml", "--out", "png", "--quiet", cwd=tmp_path).returncode == 0
    base = _png_width(tmp_path / "png" / "rate.png")
    res = wavelab("plot", "png", "--out", "hi", "--dpi", "220", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    # twice the dots per inch, twice the pixels (the figure is 10 inches wide)
    assert _png_width(tmp_path / "hi" / "rate.png") == 2 * base == 2200
    for fmt, magic in (("pdf", b"%PDF"), ("svg", b"<?xml")):
        res = wavelab("run", "s.toml", "--out", fmt, "--quiet", "--format", fmt, cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        names = {p.name for p in (tmp_path / fmt).iterdir()}
        assert {f"rate.{fmt}", f"sequence.{fmt}", f"cwnd.{fmt}", f"rtt.{fmt}"} <= names
        assert not any(n.endswith(".png") for n in names)
        assert (tmp_path / fmt / f"rate.{fmt}").read_bytes()[:5].startswith(magic)


def test_a_bad_format_or_resolution_is_refused_before_the_run(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(SHORT)
    res = wavelab("run", "s.toml", "--out", "o", "--dpi", "5", cwd=tmp_path)
    assert res.returncode == 2 and res.stderr.strip() == (
        "error: --dpi 5: give a whole number from 20 to 1200"
    )
    assert not (tmp_path / "o").exists()
    res = wavelab("run", "s.toml", "--out", "o", "--format", "jpg", cwd=tmp_path)
    assert res.returncode == 2 and "invalid choice: 'jpg'" in res.stderr
    assert "Traceback" not in res.stderr and not (tmp_path / "o").exists()


def test_the_sweep_plot_takes_the_format_too(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text(SHORT + '\n[sweep]\n"flows[0].cc" = ["newreno", "cubic"]\n')
    assert wavelab("sweep", "s.toml", "--out", "sw", "--quiet", cwd=tmp_path).returncode == 0
    res = wavelab("plot", "sw", "--format", "svg", cwd=tmp_path)
    assert res.returncode == 0 and res.stdout.strip() == "sw/throughput-delay.svg"
    assert (tmp_path / "sw" / "throughput-delay.svg").read_bytes().startswith(b"<?xml")
