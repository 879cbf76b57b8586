"""UDP flows through the Python layer: the shipped voice-bulk scenario's
summary and CLI output, and the scenario errors a user meets."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import wavelab
from conftest import wavelab as cli
from wavelab import ScenarioFileError
from wavelab.scenario import builtin_scenario

VOICE = """
name = "voice"
duration = "5s"
[[links]]
between = ["s", "r"]
rate = "10Mbit/s"
delay = "20ms"
[[flows]]
name = "call"
from = "s"
to = "r"
transport = "udp"
stop = "4s"
udp = { pattern = "voice", playout_deadline = "100ms" }
"""


def test_a_voice_flow_on_an_idle_link_is_received_whole_and_in_time() -> None:
    res = wavelab.run(wavelab.from_toml(VOICE))
    f = res.flows.iloc[0]
    assert f["algorithm"] == "udp-voice"
    # 50 packets a second for 4 s, 188 B on the wire each
    assert (f["packets_sent"], f["packets_received"], f["packets_lost"]) == (200, 200, 0)
    assert f["packets_late"] == 0
    assert f["wire_bytes_sent"] == 200 * 188
    owd = 0.020 + 188 * 8 / 10e6
    assert f["owd_mean"] == pytest.approx(owd, abs=1e-9)
    assert f["jitter"] == 0.0
    s = res.summary().iloc[0]
    assert s["packets_late"] == 0 and s["owd_mean_ms"] == pytest.approx(owd * 1e3, abs=5e-4)
    # a UDP flow has no RTT of its own and no series of TCP state
    assert pd.isna(f["rtt_mean"]) and res.series.empty


def test_voice_bulk_prints_late_loss_and_leaves_the_voice_flow_out_of_jain(
    tmp_path: Path,
) -> None:
    sc = builtin_scenario("voice-bulk")
    assert [f.get("transport", "tcp") for f in sc.normalized["flows"]] == ["udp", "tcp"]
    res = cli(
        "run", "voice-bulk", "--set", "duration=15s", "--no-plots", "--out", "o", cwd=tmp_path
    )
    assert res.returncode == 0, res.stderr
    summary = pd.read_csv(tmp_path / "o" / "summary.csv")
    voice = summary.set_index("flow").loc["voice"]
    # the bulk flow's queue pushes voice packets past 300 ms
    assert voice["packets_late"] > 0
    assert voice["owd_p95_ms"] > 300
    # one TCP flow: no fairness index
    assert pd.isna(summary["jain"]).all()
    lines = res.stdout.splitlines()
    header = next(line for line in lines if "packets_late" in line.split())
    assert header.split()[:5] == [
        "flow",
        "packets_sent",
        "packets_received",
        "packets_lost",
        "packets_late",
    ]
    row = next(line for line in lines if line.split()[:2] == ["voice", "udp-voice"])
    # no completion time for a UDP flow
    assert row.split()[-1] == "-"


def test_a_tcp_only_run_prints_no_late_loss_column(tmp_path: Path) -> None:
    res = wavelab.run(
        wavelab.from_toml(
            VOICE.replace('transport = "udp"', "").replace(
                'udp = { pattern = "voice", playout_deadline = "100ms" }', ""
            )
        )
    )
    assert "packets_late" not in res.summary()
    assert res.flows["packets_late"].isna().all()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ('pattern = "voice"', 'flows[0].udp.rate: missing (pattern "cbr" needs it)'),
        (
            'pattern = "cbr", rate = "1Mbit/s", packet = "2000B"',
            "flows[0].udp.packet: 2000 B is not from 1 to 1472 B",
        ),
        (
            'pattern = "onoff", rate = "1Mbit/s", packet = "100B", on = "1s"',
            "flows[0].udp.off: missing",
        ),
        (
            'pattern = "trace", file = "nowhere.csv"',
            "flows[0].udp.file: nowhere.csv: cannot be read",
        ),
    ],
)
def test_bad_udp_settings_name_the_field_and_value(change: str, message: str) -> None:
    text = VOICE.replace('pattern = "voice", playout_deadline = "100ms"', change)
    if message.startswith("flows[0].udp.rate"):
        text = VOICE.replace('pattern = "voice"', 'pattern = "cbr", packet = "100B"')
    with pytest.raises(ScenarioFileError) as e:
        wavelab.from_toml(text)
    assert message in str(e.value)


def test_a_trace_file_error_names_the_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "sends.csv").write_text("time,size\n0,160\n20ms,lots\n")
    text = VOICE.replace(
        'pattern = "voice", playout_deadline = "100ms"',
        f'pattern = "trace", file = "{tmp_path / "sends.csv"}"',
    )
    with pytest.raises(ScenarioFileError) as e:
        wavelab.from_toml(text)
    assert f'flows[0].udp.file: {tmp_path / "sends.csv"} line 3: "lots" is not a size' in str(
        e.value
    )


def test_a_ping_beside_bulk_tcp_shows_its_rtt_and_stays_out_of_jain(tmp_path: Path) -> None:
    text = VOICE.replace('transport = "udp"', 'transport = "ping"').replace(
        'udp = { pattern = "voice", playout_deadline = "100ms" }', 'ping = { interval = "200ms" }'
    )
    for cc in ("cubic", "reno"):
        text += f'[[flows]]\nfrom = "s"\nto = "r"\ncc = "{cc}"\n'
    (tmp_path / "ping.toml").write_text(text)
    res = cli("run", "ping.toml", "--no-plots", "--out", "o", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    summary = pd.read_csv(tmp_path / "o" / "summary.csv").set_index("flow")
    ping = summary.loc["call"]
    # 20 ms each way, plus the queue the two TCP flows build
    assert ping["algorithm"] == "ping" and ping["min_rtt_ms"] >= 40
    assert ping["rtt_p95_ms"] > ping["min_rtt_ms"]
    # Jain's index of the two TCP flows alone
    flows = pd.read_parquet(tmp_path / "o" / "flows.parquet")
    g = flows["goodput"].iloc[1:].to_numpy()
    assert summary["jain"].iloc[0] == pytest.approx(g.sum() ** 2 / (2 * (g**2).sum()), abs=1e-4)
