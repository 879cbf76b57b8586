"""Bad input never crashes: the shipped scenarios, with a few values replaced
at random (wrong types, zero and extreme rates, durations and queues, NaN),
either run or stop with a ScenarioFileError that names a field.

A seeded sample runs here; ``WAVELAB_MUTATIONS=3000`` (or
``WAVELAB_CASES_SCALE=30``) searches longer.
"""

from __future__ import annotations

import copy
import os
import random
import re
import tomllib
from collections.abc import Iterator
from typing import Any

import pytest

from wavelab import WavelabError, run
from wavelab.scenario import builtin_names, builtin_toml, from_dict

# values a field of that name might plausibly be given, the extreme ones included
PLAUSIBLE: list[tuple[tuple[str, ...], list[Any]]] = [
    (("rate",), ["1bit/s", "1kbit/s", "100Gbit/s", "1Tbit/s", "0.001bit/s"]),
    (
        ("delay", "start", "stop", "at", "outage", "interval", "rto", "delayed_ack", "window"),
        ["0s", "1ns", "10s", "1000s", "3s", "100ms"],
    ),
    (("queue",), ["1pkt", "0pkt", "1B", "1000000pkt", "2pkt"]),
    (("p", "loss_good", "loss_bad", "p_good_bad", "p_bad_good", "fraction"), [0.0, 1.0, 1e-9]),
    (("mss",), [64, 65495, 536]),
    (("initial_cwnd",), [1, 0, 100000]),
    (("size",), ["1B", "0B", "10GB"]),
    (("seed",), [0, 2**64 - 1]),
    (("dupthresh", "abc_limit"), [0, 1, 1000]),
    (("rcv_window",), ["1B", "1GiB"]),
]
# anything at all
WILD: list[Any] = [
    0, -1, 2**64, 1e308, float("nan"), float("inf"), True, "", "-5ms", "1e400s",
    "nan", [], {}, [1, 2], {"a": 1}, "x" * 300, "\u00e9", "sender", None,
]  # fmt: skip
# a field path such as links[1].handovers[0].rate, then the message
FIELD = re.compile(r"^[a-z_]+(\[\d+\])*(\.[a-z_]+(\[\d+\])*)*: \S")


def paths(d: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key path in ``d``, leaves and tables."""
    items: Any = d.items() if isinstance(d, dict) else enumerate(d) if isinstance(d, list) else ()
    for k, v in items:
        here = (*path, k)
        yield here
        yield from paths(v, here)


def plausible(key: str) -> list[Any] | None:
    for names, pool in PLAUSIBLE:
        if any(n in key for n in names):
            return pool
    return None


def mutate(d: dict[str, Any], rng: random.Random) -> None:
    for _ in range(rng.randint(1, 3)):
        every = list(paths(d))
        typed = [p for p in every if plausible(str(p[-1]))]
        path = rng.choice(typed if typed and rng.random() < 0.9 else every)
        pool = plausible(str(path[-1]))
        value = rng.choice(pool if pool and rng.random() < 0.85 else WILD)
        parent: Any = d
        for k in path[:-1]:
            parent = parent[k]
        if value is None:
            del parent[path[-1]]
        else:
            parent[path[-1]] = copy.deepcopy(value)


# WAVELAB_MUTATIONS sets the count; otherwise 100 times WAVELAB_CASES_SCALE,
# the scale every property test of the project reads (docs/validation.md)
CASES = int(
    os.environ.get("WAVELAB_MUTATIONS") or 100 * int(os.environ.get("WAVELAB_CASES_SCALE", "1"))
)


@pytest.mark.parametrize("seed", range(CASES))
def test_a_mutated_scenario_runs_or_is_rejected_by_field(seed: int) -> None:
    rng = random.Random(seed)
    name = rng.choice(builtin_names())
    d = tomllib.loads(builtin_toml(name))
    d["duration"] = "2s"
    mutate(d, rng)
    try:
        results = run(from_dict(d), steps=4)
    except WavelabError as e:
        # the message leads with the field path, e.g. "links[1].rate: ..."
        assert FIELD.match(str(e)), str(e)
        return
    assert results.complete
    assert len(results.flows) >= 1
