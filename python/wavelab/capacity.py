"""The capacity of a link direction over a run and the windows when a link
was down: :mod:`wavelab.analysis.capacity`, also importable by this path,
which earlier documents and code name."""

from wavelab.analysis.capacity import (
    Capacity,
    Outage,
    Table,
    bottleneck_direction,
    direction_capacity,
    outages,
)

__all__ = ["Capacity", "Outage", "Table", "bottleneck_direction", "direction_capacity", "outages"]
