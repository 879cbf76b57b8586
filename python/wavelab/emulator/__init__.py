"""The emulator: scenarios on real packets, the kernel's TCP between
network namespaces on the wall clock (``docs/emulation.md``).

* :mod:`~wavelab.emulator.runs`: :func:`emulate` one scenario, or many at
  once; cleaning up what earlier runs left;
* :mod:`~wavelab.emulator.compare`: a simulation and an emulation of one
  scenario side by side (``wavelab compare``);
* :mod:`~wavelab.emulator.bpf`: the loader of the BPF TCP Wave for stock
  Linux (``wavelab bpf``);
* :mod:`~wavelab.emulator.bpf_bursts`: the BPF Wave's bursts as the kernel
  recorded them and the emulator read them, and their spacing figures.
"""

from wavelab.emulator.runs import (
    LATENESS_BOUND,
    SPIN,
    cleanup,
    collect,
    deferred_interrupts,
    emulate,
    emulate_many,
    for_emulation,
    start,
    stop_on_termination,
    unavailable,
)

__all__ = [
    "LATENESS_BOUND",
    "SPIN",
    "cleanup",
    "collect",
    "deferred_interrupts",
    "emulate",
    "emulate_many",
    "for_emulation",
    "start",
    "stop_on_termination",
    "unavailable",
]
