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
    """Names of the congestion-control algorithms: built-in, then registered."""

def register_python_cc(name: str, cls: type, metrics: list[str], replace: bool = False) -> None:
    """Register a Python class as the congestion control ``name``."""

class Start:
    """A connection's start, the first argument of a Python algorithm's constructor."""

    mss: int
    initial_cwnd: int
    initial_ssthresh: int | None

class Ack:
    """An ACK that carried news (times in s, sizes in bytes)."""

    mss: int
    bytes_acked: int
    bytes_delivered: int
    prior_in_flight: int
    in_flight: int
    bytes_lost: int
    rtt: float | None
    srtt: float | None
    min_rtt: float | None
    state: str
    dupack: bool
    cwnd_limited: bool
    window_reduced: bool
    snd_una: int
    snd_nxt: int
    may_grow_window: bool

class Congestion:
    """A congestion event: kind is "fast_retransmit", "rto" or "ecn"."""

    kind: str
    repeated: bool
    flight_size: int
    in_flight: int
    mss: int

class Exit:
    """The end of a fast recovery."""

    flight_size: int
    mss: int
    sack: bool

class PathChange:
    """A change of the path: the new rate (bit/s) and one-way delay (s) where known."""

    rate: float | None
    delay: float | None

def rate_trace(path: str) -> list[tuple[float, float]]:
    """A CSV rate trace's points: (seconds, bit/s), each a step from its time."""

def leo_plan(
    json: str, link: int
) -> tuple[list[tuple[float, float, float, float]], list[tuple[float, float]]] | None:
    """The LEO model's path of link ``link``: intervals as (start s, one-way
    delay s, downlink bit/s, uplink bit/s) and outage windows (start s, end
    s); None for a link without ``leo``."""

def mahimahi_trace(path: str) -> tuple[bytes, int]:
    """A Mahimahi trace as the simulator reads it: its opportunities' offsets
    within a period (milliseconds, little-endian uint64 bytes) and the
    period (milliseconds); ValueError for a file the simulator refuses."""

def quantity(text: str) -> tuple[float, str] | None:
    """A value with a unit in its base unit: (seconds, "s"), (bit/s,
    "bit/s"), (bytes, "B") or (packets, "pkt"); None for anything else."""

def column_unit(table: str, column: str) -> str | None:
    """The unit of a column of a run's table (``"s"``, ``"B"``,
    ``"bit/s"``), or None: what the Parquet files carry in field metadata."""

def live_simulations() -> int:
    """How many simulations have their state allocated in this process
    (made and not yet freed, whichever thread dropped them)."""

Column = tuple[str, str, Any, list[str] | None, bytes | None]

class Simulation:
    """A simulation run driven in steps."""

    def __init__(self, json: str, forkable: bool = False) -> None: ...
    def run_before(self, nanos: int) -> None: ...
    def fork(self) -> Simulation: ...
    def set_handoff_at(self, index: int, nanos: int) -> None: ...
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

def normalize_emulation(json: str, check_kernel: bool = True) -> str:
    """Validate a scenario for the emulator (the kernel's congestion controls
    unless ``check_kernel`` is false); return it normalised."""

def emulation_unavailable() -> str | None:
    """``None`` if this process can emulate, else what is missing."""

def kernel_congestion_controls() -> list[str]:
    """The kernel's tcp_available_congestion_control."""

def emulation_cleanup(all: bool = False) -> list[tuple[int, str, int]]:
    """Kill processes earlier emulations left; (pid, command line, owner) of each."""

def terminate_with_parent() -> None:
    """Receive SIGTERM when the parent process dies."""

class Emulation:
    """A scenario on real packets between network namespaces."""

    def __init__(
        self,
        json: str,
        realtime: bool = True,
        spin_us: float = 50.0,
        lateness_bound_us: float = 500.0,
        logs: str | None = None,
    ) -> None: ...
    def add_capture(self, target: str, path: str) -> None: ...
    def start(self) -> None: ...
    @property
    def now(self) -> float: ...
    @property
    def end(self) -> float: ...
    def wait(self, timeout: float) -> bool: ...
    def stop(self) -> None: ...
    def finish(
        self,
    ) -> tuple[dict[str, list[Column]], dict[str, float], dict[str, Any]]: ...
    def finish_captures(self) -> list[dict[str, Any]]: ...
