"""Regenerates (``--write``) or checks (the default) the summary tables that
README.md and docs/ show under ``$ wavelab run ...`` and ``$ wavelab demo``:
each command is run again (without plots or captures, which do not change
the summary) and the block's lines from the table's header to the ``run:``
line, and the packet and event counts after it, are replaced by what the
command prints now (the wall time is left as it was).

A block may hold several commands (each is checked up to the next ``$``),
and a command may continue over lines ending in a backslash. Blocks whose
command needs a file the page writes first (``mm.toml``, a ``--cc-file``
not in the checkout) are listed as not checked.

    python scripts/doc_run_outputs.py            # lists the stale blocks, exit 1 if any
    python scripts/doc_run_outputs.py --write    # rewrites them
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import re
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COUNTS = re.compile(r"\n\n[\d,]+ packet hops, [\d,]+ events")
BLOCK = re.compile(
    r"^\$ wavelab (run|demo)(?P<args>(?:[^\n\\]|\\\n)*)\n(?P<body>.*?)(?=^```|^\$ )", re.M | re.S
)
"""A ``$ wavelab run`` or ``demo`` command (continued over lines ending in a
backslash) and what it printed, up to the block's end or its next command."""


@dataclass
class Block:
    """One console block's summary: its file, command and the span of its table."""

    path: Path
    command: str
    start: int
    end: int
    shown: str


def blocks() -> list[Block]:
    """The summary tables README.md and docs/ show under a run or the demo."""
    out = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        for m in BLOCK.finditer(text):
            body = m["body"]
            head = re.search(r"^ *flow +algorithm .*$", body, re.M)
            tail = re.search(r"^run: .*$", body, re.M)
            if head is None or tail is None:
                continue
            start = m.start("body") + head.start()
            end = m.start("body") + tail.end()
            # the counts line after it: "N packet hops, M events" (the wall
            # time and the files written that follow are left as they are)
            counts = COUNTS.match(body, tail.end())
            if counts is not None:
                end = m.start("body") + counts.end()
            command = " ".join(f"{m[1]}{m['args']}".replace("\\\n", " ").split())
            out.append(Block(path, command, start, end, text[start:end]))
    return out


_LOADED: set[Path] = set()


def _load_cc_file(path: Path, load: Callable[[Path], None]) -> None:
    """Registers the algorithms of ``path`` once per process: a file of the
    package by importing its module (as the tests do: one registration
    whoever imports it first), any other by ``load`` (``--cc-file``)."""
    if path in _LOADED:
        return
    package = ROOT / "python"
    if path.is_relative_to(package / "wavelab"):
        importlib.import_module(".".join(path.relative_to(package).with_suffix("").parts))
    else:
        load(path)
    _LOADED.add(path)


def printed(command: str) -> str | None:
    """What the summary of ``wavelab COMMAND`` is now, or None where it
    cannot be run from the checkout alone."""
    from wavelab.cli import build_parser
    from wavelab.cli.run_commands import _apply_sets, _print_summary
    from wavelab.runner import run
    from wavelab.scenario.builtin import demo_scenario, load_scenario_or_builtin

    argv = shlex.split(command)
    args = build_parser().parse_args(argv)
    if argv[0] == "demo":
        sc = demo_scenario()
    else:
        if args.cc_file:
            # an algorithm file of the checkout (one the page writes first
            # cannot be run from here)
            from wavelab.custom_cc import load_cc_file

            files = [ROOT / f for f in args.cc_file]
            if not all(f.is_file() for f in files):
                return None
            for f in files:
                _load_cc_file(f, load_cc_file)
        name = args.scenario
        if name.endswith(".toml") and not (ROOT / name).exists():
            return None
        sc = _apply_sets(
            load_scenario_or_builtin(str(ROOT / name) if "/" in name else name), args.set
        )
        if sc.normalized.get("emulation"):
            return None
    res = run(sc, progress=False)
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        _print_summary(res)
    counts = f"{res.run['packet_hops']:,} packet hops, {res.run['events']:,} events"
    return text.getvalue().rstrip("\n") + f"\n\n{counts}"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, allow_abbrev=False)
    p.add_argument("--write", action="store_true", help="rewrite the stale tables")
    args = p.parse_args()
    stale = 0
    edits: dict[Path, list[tuple[int, int, str]]] = {}
    for b in blocks():
        where = f"{b.path.relative_to(ROOT)}: wavelab {b.command}"
        try:
            now = printed(b.command)
        except Exception as e:  # a command the page sets up first
            now = None
            where += f" ({type(e).__name__})"
        if now is None:
            print(f"not checked  {where}")
            continue
        if now != b.shown:
            stale += 1
            print(f"stale        {where}")
            edits.setdefault(b.path, []).append((b.start, b.end, now))
        else:
            print(f"current      {where}")
    if args.write:
        for path, spans in edits.items():
            text = path.read_text(encoding="utf-8")
            for start, end, now in sorted(spans, reverse=True):
                text = text[:start] + now + text[end:]
            path.write_text(text, encoding="utf-8")
        return 0
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
