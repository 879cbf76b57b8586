"""Which code made a result: the package version, the native module's
build id (a hash of the simulator's Rust sources and compiler,
``crates/py/build.rs``), and, when the package runs from a git checkout,
the commit and whether files tracked by git differ from it."""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path
from typing import Any

from wavelab import _native

GIT_SECONDS = 5.0
"""Longest a git query may take (a hung file system gives no commit)."""


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            timeout=GIT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def checkout_commit(root: Path) -> dict[str, Any] | None:
    """``{"commit": SHA, "modified": bool}`` of the checkout at ``root``, or
    None if it is not one (or git is not installed)."""
    if not (root / ".git").exists():
        return None
    commit = _git(root, "rev-parse", "HEAD")
    if not commit:
        return None
    status = _git(root, "status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "modified": bool(status)}


@functools.cache
def code_record() -> dict[str, Any]:
    """The ``code`` record of ``run.json`` (once per process): ``version``,
    ``build``, and ``commit`` and ``modified`` when the package runs from a
    checkout (its folder is the checkout's ``python/wavelab``)."""
    record: dict[str, Any] = {"version": _native.__version__, "build": _native.build_id}
    package = Path(__file__).resolve().parents[1]
    if package.parent.name == "python":
        record |= checkout_commit(package.parent.parent) or {}
    return record
