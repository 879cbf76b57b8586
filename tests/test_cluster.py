"""The Dask backend: a real local cluster (a scheduler and two worker
processes) runs a sweep whose results equal the local pool's, bit for bit;
an unreachable scheduler is reported in one line, after the timeout given."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from conftest import wavelab
from wavelab.errors import WavelabError
from wavelab.sweep.backends import DaskCluster
from wavelab.sweep.runs_table import TIMINGS

HANDOVER_SWEEP = """
name = "cluster-test"
duration = "12s"

[[links]]
name = "access"
between = ["s", "r"]
rate = "100Mbit/s"
delay = "1ms"

[[links]]
name = "bottleneck"
between = ["r", "d"]
rate = "2Mbit/s"
delay = "30ms"
queue = "50pkt"
loss = { model = "bernoulli", p = 0.005 }
handovers = [{ at = "5s", outage = "1s", rate = "8Mbit/s", delay = "100ms" }]

[[flows]]
name = "f"
from = "s"
to = "d"

[sweep]
"flows[0].cc" = ["newreno", "wave"]
seeds = 2
"""


def index(out: Path) -> dict[str, dict[str, object]]:
    lines = (out / "index.jsonl").read_text().splitlines()
    return {e["key"]: e for e in map(json.loads, lines)}


def test_a_local_dask_cluster_gives_the_local_pools_results(tmp_path: Path) -> None:
    from distributed import LocalCluster

    f = tmp_path / "sweep.toml"
    f.write_text(HANDOVER_SWEEP)
    on_cluster, local = tmp_path / "cluster", tmp_path / "local"
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        res = wavelab(
            "sweep", str(f), "--out", str(on_cluster), "--cluster", cluster.scheduler_address
        )
    assert res.returncode == 0, res.stderr
    assert "4 points and 4 baselines: 8 runs" in res.stderr
    assert f"on Dask at {cluster.scheduler_address} (2 workers)" in res.stderr
    res = wavelab("sweep", str(f), "--out", str(local), "--jobs", "2")
    assert res.returncode == 0, res.stderr

    a, b = index(on_cluster), index(local)
    assert set(a) == set(b) and len(a) == 8
    workers = {str(e["run"]["worker"]) for e in a.values()}  # type: ignore[index]
    assert len(workers) == 2, f"both workers ran: {workers}"
    assert all(w.split(":")[-1] != str(os.getpid()) for w in workers)
    for key in a:
        for name, info in a[key]["files"].items():  # type: ignore[attr-defined]
            if name != "run.json":  # run.json holds the wall time and the worker
                assert info == b[key]["files"][name], (key, name)  # type: ignore[index]
    ta = pd.read_parquet(on_cluster / "runs.parquet").drop(columns=list(TIMINGS))
    tb = pd.read_parquet(local / "runs.parquet").drop(columns=list(TIMINGS))
    pd.testing.assert_frame_equal(ta, tb)
    assert ta["recovery_s"].notna().any(), "the handover's recovery time was computed"


def test_an_unreachable_cluster_is_reported_in_one_line(tmp_path: Path) -> None:
    f = tmp_path / "sweep.toml"
    f.write_text(HANDOVER_SWEEP)
    res = wavelab(
        "sweep",
        str(f),
        "--out",
        str(tmp_path / "o"),
        "--cluster",
        "127.0.0.1:9",
        "--cluster-timeout",
        "2",
    )
    assert res.returncode == 2
    assert res.stderr.startswith(
        "error: --cluster 127.0.0.1:9: no Dask scheduler answered within 2 s"
    ), res.stderr
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr
    assert not (tmp_path / "o" / "index.jsonl").exists()


def test_the_cluster_timeout_reaches_dask(monkeypatch: pytest.MonkeyPatch) -> None:
    """--cluster-timeout is the time Dask's client may take to connect (how
    long the command as a whole takes is the machine's, not asserted)."""
    import distributed

    seen: dict[str, object] = {}

    def unreachable(address: str, **kw: object) -> None:
        seen.update(kw, address=address)
        raise OSError("connection refused")

    monkeypatch.setattr(distributed, "Client", unreachable)
    with pytest.raises(WavelabError, match="no Dask scheduler answered within 2 s"):
        DaskCluster("127.0.0.1:9", timeout=2.0)
    assert seen == {"address": "tcp://127.0.0.1:9", "timeout": 2.0, "set_as_default": False}


def test_workers_of_another_build_are_refused() -> None:
    import pytest

    from wavelab.errors import WavelabError
    from wavelab.sweep.backends import DaskCluster
    from wavelab.sweep.store import code_version

    class Client:
        def run(self, fn: object) -> dict[str, str]:
            return {
                "tcp://10.0.0.7:4000": "0.1.0+0000000000000000",
                "tcp://10.0.0.8:4000": code_version(),
            }

    cluster = DaskCluster.__new__(DaskCluster)
    cluster.client = Client()
    with pytest.raises(WavelabError) as e:
        cluster._check_versions("--cluster x:1")
    assert str(e.value) == (
        "--cluster x:1: workers run another wavelab build (tcp://10.0.0.7:4000 has "
        f"0.1.0+0000000000000000; this one is {code_version()}); results would not match "
        "their store keys"
    )


# slow (15 s): test_a_local_dask_cluster_gives_the_local_pools_results
# checks the cluster's runs against the local pool's in the quick suite
@pytest.mark.slow
def test_a_reproduction_on_a_local_dask_cluster_writes_the_local_pools_outputs(
    tmp_path: Path,
) -> None:
    """Every reproduction takes --cluster: WSC-TCP's quick form, whose runs
    are reduced where they ran, on two worker processes."""
    from distributed import LocalCluster

    on_cluster, local = tmp_path / "cluster", tmp_path / "local"
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        res = wavelab(
            "reproduce", "wsc-tcp", "--quick", "--out", str(on_cluster),
            "--cluster", cluster.scheduler_address,
        )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert f"12 to run on Dask at {cluster.scheduler_address} (2 workers)" in res.stderr
    res = wavelab("reproduce", "wsc-tcp", "--quick", "--out", str(local), "--jobs", "2")
    assert res.returncode == 0, res.stderr
    workers = {str(e["run"]["worker"]) for e in index(on_cluster / "store").values()}  # type: ignore[index]
    assert len(workers) == 2, f"both workers ran: {workers}"
    for name in ("runs.csv", "summary.csv", "beside_thesis.csv", "wsc_tcp.md"):
        assert (on_cluster / name).read_bytes() == (local / name).read_bytes(), name
