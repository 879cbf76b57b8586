"""Your own congestion control in Python: a class whose methods the sender
calls on every ACK, congestion event and timer (docs/custom-cc.md).

Register it under a name, then name it in a scenario like any built-in
algorithm (``cc = "my-algo"``, or a table whose other entries are passed to
the constructor as keyword arguments)::

    @wavelab.congestion_control("my-algo")
    class MyAlgo:
        metrics = ("acked",)          # attributes recorded as cc_acked

        def __init__(self, start, gain=1.0):
            self.cwnd = start.initial_cwnd * start.mss   # bytes
            self.ssthresh = None                         # None: unlimited
            ...
        def on_ack(self, now, ack): ...           # required
        def on_congestion(self, now, event): ...  # required

Optional methods: ``set_mss(mss)``, ``on_established(now, rtt)``,
``on_timer(now)`` (with a ``timer`` attribute: seconds or None),
``on_recovery_exit(now, exit)``, ``on_path_change(now, path)``; optional
attribute ``pacing_rate`` (bit/s or None). The sender reads ``cwnd``,
``ssthresh`` (and ``pacing_rate``, ``timer``) after every call.

An exception in a method, or a value that is not a number of bytes, stops
the run at the end of its current step with an error naming the class, the
method and the simulated time (the traceback follows); what was simulated up
to there is kept (``Results.complete`` is False, ``Results.run["stopped"]``
says why; ``wavelab run`` writes the partial results and exits with 2).

Registrations live in the process: a sweep's worker processes inherit them
when they are forked (Linux), and ``wavelab run`` / ``wavelab sweep`` load
them from files with ``--cc-file``.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from wavelab import _native
from wavelab._native import Ack, Congestion, Exit, PathChange, Start
from wavelab.errors import WavelabError, check_type

__all__ = [
    "Ack",
    "Congestion",
    "Exit",
    "PathChange",
    "Start",
    "congestion_control",
    "load_cc_file",
    "register_cc",
]

C = TypeVar("C", bound=type)


def register_cc(name: str, cls: C, *, replace: bool = False) -> C:
    """Registers the class ``cls`` as the congestion control ``name``;
    returns ``cls``. The attributes named in its ``metrics`` (a tuple of
    names) go into the time series as ``cc_<name>`` columns. A name already
    registered is an error unless ``replace`` (re-running a notebook cell)."""
    check_type("register_cc(name)", name, str, 'a name such as "my-vegas"')
    if not isinstance(cls, type):
        raise WavelabError(f"register_cc(cls): {cls!r} is not a class")
    metrics = getattr(cls, "metrics", ())
    if isinstance(metrics, str) or not all(isinstance(m, str) for m in metrics):
        raise WavelabError(
            f"{cls.__qualname__}.metrics: {metrics!r} is not a tuple of attribute names"
        )
    for method in ("on_ack", "on_congestion"):
        if not callable(getattr(cls, method, None)):
            raise WavelabError(
                f"{cls.__qualname__} has no method {method}(self, now, event): "
                "a congestion control needs on_ack and on_congestion"
            )
    try:
        _native.register_python_cc(name, cls, list(metrics), replace)
    except ValueError as e:
        raise WavelabError(f"register_cc({name!r}): {e}") from None
    return cls


def congestion_control(name: str, *, replace: bool = False) -> Callable[[C], C]:
    """A class decorator: ``@congestion_control("my-vegas")`` registers the
    class it decorates (:func:`register_cc`)."""

    def register(cls: C) -> C:
        return register_cc(name, cls, replace=replace)

    return register


def load_cc_file(path: str | Path) -> None:
    """Runs the Python file ``path``, whose registrations (decorated classes
    or :func:`register_cc` calls) then name algorithms scenarios can use.
    An error in the file is a :class:`WavelabError` naming it."""
    p = Path(path)
    if not p.is_file():
        raise WavelabError(f"--cc-file {p}: no such file")
    module_name = f"wavelab_cc_{p.stem}"
    spec = importlib.util.spec_from_file_location(module_name, p)
    if spec is None or spec.loader is None:
        raise WavelabError(f"--cc-file {p}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except WavelabError as e:
        raise WavelabError(f"--cc-file {p}: {e}") from None
    except Exception as e:
        import traceback

        tb = "".join(traceback.format_exception(e)).rstrip()
        raise WavelabError(f"--cc-file {p}: {type(e).__name__}: {e}\n{tb}") from None
