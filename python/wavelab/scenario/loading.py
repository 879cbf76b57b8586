"""Scenarios loaded and validated: the :class:`Scenario` type and
:func:`from_dict`, :func:`from_toml` and :func:`load_scenario`.

The schema is defined once, in Rust (``crates/model/src/scenario/``); this
module only reads TOML, hands the data over as JSON and turns the Rust error
into a message that starts with the file name.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wavelab import _native
from wavelab._util.files import file_sha256
from wavelab.errors import (
    ScenarioFileError,
    check_path,
    check_type,
    read_text_file,
)
from wavelab.scenario.field_paths import set_path
from wavelab.scenario.toml_text import MAX_TOML_BYTES, first_problem, parse_toml
from wavelab.scenario.traces import resolve_traces, trace_paths
from wavelab.scenario.view import scenario_html, scenario_text


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

    def __repr__(self) -> str:
        return scenario_text(self)

    def _repr_html_(self) -> str:
        """Its links and flows as two small tables (a notebook's view)."""
        return scenario_html(self)

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


def _seconds(text: str) -> float:
    units = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}
    for unit in sorted(units, key=len, reverse=True):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * units[unit]
    raise ValueError(f"{text!r} is not a duration")


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
    bad = first_problem(data)
    if bad is not None:
        raise ScenarioFileError(f"{where}{bad[0] or 'the scenario'}: {bad[1]}")
    resolved = dict(data)
    written: dict[str, str] = {}
    if folder is not None and trace_paths(data):
        resolved = copy.deepcopy(resolved)
        written = resolve_traces(resolved, folder)
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
    text = read_text_file(p, ScenarioFileError, MAX_TOML_BYTES, "scenario file")
    return from_toml(text, p, emulation, changes)
