"""TCP Wave for stock Linux (``wavelab bpf ...``): finds, builds and runs the
``wavelab-bpf`` loader (crates/bpf), which registers the BPF congestion
control ``wave`` in the running kernel.

The loader is a separate Rust program because it builds with clang, bpftool,
libbpf and libelf, which neither the simulator nor this package needs; see
docs/algorithms/wave-bpf.md.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from wavelab.errors import WavelabError

BINARY = "wavelab-bpf"
SOURCE = Path(__file__).resolve().parents[3] / "crates" / "bpf"
"""The loader's crate, when this package runs from a source checkout."""

PREREQUISITES = {
    "cargo": "Rust's cargo (https://rustup.rs)",
    "clang": "clang (Debian: apt-get install clang)",
    "bpftool": "bpftool (Debian: apt-get install bpftool)",
    "pkg-config": "pkg-config (Debian: apt-get install pkg-config)",
}
HEADERS = {
    "/usr/include/libelf.h": "libelf's headers (Debian: apt-get install libelf-dev)",
    "/usr/include/zlib.h": "zlib's headers (Debian: apt-get install zlib1g-dev)",
}


def _which(tool: str) -> str | None:
    return shutil.which(tool) or shutil.which(tool, path="/usr/sbin:/sbin")


def missing() -> list[str]:
    """What building the loader needs and this machine lacks."""
    out = [what for tool, what in PREREQUISITES.items() if _which(tool) is None]
    out += [what for path, what in HEADERS.items() if not Path(path).exists()]
    if not Path("/sys/kernel/btf/vmlinux").exists():
        out.append("the running kernel's BTF (/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF)")
    return out


def binary() -> Path | None:
    """The loader: $WAVELAB_BPF, then the source checkout's release build, then PATH."""
    env = os.environ.get("WAVELAB_BPF")
    candidates = [Path(env)] if env else []
    candidates.append(SOURCE / "target" / "release" / BINARY)
    found = _which(BINARY)
    if found:
        candidates.append(Path(found))
    return next((c for c in candidates if c.is_file()), None)


def build() -> Path:
    """Builds the loader from the source checkout (release profile)."""
    if not (SOURCE / "Cargo.toml").is_file():
        raise WavelabError(
            f"the loader's source ({SOURCE}) is not here: wavelab was not installed from a "
            "source checkout; build it there with "
            "`cargo build --release --manifest-path crates/bpf/Cargo.toml`"
        )
    lacking = missing()
    if lacking:
        raise WavelabError("building wavelab-bpf needs " + "; ".join(lacking))
    cmd = ["cargo", "build", "--release", "--manifest-path", str(SOURCE / "Cargo.toml")]
    print("building wavelab-bpf (the first build compiles libbpf, about a minute):", " ".join(cmd))
    if subprocess.run(cmd, check=False).returncode != 0:
        raise WavelabError("building wavelab-bpf failed (cargo's messages are above)")
    built = SOURCE / "target" / "release" / BINARY
    if not built.is_file():
        raise WavelabError(f"cargo reported success but {built} is missing")
    return built


def run_loader(args: Sequence[str]) -> int:
    """Runs the loader with these arguments; its exit status."""
    exe = binary()
    if exe is None:
        raise WavelabError(
            "wavelab-bpf is not built: run `wavelab bpf build` (from a source checkout), "
            "or put it on PATH, or set WAVELAB_BPF to its path"
        )
    return subprocess.run([str(exe), *args], check=False).returncode
