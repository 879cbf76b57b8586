"""The scenarios shipped with the package (``scenarios/`` in the
repository, a link to ``python/wavelab/scenarios``), by name."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from wavelab.errors import ScenarioFileError, check_path
from wavelab.scenario.loading import Scenario, from_toml, load_scenario


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
    does not hide the built-in scenario), as `wavelab run` reads its
    argument; ``wavelab.load_scenario``. Raises :class:`ScenarioFileError`
    naming the file, the field path and the bad value, or the built-in
    names when ``ref`` is neither."""
    p = check_path("load_scenario(path)", ref)
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
