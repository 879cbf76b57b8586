"""`wavelab bpf`: the CLI around the TCP Wave BPF loader (crates/bpf). The
kernel side (load, select, carry data, unload) is tested in
crates/bpf/tests/kernel.rs; here the CLI's plumbing, on the same kernel.
Without root, the kernel's BTF or a built loader the tests are skipped with
the reason; under CI=true they fail instead."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from wavelab.cli import main
from wavelab.emulator import bpf
from wavelab.errors import WavelabError

# The BPF TCP Wave is loaded into (and unloaded from) the kernel, which every
# test process shares: scripts/test.sh runs these in one process of their own.
pytestmark = pytest.mark.kernel_state


def _skip_or_fail(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true: {reason}")
    pytest.skip(reason)


@pytest.fixture
def loader() -> Path:
    if os.geteuid() != 0:
        _skip_or_fail("loading a BPF congestion control needs root")
    if not Path("/sys/kernel/btf/vmlinux").exists():
        _skip_or_fail("the kernel has no BTF (/sys/kernel/btf/vmlinux)")
    exe = bpf.binary()
    if exe is None:
        _skip_or_fail("wavelab-bpf is not built (`wavelab bpf build`; scripts/test.sh builds it)")
    assert exe is not None
    return exe


def available() -> list[str]:
    return Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()


def test_load_status_unload_through_the_cli(
    loader: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    main(["bpf", "unload"])
    assert "wave" not in available()
    assert main(["bpf", "load", "--variant", "linux-4.12", "--beta", "200ms"]) == 0
    try:
        assert "wave" in available()
        capfd.readouterr()
        assert main(["bpf", "status"]) == 0
        out = capfd.readouterr().out
        assert 'registered as "wave" (loaded by wavelab-bpf)' in out
        assert "beta 200000 us" in out and "TxTime0 500000 us" in out, out
        assert main(["bpf", "load"]) != 0, "a second load is refused"
        assert "already registered" in capfd.readouterr().err
    finally:
        assert main(["bpf", "unload"]) == 0
    assert "wave" not in available()


def test_a_bad_parameter_is_named(loader: Path, capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["bpf", "load", "--beta", "soon"]) != 0
    err = capfd.readouterr().err
    assert 'beta: "soon" is not a duration' in err, err
    assert main(["bpf", "load", "--variant", "linux"]) != 0
    assert "unknown variant `linux`" in capfd.readouterr().err
    assert "wave" not in available()


def test_without_a_loader_the_message_says_how_to_get_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(bpf, "SOURCE", tmp_path / "nowhere")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("WAVELAB_BPF", raising=False)
    with pytest.raises(WavelabError, match="wavelab bpf build"):
        bpf.run_loader(["status"])
    with pytest.raises(WavelabError, match="not installed from a source checkout"):
        bpf.build()


def test_missing_prerequisites_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bpf, "_which", lambda tool: None if tool == "clang" else "/bin/x")
    assert any("clang (Debian: apt-get install clang)" in m for m in bpf.missing())
