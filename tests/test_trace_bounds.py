"""Trace files and the tables a run grows, bounded before the run, and
errors that do not echo a file back: each case of the hostile-input report,
as a test through the Python layer and the command line (the parsers' own
tests are in ``crates/model/src/link/``, the fuzz bodies in
``crates/sim/src/fuzzing.rs``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import wavelab as wavelab_cli
from wavelab import run
from wavelab.errors import ScenarioFileError
from wavelab.scenario import from_toml, load_scenario

TRACED = """
duration = "5s"
[[links]]
between = ["a", "b"]
rate = "10Mbit/s"
delay = "5ms"
forward = {{ {field} = "{path}" }}
[[flows]]
from = "a"
to = "b"
"""


def scenario(tmp_path: Path, path: str, field: str = "trace") -> Path:
    p = tmp_path / "s.toml"
    p.write_text(TRACED.format(field=field, path=path))
    return p


def validate(p: Path) -> subprocess.CompletedProcess[str]:
    # a hang is what is tested against: bounded, but far above any speed
    return subprocess.run(
        [sys.executable, "-m", "wavelab.cli", "validate", str(p)],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("path", ["/proc/self/pagemap", "/proc/kmsg", "/proc/self/environ"])
def test_a_trace_under_proc_is_refused_without_reading_it(tmp_path: Path, path: str) -> None:
    # /proc/self/pagemap said 0 bytes and gave 4.2 GB; /proc/kmsg hung for ever
    if not os.path.exists(path):
        pytest.skip(f"{path} does not exist here")
    res = validate(scenario(tmp_path, path))
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert res.stderr.startswith(f"error: {tmp_path / 's.toml'}: links[0].forward.trace: {path}: ")
    assert (
        "is a file of the kernel's proc file system, not a trace" in res.stderr
        or "cannot be read" in res.stderr
    ), res.stderr


def test_a_fifo_or_a_device_as_a_trace_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "trace.fifo"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero"), Path("/dev/stdin")):
        res = validate(scenario(tmp_path, str(path), "rate_trace"))
        assert res.returncode == 1, res.stderr
        assert "is not a regular file (a trace is a file of text)" in res.stderr, res.stderr


@pytest.mark.parametrize("last", ["18446744073709551", "18446744073709551615", "1000000000001"])
def test_a_timestamp_beyond_the_clock_is_refused_by_validate_and_run(
    tmp_path: Path, last: str
) -> None:
    # a large last timestamp panicked the simulator (a division by zero, a
    # PanicException traceback, no results) or turned a link that should
    # carry 2 packets into 25 Mbit/s (utilisation 10,725); validate said ok
    trace = tmp_path / "big.trace"
    trace.write_text(f"0\n{last}\n")
    p = scenario(tmp_path, str(trace))
    expected = (
        f'{p}: links[0].forward.trace: {trace} line 2: "{last[:12]}'
        f'{"..." if len(last) > 12 else ""}" is later than 1000000000000 ms (10^9 s, the '
        "longest time a scenario may give)"
    )
    res = validate(p)
    assert res.returncode == 1 and res.stderr == f"error: {expected}\n"
    res = wavelab_cli("run", str(p), "--out", str(tmp_path / "out"), "--quiet")
    assert res.returncode == 2 and res.stderr == f"error: {expected}\n"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("kind", ["proc", "malformed", "beyond the clock"])
def test_the_emulator_reads_traces_within_the_same_bounds(tmp_path: Path, kind: str) -> None:
    # the emulator builds its links from the same model: a bad trace is the
    # same one-line error before anything is set up (no root needed for it)
    trace = tmp_path / "t.trace"
    path = "/proc/self/environ"
    if kind != "proc":
        trace.write_text("0\n" + ("ten\n" if kind == "malformed" else "1000000000001\n"))
        path = str(trace)
    p = scenario(tmp_path, path)
    checked = validate(p)
    assert checked.returncode == 1 and checked.stderr.startswith("error: "), checked.stderr
    out = tmp_path / "emulated"
    res = wavelab_cli("emulate", str(p), "--out", str(out))
    assert res.returncode == 2 and res.stderr == checked.stderr
    assert not out.exists()


def test_the_longest_trace_period_runs_and_carries_what_it_says(tmp_path: Path) -> None:
    # two opportunities a period of 10^9 s: two packets in the whole run
    trace = tmp_path / "two.trace"
    trace.write_text("0\n1000000000000\n")
    res = run(load_scenario(scenario(tmp_path, str(trace))), progress=False)
    assert res.links["delivered_packets"].iloc[0] <= 2
    assert 0 <= res.summary()["utilisation"].iloc[0] <= 1


def test_a_file_that_is_not_a_trace_is_not_printed_back(tmp_path: Path) -> None:
    # the first line of /etc/shadow, named as a trace, was printed whole
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$saltsalt$hashhashhashhash:19000:0:99999:7:::\nbin:*:19000::::::\n")
    for field in ("trace", "rate_trace", "delay_trace", "loss_trace"):
        res = validate(scenario(tmp_path, str(secret), field))
        assert res.returncode == 1, res.stderr
        assert "hashhash" not in res.stderr and "saltsalt" not in res.stderr, res.stderr
        assert "bin:*" not in res.stderr, res.stderr
        assert f"{secret} line " in res.stderr, res.stderr
    if os.path.exists("/etc/shadow") and os.access("/etc/shadow", os.R_OK):
        first = Path("/etc/shadow").read_text().splitlines()[0]
        res = validate(scenario(tmp_path, "/etc/shadow"))
        assert res.returncode == 1
        assert first not in res.stderr and first[13:] not in res.stderr


def test_validate_runs_the_checks_run_makes(tmp_path: Path) -> None:
    # a flow that runs a command: `wavelab run` refused it, `validate` said ok
    text = TRACED.format(field="rate", path="1Mbit/s").replace(
        'to = "b"', 'to = "b"\ncmd = "iperf3 -c {to}"'
    )
    p = tmp_path / "cmd.toml"
    p.write_text(text)
    expected = (
        f"error: {p}: flows[0].cmd: a command runs only under `wavelab emulate`; remove it to "
        "simulate the flow\n"
    )
    assert validate(p).stderr == expected
    res = wavelab_cli("run", str(p), "--out", str(tmp_path / "out"), "--quiet")
    assert res.returncode == 2 and res.stderr == expected


def test_reports_of_every_frame_are_counted_before_the_run() -> None:
    # report = "all" on a 1 Gbit/s hop for 600 s: the notifications table
    # grew until a memory cap aborted the process, with nothing written
    text = """
    duration = "600s"
    [[links]]
    between = ["a", "b"]
    rate = "1Gbit/s"
    delay = "1ms"
    arq = { retries = 7, report = "all" }
    [[flows]]
    from = "a"
    to = "b"
    """
    with pytest.raises(ScenarioFileError) as e:
        from_toml(text)
    assert str(e.value).startswith(
        'links[0].arq.report: "all" on the forward direction (up to 1Gbit/s for 600s, frames of '
        "at least 1500 B) makes up to 50000000 link-layer reports (at most 20000000 "
        "notifications)"
    ), e.value
    with pytest.raises(ScenarioFileError, match=r"output\.notification_samples: a row"):
        from_toml(
            text.replace('"1Gbit/s"', '"150Mbit/s"')
            .replace(
                'duration = "600s"',
                'duration = "1000s"\noutput = { interval = "1ms", notification_samples = true }',
            )
            .replace("arq = {", "forward = { arq = {")
            .replace('report = "all" }', 'report = "all" } }')
            .replace('to = "b"', 'to = "b"\ncount = 40')
        )
