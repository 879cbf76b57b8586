"""Where wavelab writes: a scenario's name is a label, never a path; every
file lands inside the output root; a full disk leaves the previous files or
none, never empty ones."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import wavelab
from wavelab._util import files as outputs
from wavelab._util.files import OutputPathError, file_name, inside

SCENARIO = """
name = NAME
duration = "1s"

[[links]]
between = ["a", "b"]
rate = "10Mbit/s"
delay = "10ms"

[[flows]]
name = "f"
from = "a"
to = "b"
"""


def scenario_named(tmp_path: Path, name: str) -> Path:
    p = tmp_path / "named.toml"
    p.write_text(SCENARIO.replace("NAME", name), encoding="utf-8")
    return p


def every_file(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize(
    ("name", "directory"),
    [
        ('"../../x"', "x"),
        ('"/abs/path"', "abs-path"),
        ('"a/b\\\\c"', "a-b-c"),
        ('".."', "scenario"),
        ('"."', "scenario"),
        ('"-rf"', "rf"),
        ('"DCNET L1 → L2"', "DCNET-L1-L2"),
        ('"' + "é" * 128 + '"', "é" * 60),
    ],
)
def test_a_scenario_name_never_escapes_the_output_root(
    tmp_path: Path, name: str, directory: str
) -> None:
    # with no --out, `name = "../../x"` wrote two levels above results/ and
    # `name = "/abs/path"` wrote to that absolute path
    work = tmp_path / "w" / "d"
    work.mkdir(parents=True)
    src = scenario_named(tmp_path, name)
    before = every_file(tmp_path)
    res = wavelab("run", str(src), "--quiet", "--no-plots", cwd=work)
    assert res.returncode == 0, res.stderr
    new = every_file(tmp_path) - before
    assert new, "the run wrote nothing"
    root = (work / "results").resolve()
    for f in new:
        assert f.resolve().parent == root / directory, f
    assert len(directory.encode()) <= outputs.MAX_FILE_NAME_BYTES


def test_a_control_character_in_a_name_is_an_error_naming_the_field(tmp_path: Path) -> None:
    # `name = "a\u0000b"` passed `validate`, then `run` raised
    # "ValueError: embedded null byte"
    src = scenario_named(tmp_path, '"a\\u0000b"')
    for args in (["validate", str(src)], ["run", str(src), "--quiet"]):
        res = wavelab(*args, cwd=tmp_path)
        assert res.returncode in (1, 2), res.stderr
        assert "Traceback" not in res.stderr
        assert 'name: "a\\0b" contains the control character' in res.stderr
    assert not (tmp_path / "results").exists()


def test_a_very_long_name_is_an_error(tmp_path: Path) -> None:
    src = scenario_named(tmp_path, '"' + "n" * 129 + '"')
    res = wavelab("validate", str(src))
    assert res.returncode == 1
    assert "name: " in res.stderr and "has 129 characters (at most 128)" in res.stderr


def test_file_names_are_single_safe_components() -> None:
    assert file_name("../../x") == "x"
    assert file_name("/abs/path") == "abs-path"
    assert file_name("..") == "scenario"
    assert file_name("", fallback="run") == "run"
    assert file_name("flow:first") == "flow-first"
    long = file_name("ü" * 500)
    assert len(long.encode()) <= outputs.MAX_FILE_NAME_BYTES and long == "ü" * 60
    root = Path("results")
    for bad in ["", ".", "..", "a/b", "/etc", "a\x00b"]:
        with pytest.raises(OutputPathError):
            inside(root, bad)
    assert inside(root, "x") == root / "x"


def test_a_capture_target_makes_a_file_inside_the_output_directory(tmp_path: Path) -> None:
    src = scenario_named(tmp_path, '"cap"')
    out = tmp_path / "out"
    res = wavelab("run", str(src), "--out", str(out), "--quiet", "--no-plots", "--pcap", "f")
    assert res.returncode == 0, res.stderr
    assert (out / "f.pcap").stat().st_size > 0
    # a target that names nothing: an error, and no file of any kind is left
    res = wavelab(
        "run", str(src), "--out", str(out), "--quiet", "--no-plots", "--pcap", "flow:../../evil"
    )
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert 'no flow is called "../../evil"' in res.stderr
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []
    assert not list(tmp_path.rglob("*evil*"))


# ----- a full disk --------------------------------------------------------------


def snapshot(d: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())}


def test_a_full_disk_leaves_the_previous_files_never_empty_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # `wavelab run` on a full disk reported clearly but left 0-byte Parquet
    # and pcap files
    from wavelab import cli

    src = scenario_named(tmp_path, '"full"')
    out = tmp_path / "out"
    args = ["run", str(src), "--out", str(out), "--quiet", "--pcap", "f"]
    assert cli.main(args) == 0
    before = snapshot(out)
    assert {"series.parquet", "run.json", "f.pcap", "cwnd.png"} <= set(before)
    real = outputs.write_file_synced
    calls = {"n": 0}

    def full_after(limit: int) -> object:
        def write(path: Path, data: bytes) -> None:
            calls["n"] += 1
            if calls["n"] > limit:
                raise OSError(errno.ENOSPC, "No space left on device", str(path))
            real(path, data)

        return write

    # the disk fills up in the middle of the tables, and in the plots, while
    # the same scenario runs again (another one would need --force, which
    # removes the previous results first); run.json differs from run to run
    # (its wall time)
    for limit in (2, 7):
        calls["n"] = 0
        monkeypatch.setattr(outputs, "write_file_synced", full_after(limit))
        code = cli.main(args)
        err = capsys.readouterr().err
        assert code == 2
        assert "no space left on device" in err.lower() and "Traceback" not in err
        after = snapshot(out)
        assert set(after) == set(before), "no file added, none lost, no temporary file left"
        assert all(after.values()), "no empty file"
        if limit == 2:
            assert after == before, "the tables and the capture are the previous run's"
    monkeypatch.setattr(outputs, "write_file_synced", real)
    assert cli.main(args) == 0
    assert snapshot(out)["run.json"] != before["run.json"]


@contextlib.contextmanager
def small_tmpfs(path: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` mounted at ``path`` (root only: skips otherwise)."""
    path.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a small tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=False)


def fill(disk: Path, room: int) -> None:
    """Fills the file system of ``disk`` but for about ``room`` bytes."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError as e:
        assert e.errno == errno.ENOSPC
    finally:
        os.close(fd)
    os.truncate(filler, max(filler.stat().st_size - room, 0))


def test_a_really_full_disk_leaves_no_empty_files(tmp_path: Path) -> None:
    """The same on a real file system that fills up (a 2 MB tmpfs): the pcap
    written by the simulator and the tables written by Python."""
    src = scenario_named(tmp_path, '"disk"')
    with small_tmpfs(tmp_path / "disk", "2m") as disk:
        out = disk / "out"
        args = ("run", str(src), "--out", str(out), "--quiet", "--no-plots", "--pcap", "f")
        assert wavelab(*args).returncode == 0
        before = snapshot(out)
        fill(disk, 40_000)  # a little room: some files fit, not all
        # another, longer scenario with --force: the previous results go only
        # once the new ones are all written (they used to be removed first,
        # so a full disk left the folder with neither)
        res = wavelab(*args, "--set", "seed=3", "--set", "duration=3s", "--force")
        assert res.returncode == 2, res.stderr
        assert "Traceback" not in res.stderr
        assert res.stderr.count("\n") == 1, res.stderr  # one line
        assert "no space left on device" in res.stderr
        assert "the results that were there are kept as they were" in res.stderr
        assert snapshot(out) == before, "the previous results, whole; no temporary file"
