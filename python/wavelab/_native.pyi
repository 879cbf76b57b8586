"""Type stubs of the Rust extension module (crates/py)."""

from typing import Any

__version__: str
build_id: str
"""A hash of the simulator's Rust sources and the compiler version."""

class ScenarioError(ValueError):
    """A scenario is invalid; the message names the field path and the bad value."""

def normalize_scenario(json: str) -> str:
    """Validate a scenario given as JSON; return it with every default filled in."""

def algorithms() -> list[str]:
    """Names of the congestion-control algorithms."""

Column = tuple[str, str, Any, list[str] | None]

class Simulation:
    """A simulation run driven in steps."""

    def __init__(self, json: str) -> None: ...
    @property
    def now(self) -> float: ...
    @property
    def end(self) -> float: ...
    @property
    def done(self) -> bool: ...
    @property
    def stopped(self) -> str | None: ...
    def _set_log_limit(self, rows: int) -> None: ...
    def run_until(self, t: float) -> None: ...
    def run_stats(self) -> dict[str, float]: ...
    def add_capture(self, target: str, path: str) -> None: ...
    def finish_captures(self) -> list[dict[str, Any]]: ...
    def results(self) -> dict[str, list[Column]]: ...
