"""Scenarios: loading TOML files, validating them through the Rust schema.

The schema is defined once, in Rust (``crates/sim/src/scenario.rs``); this
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
from wavelab.errors import ScenarioFileError, read_text_file


@dataclass(frozen=True)
class Scenario:
    """A validated scenario.

    ``data`` is the scenario as written; ``normalized`` has every default filled
    in (what the simulator runs). ``source`` is the file it came from, if any.
    """

    data: dict[str, Any]
    normalized: dict[str, Any]
    source: Path | None = None
    _json: str = field(default="", repr=False, compare=False)

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
        data = copy.deepcopy(self.data)
        for path, value in changes.items():
            _set_path(data, path, value)
        return from_dict(data, source=self.source)


def _seconds(text: str) -> float:
    units = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}
    for unit in sorted(units, key=len, reverse=True):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * units[unit]
    raise ValueError(f"{text!r} is not a duration")


def _set_path(data: dict[str, Any], path: str, value: Any) -> None:
    node: Any = data
    parts = path.replace("]", "").replace("[", ".").split(".")
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        key: int | str = int(part) if part.isdigit() else part
        if last:
            node[key] = value
        else:
            if isinstance(key, str) and key not in node:
                node[key] = {}
            node = node[key]


def _non_finite(value: Any, path: str = "") -> str | None:
    """The path (``links[1].rate``) of the first NaN or infinity in ``value``.

    TOML allows ``nan`` and ``inf``; JSON, which carries the scenario to the
    Rust schema, does not, and its parser would only say "expected value".
    """
    if isinstance(value, float) and not math.isfinite(value):
        return path
    if isinstance(value, Mapping):
        items: Any = ((f"{path}.{k}" if path else str(k), v) for k, v in value.items())
    elif isinstance(value, list | tuple):
        items = ((f"{path}[{i}]", v) for i, v in enumerate(value))
    else:
        return None
    for sub, v in items:
        found = _non_finite(v, sub)
        if found is not None:
            return found
    return None


def from_dict(data: Mapping[str, Any], source: Path | None = None) -> Scenario:
    """Validates a scenario given as a dict (as TOML would give it)."""
    where = f"{source}: " if source else ""
    bad = _non_finite(data)
    if bad is not None:
        raise ScenarioFileError(f"{where}{bad}: not a finite number")
    try:
        text = json.dumps(data, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise ScenarioFileError(f"{where}cannot be represented: {e}") from None
    try:
        normalized_json = _native.normalize_scenario(text)
    except _native.ScenarioError as e:
        raise ScenarioFileError(f"{where}{e}") from None
    normalized = json.loads(normalized_json)
    return Scenario(dict(data), normalized, source, normalized_json)


def from_toml(text: str, source: Path | None = None) -> Scenario:
    """Validates a scenario given as TOML text."""
    where = f"{source}: " if source else ""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioFileError(f"{where}not valid TOML: {e}") from None
    if "sweep" in data:
        raise ScenarioFileError(
            f"{where}has a [sweep] table: it is a sweep file; run it with "
            f"`wavelab sweep {source or 'FILE'} --out DIR`"
        )
    return from_dict(data, source)


def load_scenario(path: str | Path) -> Scenario:
    """Reads and validates a scenario file.

    Raises :class:`ScenarioFileError` with a message that names the file, the
    field path and the bad value.
    """
    p = Path(path)
    return from_toml(read_text_file(p, ScenarioFileError), p)


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


def builtin_scenario(name: str) -> Scenario:
    """A shipped scenario by name (e.g. ``"wave-page-single"``)."""
    return from_toml(builtin_toml(name), Path(f"{name}.toml"))


def load_scenario_or_builtin(ref: str | Path) -> Scenario:
    """A scenario file, or a built-in scenario's name if no such file exists
    (a directory of that name, such as a results directory called ``demo``,
    does not hide the built-in scenario)."""
    p = Path(ref)
    if p.is_file() or p.suffix == ".toml":
        return load_scenario(p)
    if p.exists() and str(ref) not in builtin_names():
        return load_scenario(p)  # reports what it is
    return builtin_scenario(str(ref))


def demo_scenario() -> Scenario:
    """The built-in demo: two NewReno flows, a bottleneck and an outage."""
    return builtin_scenario("demo")


def demo_toml() -> str:
    """The demo scenario's TOML text."""
    return builtin_toml("demo")
