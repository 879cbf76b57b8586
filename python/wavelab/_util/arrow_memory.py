"""Which allocator pyarrow uses in wavelab's processes.

pyarrow's default pool (mimalloc in the wheels) keeps the memory of freed
buffers for reuse instead of returning it to the system. A process that
writes and reads a run's Parquet files one after another (a reproduction, a
sweep worker) then holds the peak of every run it ever handled:
``wavelab reproduce dcnet2016`` peaked at 338 MB with it and at 229 MB with
the system allocator, at the same speed (docs/performance.md, "Memory").
"""

from __future__ import annotations

import os
import sys

POOL_VARIABLE = "ARROW_DEFAULT_MEMORY_POOL"
"""The environment variable pyarrow reads, on its first use, to choose its
default pool (pyarrow's memory-pool docs)."""


def use_system_allocator() -> None:
    """Makes the system allocator pyarrow's default pool in this process (and
    the worker processes it starts). Idempotent; buffers already allocated
    stay in their pool. Before pyarrow is imported it only sets
    :data:`POOL_VARIABLE` (which the workers inherit), so that a command
    that never reads a table does not pay pyarrow's import (0.2 s)."""
    if "pyarrow" not in sys.modules:
        os.environ[POOL_VARIABLE] = "system"
        return
    import pyarrow as pa

    if pa.default_memory_pool().backend_name != "system":
        pa.set_memory_pool(pa.system_memory_pool())
