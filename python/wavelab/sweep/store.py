"""The results store of sweeps and studies: one directory per run, written
atomically, and an index that records what finished.

Layout of a store directory::

    index.jsonl        one line per finished run: key, code version, files
                       with their sizes and SHA-256, run figures, metrics,
                       and, for a study's run, the optional tables it does
                       not keep and what a reduction computed where it ran
    runs/<key>/        the run's tables as Parquet, summary.csv, run.json
                       (the layout of `wavelab run --out`), pcap captures
    .lock              held (flock) while a sweep or a study writes here (every
                       command that writes into a folder takes it:
                       :mod:`wavelab._util.folder_lock`)

* **Keys.** A run's key is the SHA-256 (first 16 hex digits) of its
  normalised scenario as canonical JSON (sorted keys) and the code version:
  the package version and the native module's build id, a hash of the
  simulator's Rust sources and compiler (``crates/py/build.rs``). The same
  scenario run by the same code is the same run, whichever sweep asked for
  it; a rebuilt simulator never reuses old results. A trace file enters the
  key by its contents (its SHA-256 in place of its path, recorded in
  ``run.json`` as ``traces``): an edited trace is another run, a moved one
  the same.
* **Atomic writes.** A finished run is written into ``runs/.tmp-<key>-...``,
  every file and the directory are fsynced, the directory is renamed to
  ``runs/<key>`` (atomic on POSIX), the parent is fsynced, and only then is
  its line appended to the index, whole, in one write. The index is fsynced
  at most once a second and when the store closes (one fsync per line held
  up studies of short runs). A killed process loses no line it wrote; a
  crash of the machine at any point leaves either a complete run with its
  index line, or something the index does not vouch for (a run of the last
  second whose line was not yet on disk), which is run again.
* **Verification.** Each index line carries the SHA-256 of its other
  fields (``digest``), so an edited figure or a flipped bit anywhere in it
  (its key, its metrics, its file list) makes the line untrusted; a line
  must also list every file a run has, each a plain file name with its size
  and SHA-256, so a forged line with an empty file list is not trusted
  either. Before a stored run is reused, each of its files is checked
  against the size and SHA-256 its line recorded, and its ``run.json`` must
  hold the scenario that, with the line's code version, hashes to the key; a
  missing, truncated, altered or foreign file makes the run "not done" and
  it is run again. A torn index line (a kill during the append) does not
  parse and is ignored.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import os
import re
import shutil
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from wavelab import _native
from wavelab._util.files import (
    OutputPathError,
    file_sha256,
    fsync_dir,
    inside,
    write_atomically,
    write_file_synced,
)
from wavelab._util.folder_lock import acquire, busy_message, check_free, release
from wavelab.errors import WavelabError
from wavelab.results.tables import OPTIONAL_TABLES
from wavelab.scenario.field_paths import set_path
from wavelab.scenario.loading import Scenario
from wavelab.scenario.traces import trace_paths

INDEX = "index.jsonl"
RUNS = "runs"
LOCK = ".lock"
INDEX_SYNC_SECONDS = 1.0
"""Longest an index line waits for its fsync (see :meth:`Store._append`)."""
FORMAT = 2
"""Version of the index line format (2: lines carry a ``digest``)."""


class StoreError(WavelabError):
    """The store cannot be used or written; the message says why and what was kept."""


class StoreWriteError(StoreError):
    """Writing a finished run failed (e.g. the disk is full); the runs written
    before are intact."""

    def __init__(self, message: str, errno_: int | None) -> None:
        super().__init__(message)
        self.errno = errno_


def code_version() -> str:
    """The package version and the native build id, e.g. ``0.1.0+00f4ea463393796e``."""
    return f"{_native.__version__}+{_native.build_id}"


def _by_contents(normalized: Mapping[str, Any], traces: Mapping[str, str]) -> Mapping[str, Any]:
    """The scenario with each trace file's path replaced by its contents'
    SHA-256 (``traces`` maps path to digest)."""
    named = trace_paths(normalized)
    if not named:
        return normalized
    out = json.loads(json.dumps(normalized))
    for path, f in named:
        set_path(out, path, f"sha256:{traces.get(f, '?')}")
    return cast(Mapping[str, Any], out)


def run_key(
    normalized: Mapping[str, Any],
    code: str | None = None,
    traces: Mapping[str, str] | None = None,
) -> str:
    """The store key of a run of this (normalised) scenario by this code;
    ``traces`` maps the scenario's trace files to their SHA-256 (as
    :attr:`Scenario.traces`), which the key hashes instead of their paths."""
    scenario = _by_contents(normalized, traces or {})
    material = json.dumps(
        {"scenario": scenario, "code": code or code_version()},
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(material.encode()).hexdigest()[:16]


def scenario_key(sc: Scenario) -> str:
    """:func:`run_key` of a scenario."""
    return run_key(sc.normalized, traces=sc.traces)


_write_file = write_file_synced
"""Writes one file of the store (the seam the disk-full tests replace)."""


REQUIRED_FILES = frozenset(
    [
        "series.parquet",
        "flows.parquet",
        "links.parquet",
        "queues.parquet",
        "summary.csv",
        "run.json",
    ]
)
"""Files every stored run has (``packets`` and ``handovers`` only when not
empty, captures when asked for)."""

_KEY = re.compile(r"^[0-9a-f]{16}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def _canonical(d: Mapping[str, Any]) -> str:
    return json.dumps(d, sort_keys=True, separators=(",", ":"), allow_nan=True)


def _digest(d: Mapping[str, Any]) -> str:
    """The SHA-256 of an index line's fields (all but ``digest``)."""
    return hashlib.sha256(_canonical(d).encode()).hexdigest()


@dataclass
class Entry:
    """An index line: a run the store vouches for (once its files verify)."""

    key: str
    code: str
    files: dict[str, dict[str, Any]]
    run: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    captures: list[str] = field(default_factory=list)
    name: str = ""
    written: float = 0.0
    tables: bool = True
    """False for a run stored without files (``write_run(tables=False)``):
    the index line, with its metrics, is all there is."""
    dropped: list[str] = field(default_factory=list)
    """Tables of the run not kept (optional ones only, e.g. a packet log
    that a reduction in the worker read and nobody reads again)."""
    reducer: str = ""
    """The reduction that computed :attr:`reduced` in the worker
    (``module:function@version``), or empty."""
    reduced: Any = None
    """What the reduction returned (JSON), kept in the index line."""

    def to_json(self) -> str:
        """The index line, with the SHA-256 of its other fields as ``digest``."""
        d: dict[str, Any] = {
            "format": FORMAT,
            "key": self.key,
            "code": self.code,
            "name": self.name,
            "files": self.files,
            "captures": self.captures,
            "run": self.run,
            "metrics": self.metrics,
            "written": self.written,
        }
        if not self.tables:
            d["tables"] = False
        # written only when set, so the lines (and digests) of runs without
        # them read as before
        if self.dropped:
            d["dropped"] = self.dropped
        if self.reducer:
            d["reducer"] = self.reducer
            d["reduced"] = self.reduced
        return _canonical({**d, "digest": _digest(d)})


class BadLineError(ValueError):
    """An index line the store does not trust; the message says why."""


def _parse_entry(line: str) -> Entry:
    """The entry of an index line; :class:`BadLineError` if it does not parse, its
    checksum does not match (an edit, a bit flip), or it does not describe a
    complete run (a forged line)."""
    try:
        d = json.loads(line)
    except ValueError:
        raise BadLineError("it is not JSON (a write cut short)") from None
    if not isinstance(d, dict):
        raise BadLineError("it is not a JSON object")
    if d.get("format") != FORMAT:
        raise BadLineError(f"it has format {d.get('format')!r}, not {FORMAT} (another wavelab)")
    body = {k: v for k, v in d.items() if k != "digest"}
    if d.get("digest") != _digest(body):
        raise BadLineError("its checksum does not match (it was edited or damaged)")
    try:
        e = Entry(
            key=str(d["key"]),
            code=str(d["code"]),
            files=dict(d["files"]),
            run=dict(d.get("run") or {}),
            metrics=dict(d.get("metrics") or {}),
            captures=[str(c) for c in d.get("captures") or []],
            name=str(d.get("name") or ""),
            written=float(d.get("written") or 0.0),
            tables=d.get("tables", True),
            dropped=[str(t) for t in d.get("dropped") or []],
            reducer=str(d.get("reducer") or ""),
            reduced=d.get("reduced"),
        )
    except (KeyError, TypeError, ValueError):
        raise BadLineError("a field is missing or of the wrong type") from None
    if not _KEY.match(e.key):
        raise BadLineError(f"{e.key!r} is not a run key")
    if e.tables is not True and e.tables is not False:
        raise BadLineError(f"its tables field is {e.tables!r}, not true or false")
    if not set(e.dropped) <= set(OPTIONAL_TABLES):
        raise BadLineError(f"it drops {', '.join(sorted(e.dropped))}, not only optional tables")
    if not e.tables:
        if e.files or e.captures:
            raise BadLineError("a run stored without tables lists files")
        return e
    missing = sorted(REQUIRED_FILES - set(e.files))
    if missing:
        raise BadLineError(f"it lists no {', '.join(missing)}")
    for fname, info in e.files.items():
        try:
            inside(Path(RUNS), fname)
        except OutputPathError:
            raise BadLineError(f"{fname!r} is not a file name of a run") from None
        if (
            not isinstance(info, dict)
            or not isinstance(info.get("size"), int)
            or not _SHA256.match(str(info.get("sha256")))
        ):
            raise BadLineError(f"{fname} has no size and SHA-256")
    return e


def _describes(run_json: Path, key: str, code: str) -> str | None:
    """Why ``run_json`` is not the record of run ``key`` (its scenario and
    the code version must hash to the key), or None."""
    try:
        meta = json.loads(run_json.read_text(encoding="utf-8"))
        scenario = meta["scenario"]
        traces = meta.get("traces", {})
        if not isinstance(traces, dict):
            return "run.json's traces are not a table"
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return "run.json has no scenario"
    if run_key(scenario, code, traces) != key:
        return "run.json describes another run"
    return None


def busy_error(root: Path, holder: str) -> StoreError:
    """The error for a store whose lock ``holder`` holds."""
    return StoreError(busy_message(root, holder))


def check_not_busy(root: Path) -> None:
    """Raises :class:`~wavelab._util.folder_lock.FolderBusyError` if another
    process holds the lock of the store at ``root`` (without creating anything)."""
    check_free(root)


class Store:
    """A results store directory (see the module description). Open it with
    ``with Store(path) as store:``; the lock keeps a second sweep out."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.entries: dict[str, Entry] = {}
        self.torn_lines = 0
        self.bad_lines: list[tuple[int, str]] = []
        """(line number, why) of index lines not trusted (besides torn ones)."""
        self._locked = False
        self._verified: dict[str, str | None] = {}
        self._index: io.BufferedWriter | None = None
        """The index, open for appending once a line was written."""
        self._synced = 0.0
        self._index_file: tuple[int, int] | None = None
        """(device, inode) of the index as read or appended to."""
        self._index_size = 0
        """Bytes of the index this process read or appended."""

    # ----- opening ---------------------------------------------------------------

    def __enter__(self) -> Store:
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> None:
        """Creates the directory if needed, takes the lock, reads the index and
        removes temporary directories a killed sweep left behind."""
        acquire(self.root)
        try:
            (self.root / RUNS).mkdir(parents=True, exist_ok=True)
        except OSError as e:
            release(self.root)
            raise StoreError(f"{self.root}: cannot be used as a results store: {e}") from None
        self._locked = True
        self.entries = {}
        self.torn_lines = 0
        self.bad_lines = []
        try:
            self._read_index()
        except BaseException:
            self.close()
            raise
        for tmp in (self.root / RUNS).glob(".tmp-*"):
            shutil.rmtree(tmp, ignore_errors=True)
        for old in (self.root / RUNS).glob(".old-*"):
            shutil.rmtree(old, ignore_errors=True)
        for tmp in self.root.glob(".tmp-*"):
            with contextlib.suppress(OSError):
                tmp.unlink()

    def close(self) -> None:
        """Makes the index durable, closes it and releases the lock."""
        if self._index is not None:
            with contextlib.suppress(OSError):
                self.sync()
            with contextlib.suppress(OSError):
                self._index.close()
            self._index = None
        if self._locked:
            release(self.root)
            self._locked = False

    def refresh(self) -> None:
        """Reads the index again: what is on disk is what counts. After an
        interruption the last line may be written without this process
        having recorded it (Ctrl-C during the append's fsync)."""
        before = self.entries
        self.entries = {}
        self.torn_lines = 0
        self.bad_lines = []
        self._read_index()
        for key, entry in self.entries.items():
            if before.get(key) != entry:
                self._verified.pop(key, None)

    def _read_index(self) -> None:
        path = self.root / INDEX
        if not path.exists():
            return
        try:
            with open(path, "rb") as f:
                st = os.fstat(f.fileno())
                data = f.read()
            self._index_file, self._index_size = (st.st_dev, st.st_ino), len(data)
            lines = data.decode("utf-8", errors="replace").splitlines()
        except OSError as err:
            raise StoreError(
                f"{path}: cannot be read ({err.strerror or err}); move it away to start "
                "the store afresh (its runs are then run again)"
            ) from None
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                entry = _parse_entry(line)
            except BadLineError as why:
                if str(why).startswith("it is not JSON"):
                    self.torn_lines += 1  # a kill during an append
                else:
                    self.bad_lines.append((number, str(why)))
                continue
            self.entries[entry.key] = entry  # a later line for the same key wins

    # ----- reading ---------------------------------------------------------------

    def run_dir(self, key: str) -> Path:
        """Where run ``key`` lives."""
        return self.root / RUNS / key

    def problem(self, key: str) -> str | None:
        """Why run ``key`` cannot be reused (not in the index, a file missing,
        truncated or altered), or None if every file verifies. Checked once
        per store opening."""
        if key in self._verified:
            return self._verified[key]
        e = self.entries.get(key)
        why: str | None = None
        if e is None:
            why = "not in the store"
        elif not e.tables:
            why = None  # nothing but the index line, whose checksum held
        else:
            d = self.run_dir(key)
            for name, info in sorted(e.files.items()):
                p = d / name
                try:
                    size = p.stat().st_size
                except OSError:
                    why = f"{name} is missing"
                    break
                if size != info.get("size"):
                    why = f"{name} has {size} bytes, {info.get('size')} were written"
                    break
                if file_sha256(p) != info.get("sha256"):
                    why = f"{name} does not match its checksum"
                    break
            else:
                why = _describes(d / "run.json", key, e.code)
        self._verified[key] = why
        return why

    def done(
        self,
        key: str,
        captures: Iterable[str] = (),
        tables: bool = True,
        drop: Iterable[str] = (),
        reducer: str = "",
    ) -> bool:
        """True if run ``key`` is stored, verifies, and has every capture asked
        for, its tables if ``tables`` (all but those of ``drop``), and the
        reduction ``reducer`` computed, if one is named."""
        if self.problem(key) is not None:
            return False
        e = self.entries[key]
        if tables and (not e.tables or set(e.dropped) - set(drop)):
            return False
        if reducer and e.reducer != reducer:
            return False
        have = set(e.captures)
        return all(c in have for c in captures)

    def lost(self, keys: Iterable[str]) -> dict[str, str]:
        """The runs among ``keys`` this store holds that are no longer whole
        on disk, with why (their index line or a file is gone: another
        program removed them while this process wrote here); they are
        dropped from :attr:`entries`. Cheap: the index is read again only if
        it is not the file this process read and appended to, and each run's
        files are checked by size, not read."""
        expected = [k for k in keys if k in self.entries]
        path = self.root / INDEX
        try:
            st = os.stat(path)
            same = (st.st_dev, st.st_ino) == self._index_file and st.st_size >= self._index_size
        except OSError:
            same = False
        if not same:
            self.refresh()
        out: dict[str, str] = {}
        for key in expected:
            e = self.entries.get(key)
            if e is None:
                out[key] = f"its line in {INDEX} is gone"
                continue
            for name, info in sorted(e.files.items()):
                try:
                    size = (self.run_dir(key) / name).stat().st_size
                except OSError:
                    out[key] = f"{RUNS}/{key}/{name} is gone"
                    break
                if size != info.get("size"):
                    out[key] = (
                        f"{RUNS}/{key}/{name} has {size} bytes, {info.get('size')} were written"
                    )
                    break
        for key, why in out.items():
            self.entries.pop(key, None)
            self._verified[key] = why
        return out

    # ----- writing ---------------------------------------------------------------

    def write_run(
        self,
        key: str,
        files: Mapping[str, bytes],
        run: Mapping[str, Any],
        metrics: Mapping[str, Any],
        captures: Iterable[str] = (),
        name: str = "",
        tables: bool = True,
        dropped: Iterable[str] = (),
        reducer: str = "",
        reduced: Any = None,
    ) -> Entry:
        """Writes a finished run atomically and records it in the index.
        ``tables=False`` records only the index line (its metrics and run
        figures): ``files`` must be empty. ``dropped`` names the optional
        tables the run does not keep; ``reduced`` is what the reduction
        ``reducer`` computed of the run (JSON), kept in the index line.

        Raises :class:`StoreWriteError` if anything cannot be written; the
        run's temporary directory is removed and the store is as before."""
        extra: dict[str, Any] = {"dropped": sorted(set(dropped)) if tables else []}
        if reducer:
            extra |= {"reducer": reducer, "reduced": reduced}
        if not tables:
            return self._write_line_only(key, run, metrics, name, extra)
        runs = self.root / RUNS
        tmp = runs / f".tmp-{key}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        final = self.run_dir(key)
        try:
            tmp.mkdir()
            info = {}
            for fname, data in files.items():
                _write_file(tmp / fname, data)
                info[fname] = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
            fsync_dir(tmp)
            if final.exists():
                old = runs / f".old-{key}-{uuid.uuid4().hex[:8]}"
                os.rename(final, old)
                shutil.rmtree(old, ignore_errors=True)
            os.rename(tmp, final)
            fsync_dir(runs)
            entry = Entry(
                key=key,
                code=code_version(),
                files=info,
                run=dict(run),
                metrics=dict(metrics),
                captures=sorted(set(captures)),
                name=name,
                written=time.time(),
                **extra,
            )
            self._append(entry.to_json())
        except BaseException as e:
            shutil.rmtree(tmp, ignore_errors=True)
            if not isinstance(e, OSError):
                raise  # Ctrl-C while writing: nothing half-written stays
            raise self._write_error(key, e) from None
        self.entries[key] = entry
        self._verified[key] = None
        return entry

    def _write_error(self, key: str, e: OSError) -> StoreWriteError:
        reason = os.strerror(e.errno) if e.errno else str(e)
        if e.errno == errno.ENOSPC:
            reason = "no space left on device"
        return StoreWriteError(f"{self.root}: cannot write run {key}: {reason}", e.errno)

    def _write_line_only(
        self,
        key: str,
        run: Mapping[str, Any],
        metrics: Mapping[str, Any],
        name: str,
        extra: Mapping[str, Any],
    ) -> Entry:
        entry = Entry(
            key=key,
            code=code_version(),
            files={},
            run=dict(run),
            metrics=dict(metrics),
            name=name,
            written=time.time(),
            tables=False,
            **extra,
        )
        try:
            self._append(entry.to_json())
        except OSError as e:
            raise self._write_error(key, e) from None
        self.entries[key] = entry
        self._verified[key] = None
        return entry

    def _append(self, line: str) -> None:
        """Appends an index line. Each line is written whole at once (a
        killed process leaves it in the file, or none of it); it is fsynced
        with the lines before it at most every :data:`INDEX_SYNC_SECONDS`
        and when the store closes, not one by one: an fsync takes 1-4 ms on
        a small VM, as long as a short run of a study, and the parent, which
        writes every line, would otherwise hold up the workers. A crash of
        the machine can so lose the lines of the last second or so; their
        runs are not vouched for and run again."""
        if self._index is None:
            path = self.root / INDEX
            f = open(path, "ab")  # noqa: SIM115 (closed in close())
            try:
                # a torn line from a killed writer must not swallow this one
                if f.tell() > 0:
                    with open(path, "rb") as r:
                        r.seek(-1, os.SEEK_END)
                        if r.read(1) != b"\n":
                            f.write(b"\n")
            except OSError:
                f.close()
                raise
            self._index = f
            self._synced = time.monotonic()
            st = os.fstat(f.fileno())
            self._index_file = (st.st_dev, st.st_ino)
        self._index.write(line.encode() + b"\n")
        self._index.flush()
        self._index_size = self._index.tell()
        if time.monotonic() - self._synced >= INDEX_SYNC_SECONDS:
            self.sync()

    def sync(self) -> None:
        """Makes the index lines written so far durable (fsync)."""
        if self._index is not None:
            os.fsync(self._index.fileno())
            self._synced = time.monotonic()

    def write_file(self, name: str, data: bytes) -> Path:
        """Writes a file at the top of the store atomically (temp, fsync, rename)."""
        path = self.root / name
        try:
            write_atomically(path, data, _write_file)
        except OSError as e:
            reason = "no space left on device" if e.errno == errno.ENOSPC else str(e)
            raise StoreWriteError(f"{path}: cannot be written: {reason}", e.errno) from None
        return path
