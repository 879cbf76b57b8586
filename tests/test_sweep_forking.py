"""Runs sharing their past by forking give the outputs of fresh runs."""

from __future__ import annotations

import pytest

from wavelab.experiments import mobiwac2009 as m
from wavelab.scenario.loading import from_toml
from wavelab.sweep.forking import execute_forked, group_by_prefix, prefix_key
from wavelab.sweep.worker import Job, RunOutput, execute


def jobs(figure: int, tcp: str, flows: int, instants: list[float]) -> list[Job]:
    h = next(x for x in m.handoffs() if x.figure == figure)
    out = []
    for t in instants:
        sc = from_toml(m.scenario_text(h, t, flows, tcp))
        out.append(Job(f"f{figure}-{tcp}-{flows}-{t}", sc.to_json()))
    return out


def same(a: RunOutput, b: RunOutput, bbm: bool) -> None:
    assert a.error is None and b.error is None, (a.error, b.error)
    assert a.key == b.key
    # run.json holds the engine's CPU seconds; every table is compared
    assert set(a.files) == set(b.files)
    for name in a.files:
        if name != "run.json":
            assert a.files[name] == b.files[name], name
    timing = {"wall_seconds", "engine_cpu_seconds", "cpu_seconds", "worker"}
    if bbm:
        # the engine's own figures: a fork's break-before-make links run in
        # reference mode (every hop an event), with the same tables
        timing |= {"events", "peak_packets"}
    assert {k: v for k, v in a.run.items() if k not in timing} == {
        k: v for k, v in b.run.items() if k not in timing
    }
    assert a.metrics.keys() == b.metrics.keys()
    for k in a.metrics:
        x, y = a.metrics[k], b.metrics[k]
        assert x == y or (x != x and y != y), k  # NaN == NaN here


@pytest.mark.parametrize(
    ("figure", "tcp", "flows"),
    [(6, "regular", 2), (9, "ETCPv1", 1), (13, "Wave", 4), (17, "CUBIC", 2)],
)
def test_forked_runs_are_byte_identical_to_fresh_runs(figure: int, tcp: str, flows: int) -> None:
    group = jobs(figure, tcp, flows, [0.3, 1.0, 2.5, 2.5, 4.2, 7.0])
    # shuffled: the group runs in the order of its instants, outputs come
    # back in the order given
    group = [group[i] for i in (3, 0, 5, 1, 4, 2)]
    forked = execute_forked(group)
    assert [o.key for o in forked] == [j.key for j in group]
    h = next(x for x in m.handoffs() if x.figure == figure)
    for job, out in zip(group, forked, strict=True):
        same(execute(job), out, h.kind == "break-before-make")


def test_groups_are_the_jobs_differing_only_in_the_instant() -> None:
    a = jobs(6, "regular", 1, [1.0, 2.0])
    b = jobs(6, "ETCPv1", 1, [1.0])
    c = Job("captured", a[0].scenario_json, captures=("flow:bulk",))
    groups = group_by_prefix([a[0], b[0], a[1], c])
    assert [[j.key for j in g] for g in groups] == [
        [a[0].key, a[1].key],
        [b[0].key],
        ["captured"],
    ]
    assert prefix_key(c) is None
    key = prefix_key(a[1])
    assert key is not None and key[1] == 2_000_000_000


@pytest.mark.parametrize("workers", [1, 2])
def test_the_local_pool_groups_jobs_and_gives_the_same_outputs(workers: int) -> None:
    from wavelab.sweep.backends import LocalPool

    todo = [
        *jobs(9, "regular", 1, [0.5, 1.5, 3.0]),
        *jobs(6, "CUBIC", 2, [2.0, 1.0]),
        *jobs(13, "ETCPv0", 1, [4.0]),
    ]
    grouped = {o.key: o for o in LocalPool(workers, fork=True).run(todo)}
    alone = {o.key: o for o in LocalPool(workers, fork=False).run(todo)}
    assert sorted(grouped) == sorted(j.key for j in todo)
    for key, out in grouped.items():
        same(alone[key], out, key.startswith("9-") or key.startswith("f9-"))
