"""Scenarios: loading TOML files, validating them through the Rust schema.

The schema is defined once, in Rust (``crates/model/src/scenario/``); this
module only reads TOML, hands the data over as JSON and turns the Rust error
into a message that starts with the file name.
"""

from __future__ import annotations

import copy
import json
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from wavelab import _native
from wavelab.errors import (
    ScenarioFileError,
    WavelabError,
    check_path,
    check_type,
    read_text_file,
)
from wavelab.outputs import file_sha256
from wavelab.paths import set_path

MAX_DEPTH = 32
"""How deep tables and arrays may nest in a scenario or sweep file (the
schema needs 6 levels). Deeper input is refused before any parser or walk
recurses into it, with an error instead of Python's recursion limit."""


@dataclass(frozen=True)
class Scenario:
    """A validated scenario.

    ``data`` is the scenario as written; ``normalized`` has every default filled
    in (what the simulator runs). ``source`` is the file it came from, if any.
    ``emulation`` is true for a scenario validated for the emulator, whose
    flows' ``cc`` name congestion controls of the kernel (see
    ``docs/emulation.md``). ``folder`` is where the relative paths of its
    trace files are read from (the scenario file's folder); ``normalized``
    holds them resolved, and ``traces`` maps each to the SHA-256 of its
    contents when it was validated (run keys hash the contents, not the
    path: an edited trace is another run).
    """

    data: dict[str, Any]
    normalized: dict[str, Any]
    source: Path | None = None
    _json: str = field(default="", repr=False, compare=False)
    emulation: bool = False
    folder: Path | None = field(default=None, compare=False)
    traces: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_type("Scenario(data)", self.data, dict, "a dict (use wavelab.from_dict)")
        check_type("Scenario(normalized)", self.normalized, dict, "a dict")
        if self.source is not None:
            check_type("Scenario(source)", self.source, Path, "a pathlib.Path or None")

    @property
    def name(self) -> str:
        """The scenario's name, or its file's stem."""
        name = str(self.normalized.get("name") or "")
        if name:
            return name
        return self.source.stem if self.source else "scenario"

    @property
    def duration(self) -> float:
        """Simulated seconds."""
        return _seconds(str(self.normalized["duration"]))

    def to_json(self) -> str:
        """The normalised scenario as JSON (what the simulator receives)."""
        return self._json or json.dumps(self.normalized)

    def with_changes(self, changes: Mapping[str, Any]) -> Scenario:
        """A copy with fields replaced, addressed by path (``"flows[0].cc"``,
        ``"links[1].rate"``, ``"seed"``); the result is validated again."""
        check_type("with_changes(changes)", changes, Mapping, 'a dict such as {"seed": 2}')
        for path in changes:
            check_type("with_changes(changes)", path, str, 'field paths such as "flows[0].cc"')
        data = copy.deepcopy(self.data)
        for path, value in changes.items():
            set_path(data, path, value)
        return from_dict(data, source=self.source, emulation=self.emulation, folder=self.folder)


TRACE_FIELDS = ("trace", "rate_trace", "delay_trace", "loss_trace")
"""A link direction's fields that name trace files."""


def trace_paths(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The trace files a scenario names, as (field path, file), in order."""
    found: list[tuple[str, str]] = []
    links = data.get("links")
    if not isinstance(links, list):
        return found
    for i, link in enumerate(links):
        for side in ("forward", "reverse"):
            d = link.get(side) if isinstance(link, Mapping) else None
            if not isinstance(d, Mapping):
                continue
            for f in TRACE_FIELDS:
                v = d.get(f)
                if isinstance(v, str):
                    found.append((f"links[{i}].{side}.{f}", v))
    return found


def _resolve_traces(data: dict[str, Any], folder: Path) -> dict[str, str]:
    """Makes the relative trace paths of ``data`` (a copy) relative to
    ``folder``, made absolute; returns what each resolved path was written as."""
    written: dict[str, str] = {}
    for path, v in trace_paths(data):
        if v and not Path(v).is_absolute():
            resolved = str((folder / v).absolute())
            set_path(data, path, resolved)
            written[resolved] = v
    return written


def _seconds(text: str) -> float:
    units = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}
    for unit in sorted(units, key=len, reverse=True):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * units[unit]
    raise ValueError(f"{text!r} is not a duration")


def _scan(value: Any) -> tuple[str, str] | None:
    """The first problem of a scenario's data that JSON or the schema cannot
    report well, as (field path, message): nesting deeper than
    :data:`MAX_DEPTH`, or a NaN or infinity (TOML allows ``nan`` and ``inf``;
    JSON, which carries the scenario to the Rust schema, does not, and its
    parser would only say "expected value"). Iterative, so any depth is safe."""
    stack: list[tuple[str, Any, int]] = [("", value, 0)]
    while stack:
        path, v, depth = stack.pop()
        if isinstance(v, float) and not math.isfinite(v):
            return path, "not a finite number"
        if isinstance(v, Mapping):
            items: list[tuple[str, Any]] = [
                (f"{path}.{k}" if path else str(k), x) for k, x in v.items()
            ]
        elif isinstance(v, list | tuple):
            items = [(f"{path}[{i}]", x) for i, x in enumerate(v)]
        else:
            continue
        if depth >= MAX_DEPTH:
            shown = path if len(path) <= 60 else path[:57] + "..."
            return shown, f"tables and arrays nest more than {MAX_DEPTH} deep"
        stack.extend((p, x, depth + 1) for p, x in reversed(items))
    return None


def toml_depth(text: str) -> int:
    """The deepest nesting of ``[`` and ``{`` outside strings and comments in
    TOML text (a table header counts its brackets too)."""
    depth = deepest = 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            triple = text.startswith(c * 3, i)
            quote = c * 3 if triple else c
            j = i + len(quote)
            while j < n:
                if c == '"' and text[j] == "\\":
                    j += 2
                    continue
                if text.startswith(quote, j):
                    break
                if not triple and text[j] == "\n":
                    break
                j += 1
            i = j + len(quote)
            continue
        elif c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth = max(depth - 1, 0)
        i += 1
    return deepest


def parse_toml(text: Any, where: str, error: type[WavelabError]) -> dict[str, Any]:
    """Parses TOML text (``str``, or UTF-8 ``bytes``) as a scenario or sweep
    file, raising ``error`` (its message starting with ``where``) for text
    that is not TOML, not UTF-8, or nests deeper than :data:`MAX_DEPTH`."""
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise error(f"{where}not UTF-8 text: {e}") from None
    check_type("the TOML text", text, str, "a str (or UTF-8 bytes)")
    if toml_depth(text) > MAX_DEPTH:
        raise error(f"{where}not valid here: tables and arrays nest more than {MAX_DEPTH} deep")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise error(f"{where}not valid TOML: {e}") from None


def from_dict(
    data: Mapping[str, Any],
    source: str | Path | None = None,
    emulation: bool = False,
    check_kernel: bool = True,
    folder: str | Path | None = None,
) -> Scenario:
    """Validates a scenario given as a dict (as TOML would give it): for the
    simulator, or with ``emulation`` for the emulator (against the running
    kernel's congestion controls, unless ``check_kernel`` is false).

    Relative paths of trace files are read from ``folder``: by default the
    folder of ``source``, or the working directory without one."""
    check_type("from_dict(data)", data, Mapping, "a dict (a scenario as TOML gives it)")
    if source is not None:
        source = check_path("from_dict(source)", source)
    if folder is not None:
        folder = check_path("from_dict(folder)", folder)
    elif source is not None:
        folder = source.parent
    where = f"{source}: " if source else ""
    bad = _scan(data)
    if bad is not None:
        raise ScenarioFileError(f"{where}{bad[0] or 'the scenario'}: {bad[1]}")
    resolved = dict(data)
    written: dict[str, str] = {}
    if folder is not None and trace_paths(data):
        resolved = copy.deepcopy(resolved)
        written = _resolve_traces(resolved, folder)
    try:
        text = json.dumps(resolved, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ScenarioFileError(f"{where}cannot be represented: {e}") from None
    try:
        if emulation:
            normalized_json = _native.normalize_emulation(text, check_kernel)
        else:
            normalized_json = _native.normalize_scenario(text)
    except _native.ScenarioError as e:
        message = str(e)
        for path, as_written in written.items():
            if f": {path}: cannot be read" in message:
                where_from = Path(folder).absolute() if folder is not None else folder
                message += f" ({as_written!r} is read from the scenario's folder, {where_from})"
                break
        raise ScenarioFileError(f"{where}{message}") from None
    except OSError as e:
        raise ScenarioFileError(f"{where}{e}") from None
    normalized = json.loads(normalized_json)
    try:
        traces = {f: file_sha256(f) for _, f in trace_paths(normalized)}
    except OSError as e:
        raise ScenarioFileError(f"{where}a trace file cannot be read: {e}") from None
    return Scenario(
        dict(data),
        normalized,
        source,
        normalized_json,
        emulation,
        Path(folder) if folder is not None else None,
        traces,
    )


def stored_scenario(normalized: Mapping[str, Any], emulation: bool = False) -> Scenario:
    """The scenario of stored results (a run's ``run.json``), validated as
    :func:`from_dict` does, except that a flow's algorithm this process does
    not know is accepted as written: a congestion control registered by the
    process that made the run (a Python class, ``docs/custom-cc.md``) need
    not be registered to read its results. The rest of the scenario is
    validated with a built-in algorithm in that flow's place."""
    try:
        return from_dict(normalized, emulation=emulation, check_kernel=False)
    except ScenarioFileError:
        flows = normalized.get("flows")
        known = set(_native.algorithms())

        def name(f: Any) -> Any:
            cc = f.get("cc") if isinstance(f, dict) else None
            return cc.get("algorithm") if isinstance(cc, dict) else cc

        if emulation or not isinstance(flows, list):
            raise
        unknown = [
            i for i, f in enumerate(flows) if isinstance(name(f), str) and name(f) not in known
        ]
        if not unknown:
            raise
        stand_in = json.loads(json.dumps(normalized))
        for i in unknown:
            stand_in["flows"][i]["cc"] = "newreno"
        from_dict(stand_in)
        data = json.loads(json.dumps(normalized))
        return Scenario(data, json.loads(json.dumps(normalized)), None, json.dumps(normalized))


def from_toml(
    text: str | bytes,
    source: str | Path | None = None,
    emulation: bool = False,
    changes: Mapping[str, Any] | None = None,
    folder: str | Path | None = None,
) -> Scenario:
    """Validates a scenario given as TOML text (``str``, or UTF-8 ``bytes``;
    for the emulator with ``emulation``), after replacing the fields in
    ``changes`` (as :meth:`Scenario.with_changes`); relative trace paths are
    read from ``folder`` (as :func:`from_dict`)."""
    if source is not None:
        source = check_path("from_toml(source)", source)
    where = f"{source}: " if source else ""
    data = parse_toml(text, where, ScenarioFileError)
    if "sweep" in data:
        raise ScenarioFileError(
            f"{where}has a [sweep] table: it is a sweep file; run it with "
            f"`wavelab sweep {source or 'FILE'} --out DIR`"
        )
    for path, value in (changes or {}).items():
        set_path(data, path, value)
    return from_dict(data, source, emulation, folder=folder)


def load_scenario(
    path: str | Path, emulation: bool = False, changes: Mapping[str, Any] | None = None
) -> Scenario:
    """Reads and validates a scenario file.

    Raises :class:`ScenarioFileError` with a message that names the file, the
    field path and the bad value.
    """
    p = check_path("load_scenario(path)", path)
    return from_toml(read_text_file(p, ScenarioFileError), p, emulation, changes)


def builtin_names() -> list[str]:
    """Names of the scenarios shipped with the package (``scenarios/`` in the
    repository)."""
    folder = resources.files("wavelab").joinpath("scenarios")
    return sorted(p.name[: -len(".toml")] for p in folder.iterdir() if p.name.endswith(".toml"))


def builtin_toml(name: str) -> str:
    """The TOML text of a shipped scenario."""
    if name not in builtin_names():
        raise ScenarioFileError(
            f"{name!r} is neither a file nor a built-in scenario; built-in: "
            + ", ".join(builtin_names())
        )
    f = resources.files("wavelab").joinpath("scenarios", f"{name}.toml")
    return f.read_text(encoding="utf-8")


def builtin_scenario(
    name: str, emulation: bool = False, changes: Mapping[str, Any] | None = None
) -> Scenario:
    """A shipped scenario by name (e.g. ``"wave-page-single"``); its trace
    paths are read from the package's ``scenarios/`` folder."""
    folder = Path(str(resources.files("wavelab").joinpath("scenarios")))
    return from_toml(builtin_toml(name), Path(f"{name}.toml"), emulation, changes, folder)


def load_scenario_or_builtin(
    ref: str | Path, emulation: bool = False, changes: Mapping[str, Any] | None = None
) -> Scenario:
    """A scenario file, or a built-in scenario's name if no such file exists
    (a directory of that name, such as a results directory called ``demo``,
    does not hide the built-in scenario)."""
    p = Path(ref)
    if p.is_file() or p.suffix == ".toml":
        return load_scenario(p, emulation, changes)
    if p.exists() and str(ref) not in builtin_names():
        return load_scenario(p, emulation, changes)  # reports what it is
    return builtin_scenario(str(ref), emulation, changes)


def demo_scenario() -> Scenario:
    """The built-in demo: two NewReno flows, a bottleneck and an outage."""
    return builtin_scenario("demo")


def demo_toml() -> str:
    """The demo scenario's TOML text."""
    return builtin_toml("demo")
