"""Running several scenarios at once on the local cores, with a progress bar."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any

from wavelab.results import Results
from wavelab.runner import run
from wavelab.scenario import Scenario, from_dict


def _run_one(data: dict[str, Any]) -> Results:
    return run(from_dict(data))


def run_all(
    scenarios: Mapping[str, Scenario], jobs: int | None = None, progress: bool = True
) -> dict[str, Results]:
    """Runs every scenario, ``jobs`` at a time (default: all cores), and returns
    the results by key. Runs are deterministic, so the order they finish in
    does not matter."""
    jobs = jobs or os.cpu_count() or 1
    out: dict[str, Results] = {}
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(scenarios), unit="run", desc="runs", disable=None)
    try:
        if jobs == 1:
            for key, sc in scenarios.items():
                out[key] = run(sc)
                if bar is not None:
                    bar.update(1)
        else:
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                futures = {pool.submit(_run_one, sc.normalized): k for k, sc in scenarios.items()}
                for fut in as_completed(futures):
                    out[futures[fut]] = fut.result()
                    if bar is not None:
                        bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    for key, sc in scenarios.items():
        out[key].scenario = sc
    print(f"ran {len(out)} scenarios", file=sys.stderr)
    return {k: out[k] for k in scenarios}
