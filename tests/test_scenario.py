"""Scenario loading and the errors a user sees."""

from __future__ import annotations

from pathlib import Path

import pytest

import wavelab
from wavelab import ScenarioFileError
from wavelab.sweep.store import run_key


def test_every_shipped_scenario_loads(scenarios_dir: Path) -> None:
    files = sorted(scenarios_dir.glob("*.toml"))
    names = {f.stem for f in files}
    expected = {"tahoe", "reno", "newreno", "newreno-sack", "dcnet-l1", "dcnet-l2", "fairness-4"}
    assert expected <= names
    for f in files:
        sc = wavelab.load_scenario(f)
        assert sc.name == f.stem
        assert sc.duration > 0


def test_defaults_are_filled_in(small_toml: str) -> None:
    sc = wavelab.from_toml(small_toml)
    flow = sc.normalized["flows"][0]
    assert flow["cc"] == {"algorithm": "newreno"}
    assert flow["tcp"]["mss"] == 1460
    assert flow["tcp"]["min_rto"] == "1s"
    assert flow["tcp"]["delayed_ack"] == "200ms"
    assert sc.normalized["output"]["interval"] == "100ms"


def error_of(text: str, tmp_path: Path) -> str:
    p = tmp_path / "bad.toml"
    p.write_text(text)
    with pytest.raises(ScenarioFileError) as e:
        wavelab.load_scenario(p)
    msg = str(e.value)
    assert msg.startswith(f"{p}: "), msg
    return msg[len(f"{p}: ") :]


def test_bad_rate_names_field_path_and_value(small_toml: str, tmp_path: Path) -> None:
    text = small_toml.replace('"10Mbit/s"', '"8 Mbps/s"')
    assert (
        error_of(text, tmp_path) == 'links[0].rate: "8 Mbps/s" is not a rate, write e.g. "8Mbit/s"'
    )


def test_unknown_field_is_rejected(small_toml: str, tmp_path: Path) -> None:
    text = small_toml.replace('queue = "20pkt"', 'queue = "20pkt"\nbandwidth = "1Mbit/s"')
    msg = error_of(text, tmp_path)
    assert msg.startswith("links[0].bandwidth: unknown field `bandwidth`"), msg


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            ('"10ms"', "10"),
            'links[0].delay: 10 has no unit; write a duration with a unit, e.g. "240ms"',
        ),
        (("p = 0.01", "p = 2.0"), "links[0].loss.p: 2.0 is not a probability (0 to 1)"),
        (('to = "b"', 'to = "z"'), 'flows[0].to: "z" is not a node; nodes are a, b'),
        (
            ('to = "b"', 'to = "b"\ncc = "cubicc"'),
            'flows[0].cc: "cubicc" is not a congestion-control algorithm',
        ),
        (
            ('to = "b"', 'to = "b"\ntcp = { mss = 9 }'),
            "flows[0].tcp.mss: 9 is out of range 64..=65495 bytes",
        ),
        (('"20pkt"', '"20 pockets"'), 'links[0].queue: "20 pockets" is not a queue size'),
        (('duration = "3s"', 'duration = "0s"'), "duration: must be above zero"),
        (('"10Mbit/s"', "1e-300"), "links[0].rate: 1e-300 has no unit"),
        (("p = 0.01", "p = nan"), "links[0].loss.p: not a finite number"),
        (
            ('to = "b"', 'to = "b"\ntcp = 5'),
            "flows[0].tcp: 5 is not TCP settings such as { mss = 1460",
        ),
        (('"10ms"', "-inf"), "links[0].delay: not a finite number"),
        (
            ('to = "b"', 'to = "b"\ntcp = { profile = "bsd" }'),
            "flows[0].tcp.profile: unknown variant `bsd`, expected one of `rfc`, `linux`, `ns3`",
        ),
        (
            ('to = "b"', 'to = "b"\ntcp = { tlp = true }'),
            "flows[0].tcp.tlp: the tail loss probe is part of RACK-TLP (RFC 8985); set lost_",
        ),
    ],
)
def test_semantic_errors(
    small_toml: str, tmp_path: Path, change: tuple[str, str], expected: str
) -> None:
    old, new = change
    assert old in small_toml
    assert error_of(small_toml.replace(old, new), tmp_path).startswith(expected)


def test_toml_syntax_error_and_missing_file(tmp_path: Path) -> None:
    msg = error_of("duration = \n", tmp_path)
    assert msg.startswith("not valid TOML:") and "line 1" in msg
    with pytest.raises(ScenarioFileError, match="no such file"):
        wavelab.load_scenario(tmp_path / "absent.toml")


def test_with_changes_revalidates(small_toml: str) -> None:
    sc = wavelab.from_toml(small_toml)
    changed = sc.with_changes({"flows[0].cc": "reno", "links[0].rate": "2Mbit/s", "seed": 9})
    assert changed.normalized["flows"][0]["cc"] == {"algorithm": "reno"}
    assert changed.normalized["links"][0]["rate"] == "2Mbit/s"
    assert sc.normalized["seed"] == 7, "the original is unchanged"
    with pytest.raises(ScenarioFileError, match=r"links\[0\]\.rate"):
        sc.with_changes({"links[0].rate": "fast"})


def test_the_linux_profile_resolves_to_its_fields(small_toml: str) -> None:
    sc = wavelab.from_toml(small_toml)
    linux = sc.with_changes({"flows[0].tcp": {"profile": "linux", "mss": 1000}})
    tcp = linux.normalized["flows"][0]["tcp"]
    assert "profile" not in tcp
    got = (tcp["mss"], tcp["rto"], tcp["tlp"], tcp["delayed_ack"])
    assert got == (1000, "linux", True, "200ms")
    assert (tcp["receiver"], tcp["frto"], tcp["hystart"]) == ("linux", True, "linux")
    # the same fields written out are the same run (one key in a store)
    written = sc.with_changes({"flows[0].tcp": tcp})
    assert written.normalized == linux.normalized
    assert run_key(written.normalized) == run_key(linux.normalized)
