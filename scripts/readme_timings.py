"""Measures the wall times the README quotes for ``wavelab reproduce NAME``
(``~11 s, --quick: 3 s``) and prints each beside its claim.

Tests do not assert wall-clock times (they run on a busy machine), so these
figures are checked by running this on an idle one before they are changed:

    python scripts/readme_timings.py                  # every reproduction, full and --quick
    python scripts/readme_timings.py wave-page --quick-only

The runs go to a temporary folder (fresh stores: nothing is reused). The
emulated form (``--emulate``, root) and estimates are listed, not run.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINE = re.compile(
    r"^\$ (?P<sudo>sudo )?wavelab reproduce (?P<name>[\w-]+)(?P<opts>[^#]*)#(?P<note>.*)$"
)
CLAIM = re.compile(r"(?P<quick>--quick: )?~?(?P<value>[\d.]+) (?P<unit>s|min)\b")


def claims() -> list[tuple[str, bool, str, str]]:
    """Per README line: the experiment, whether it is emulated, its options
    and what it claims."""
    out = []
    for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        m = LINE.match(line)
        if m:
            out.append((m["name"], bool(m["sudo"]), m["opts"].strip(), m["note"].strip()))
    return out


def measure(name: str, quick: bool) -> float:
    """Wall seconds of ``wavelab reproduce NAME [--quick]`` into a fresh folder."""
    with tempfile.TemporaryDirectory() as tmp:
        argv = [sys.executable, "-m", "wavelab", "reproduce", name, "--out", f"{tmp}/out"]
        started = time.monotonic()
        subprocess.run(
            [*argv, *(["--quick"] if quick else [])],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        return time.monotonic() - started


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, allow_abbrev=False)
    p.add_argument("names", nargs="*", help="only these experiments")
    p.add_argument("--quick-only", action="store_true", help="only the --quick forms")
    args = p.parse_args()
    for name, emulated, opts, note in claims():
        if args.names and name not in args.names:
            continue
        said = {bool(c["quick"]): f"{c['value']} {c['unit']}" for c in CLAIM.finditer(note)}
        if emulated or "estimate" in note:
            print(f"{name} {opts}: not measured here (README: {note})")
            continue
        for quick in (False, True):
            if quick not in said or (args.quick_only and not quick):
                continue
            wall = measure(name, quick)
            form = "--quick" if quick else "full"
            print(f"{name} {form}: {wall:.1f} s (README: ~{said[quick]})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
