"""Sweep files: a scenario plus a ``[sweep]`` table of parameters to vary.

::

    name = "handover-grid"
    duration = "60s"
    [[links]] ...
    [[flows]] ...

    [sweep]
    "flows[0].cc" = ["newreno", "cubic", "wave"]                  # a list of values
    "links[1].handovers[0].at" = { from = "20s", to = "40s", step = "5s" }
    "links[1].rate,links[1].delay" = [["2Mbit/s", "30ms"], ["8Mbit/s", "240ms"]]
    seeds = 3                                                     # seed = 1, 2, 3

    [sweep.names]                                                 # optional short names
    cc = "flows[0].cc"

Every key is a field path as :meth:`Scenario.with_changes` takes it; a key of
several comma-separated paths varies them together (one value list per
entry). The points are the Cartesian product of the keys, in file order, the
last key varying fastest. ``[sweep.names]`` gives parameters short names
for the loaded results' columns (:mod:`wavelab.sweep.names`). The ``[sweep]``
table is removed before the scenario goes to the Rust schema; every point
is validated before anything runs, and errors name the file, the key and
the value.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from wavelab.errors import (
    ScenarioFileError,
    WavelabError,
    check_path,
    check_type,
    read_text_file,
)
from wavelab.scenario.field_paths import PathError, parse_path, set_path
from wavelab.scenario.loading import Scenario, from_dict
from wavelab.scenario.toml_text import MAX_TOML_BYTES, parse_toml
from wavelab.sweep.names import NAMES, parse_names
from wavelab.sweep.view import sweep_html, sweep_text

MAX_POINTS = 1_000_000
"""The largest sweep accepted (a bigger one is almost always a typo in a range)."""

_QUANTITY = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z/%]*)\s*$")


class SweepError(WavelabError):
    """A sweep file is invalid; the message names the file, the key and the value."""


@dataclass(frozen=True)
class Axis:
    """One key of the ``[sweep]`` table: one or more paths varied together."""

    key: str
    """The key as written (``"seeds"`` for the shorthand)."""
    paths: tuple[str, ...]
    values: tuple[tuple[Any, ...], ...]
    """One tuple per step, one value per path."""


@dataclass(frozen=True)
class Point:
    """One run of a sweep."""

    index: int
    params: dict[str, Any]
    """The values of this point, by path."""
    scenario: Scenario


def _toml(value: Any) -> str:
    """A value as it would be written in the file (for messages)."""
    return json.dumps(value, default=str)


def _quantity(value: Any) -> tuple[float, str] | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value), ""
    if isinstance(value, str):
        m = _QUANTITY.match(value)
        if m:
            return float(m.group(1)), m.group(2)
    return None


def _format(x: float, unit: str, integers: bool) -> Any:
    x = round(x, 12)
    if not unit:
        return round(x) if integers else x
    text = str(round(x)) if float(x).is_integer() else format(x, ".12g")
    return f"{text}{unit}"


def expand_range(where: str, spec: Mapping[str, Any]) -> list[Any]:
    """The values of ``{ from = A, to = B, step = S }`` (inclusive of B when a
    step lands on it) or ``{ from = A, to = B, count = N }`` (N evenly spaced
    values from A to B). A, B and S are numbers or quantities of one unit
    (``"20s"``, ``"2Mbit/s"``); integer bounds and steps give integers."""
    allowed = {"from", "to", "step", "count"}
    unknown = sorted(set(spec) - allowed)
    if unknown or "from" not in spec or "to" not in spec:
        what = f"unknown field {unknown[0]!r} in a range; " if unknown else ""
        raise SweepError(
            f"{where}: {what}write a list of values, or a range "
            '{ from = "20s", to = "40s", step = "5s" } or { from = 0.0, to = 0.1, count = 5 }'
        )
    if ("step" in spec) == ("count" in spec):
        raise SweepError(f"{where}: a range needs either step or count (not both)")
    fields = {k: spec[k] for k in ("from", "to", "step") if k in spec}
    parsed = {k: _quantity(v) for k, v in fields.items()}
    for k, q in parsed.items():
        if q is None:
            raise SweepError(
                f'{where}: {k} = {_toml(fields[k])} is not a number or a quantity like "20s"'
            )
    units = {q[1] for q in parsed.values() if q is not None}
    if len(units) > 1:
        raise SweepError(
            f"{where}: from, to and step must have the same unit, not "
            + ", ".join(f"{k} = {_toml(v)}" for k, v in fields.items())
        )
    for k, q in parsed.items():
        if q is not None and not math.isfinite(q[0]):
            raise SweepError(f"{where}: {k} = {_toml(fields[k])} is not a finite number")
    unit = units.pop()
    start = parsed["from"][0]  # type: ignore[index]
    stop = parsed["to"][0]  # type: ignore[index]
    integers = not unit and all(isinstance(v, int) for v in fields.values())
    if "count" in spec:
        count = spec["count"]
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise SweepError(f"{where}: count = {_toml(count)} must be a whole number above 0")
        if count > MAX_POINTS:
            raise SweepError(f"{where}: count = {count:,} values (at most {MAX_POINTS:,})")
        if count == 1:
            return [_format(start, unit, integers)]
        values = [start + (stop - start) * i / (count - 1) for i in range(count)]
        integers = integers and all(float(v).is_integer() for v in values)
        return [_format(v, unit, integers) for v in values]
    step = parsed["step"][0]  # type: ignore[index]
    if step == 0 or (stop - start) * step < 0:
        raise SweepError(
            f"{where}: step = {_toml(spec['step'])} never gets from "
            f"{_toml(spec['from'])} to {_toml(spec['to'])}"
        )
    steps = (stop - start) / step
    if not math.isfinite(steps) or steps + 1 > MAX_POINTS:
        raise SweepError(f"{where}: the range has {steps + 1:,.0f} values (at most {MAX_POINTS:,})")
    n = math.floor(steps + 1e-9) + 1
    if n > MAX_POINTS:
        raise SweepError(f"{where}: the range has {n:,} values (at most {MAX_POINTS:,})")
    return [_format(start + i * step, unit, integers) for i in range(n)]


def _axis(where: str, key: str, spec: Any) -> Axis:
    if key == "seeds":
        if isinstance(spec, int) and not isinstance(spec, bool):
            if spec < 1:
                raise SweepError(f"{where}: seeds = {spec} must be at least 1")
            if spec > MAX_POINTS:
                raise SweepError(f"{where}: seeds = {spec:,} (at most {MAX_POINTS:,} points)")
            return Axis(key, ("seed",), tuple((s,) for s in range(1, spec + 1)))
        key_paths: tuple[str, ...] = ("seed",)
    else:
        key_paths = tuple(p.strip() for p in key.split(","))
    for p in key_paths:
        try:
            parse_path(p)
        except PathError as e:
            raise SweepError(f"{where}: {e}") from None
    if isinstance(spec, dict):
        if len(key_paths) > 1:
            raise SweepError(f"{where}: paths varied together take a list of value lists")
        values: list[Any] = expand_range(where, spec)
    elif isinstance(spec, list):
        values = spec
    else:
        raise SweepError(
            f"{where}: a single value {_toml(spec)} is not a grid; write a list, "
            f"e.g. [{_toml(spec)}], or set the field in the scenario"
        )
    if not values:
        raise SweepError(f"{where}: the grid is empty; give at least one value")
    if len(key_paths) == 1:
        return Axis(key, key_paths, tuple((v,) for v in values))
    rows = []
    for i, v in enumerate(values):
        if not isinstance(v, list) or len(v) != len(key_paths):
            raise SweepError(
                f"{where}[{i}]: {_toml(v)} is not a list of {len(key_paths)} values "
                f"(one per path: {', '.join(key_paths)})"
            )
        rows.append(tuple(v))
    return Axis(key, key_paths, tuple(rows))


@dataclass(frozen=True)
class Sweep:
    """A parsed sweep: the base scenario and the axes."""

    base: Scenario
    axes: tuple[Axis, ...]
    source: Path | None
    text: str
    """The file's text (kept beside the results)."""
    names: Mapping[str, str] = field(default_factory=dict)
    """``[sweep.names]``: short name -> path of a parameter."""

    @property
    def name(self) -> str:
        """The base scenario's name."""
        return self.base.name

    def __repr__(self) -> str:
        return sweep_text(self)

    def _repr_html_(self) -> str:
        """Its axes under their short names (a notebook's view)."""
        return sweep_html(self)

    @property
    def size(self) -> int:
        """Number of points."""
        return math.prod(len(a.values) for a in self.axes)

    @property
    def param_names(self) -> list[str]:
        """Every varied path, in column order."""
        return [p for a in self.axes for p in a.paths]

    def params(self, index: int) -> dict[str, Any]:
        """The values of point ``index`` (the last axis varies fastest)."""
        out: dict[str, Any] = {}
        rest = index
        picks = []
        for a in reversed(self.axes):
            rest, k = divmod(rest, len(a.values))
            picks.append((a, k))
        for a, k in reversed(picks):
            out.update(zip(a.paths, a.values[k], strict=True))
        return out

    def point(self, index: int) -> Point:
        """Point ``index`` with its validated scenario."""
        params = self.params(index)
        where = f"{self.source}: " if self.source else ""
        data = json.loads(json.dumps(self.base.data))
        for path, value in params.items():
            set_path(data, path, value)
        try:
            sc = from_dict(data, folder=self.base.folder)
        except ScenarioFileError as e:
            described = ", ".join(f"{p} = {_toml(v)}" for p, v in params.items())
            raise SweepError(f"{where}point {index} ({described}): {e}") from None
        return Point(index, params, sc)

    def points(self) -> Iterator[Point]:
        """Every point, validated, in order."""
        for i in range(self.size):
            yield self.point(i)


def _check_axis(base: dict[str, Any], where: str, axis: Axis, folder: Path | None) -> None:
    """Applies each value of an axis alone to the base scenario, so a bad path
    or value is reported with its key before the points are built."""
    for k, row in enumerate(axis.values):
        data = json.loads(json.dumps(base))
        for path, value in zip(axis.paths, row, strict=True):
            try:
                set_path(data, path, value)
            except PathError as e:
                raise SweepError(
                    f'{where}sweep."{axis.key}": {e}; the scenario must have the '
                    "entry the sweep changes"
                ) from None
        try:
            from_dict(data, folder=folder)
        except ScenarioFileError as e:
            shown = _toml(row[0] if len(row) == 1 else list(row))
            detail = str(e)
            if "unknown field" in detail:
                raise SweepError(
                    f'{where}sweep."{axis.key}": unknown parameter: {detail}'
                ) from None
            raise SweepError(f'{where}sweep."{axis.key}" value {k} ({shown}): {detail}') from None


def from_sweep_dict(
    data: Mapping[str, Any],
    source: Path | None = None,
    text: str = "",
    folder: Path | None = None,
) -> Sweep:
    """A sweep from a parsed file (a scenario with a ``sweep`` table);
    relative trace paths are read from ``folder`` (by default the folder of
    ``source``)."""
    check_type("from_sweep_dict(data)", data, Mapping, "a dict (a sweep file as TOML gives it)")
    where = f"{source}: " if source else ""
    table = data.get("sweep")
    if table is None:
        raise SweepError(
            f"{where}has no [sweep] table; add one, e.g. [sweep] seeds = 5 or "
            '"flows[0].cc" = ["reno", "cubic"]'
        )
    if not isinstance(table, dict):
        raise SweepError(f"{where}sweep must be a table of parameters, not {_toml(table)}")
    names_spec = table.get(NAMES, {})
    table = {k: v for k, v in table.items() if k != NAMES}
    if not table:
        raise SweepError(f"{where}the [sweep] table is empty: nothing to vary")
    scenario_data = {k: v for k, v in data.items() if k != "sweep"}
    try:
        base = from_dict(scenario_data, source, folder=folder)
    except ScenarioFileError as e:
        raise SweepError(str(e)) from None
    axes_built: list[Axis] = []
    size = 1
    for k, v in table.items():
        axis = _axis(f'{where}sweep."{k}"', k, v)
        axes_built.append(axis)
        size *= len(axis.values)
        if size > MAX_POINTS:
            raise SweepError(
                f"{where}the sweep has more than {MAX_POINTS:,} points (at most "
                f"{MAX_POINTS:,}); "
                + " x ".join(f"{len(a.values):,} ({a.key})" for a in axes_built)
            )
    axes = tuple(axes_built)
    seen: dict[str, str] = {}
    for a in axes:
        for p in a.paths:
            if p in seen:
                raise SweepError(f'{where}sweep: {p} is varied twice ("{seen[p]}" and "{a.key}")')
            seen[p] = a.key
    try:
        names = parse_names(f"{where}sweep.names", names_spec, [p for a in axes for p in a.paths])
    except WavelabError as e:
        raise SweepError(str(e)) from None
    sweep = Sweep(base, axes, source, text, names)
    if sweep.size > MAX_POINTS:
        raise SweepError(
            f"{where}the sweep has {sweep.size:,} points (at most {MAX_POINTS:,}); "
            + " x ".join(f"{len(a.values)} ({a.key})" for a in axes)
        )
    for a in axes:
        _check_axis(scenario_data, where, a, base.folder)
    return sweep


def builtin_sweep_names() -> list[str]:
    """Sweeps shipped with the package (``sweeps/`` in the repository)."""
    folder = resources.files("wavelab").joinpath("sweeps")
    return sorted(p.name[: -len(".toml")] for p in folder.iterdir() if p.name.endswith(".toml"))


def load_sweep(ref: str | Path) -> Sweep:
    """Reads a sweep file, or a shipped sweep by name."""
    p = check_path("load_sweep(ref)", ref)
    if not p.exists() and p.suffix != ".toml":
        if str(ref) not in builtin_sweep_names():
            raise SweepError(
                f"{ref!r} is neither a file nor a built-in sweep; built-in: "
                + ", ".join(builtin_sweep_names())
            )
        text = resources.files("wavelab").joinpath("sweeps", f"{ref}.toml").read_text("utf-8")
        p = Path(f"{ref}.toml")
    else:
        text = read_text_file(p, SweepError, MAX_TOML_BYTES, "sweep file")
    return from_sweep_dict(parse_toml(text, f"{p}: ", SweepError), p, text)
