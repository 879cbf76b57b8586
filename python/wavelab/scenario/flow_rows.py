"""The scenario flow behind each row of a run's flows table.

A flow with ``count = N`` gives N rows in flow order. A Multipath TCP flow
(``mptcp = { ... }``) gives one row per subflow: its first subflow takes the
flow's place, and its other subflows (one per further access link of its
multi-homed end) follow every other flow, connection by connection, as the
simulator numbers them (crates/sim/src/simulation/compile.rs)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _subflows(normalized: Mapping[str, Any], spec: Mapping[str, Any]) -> int:
    """How many subflows an MPTCP flow has: the access links of its
    multi-homed end (the receiver if it has several, else the sender)."""

    def links(node: str) -> int:
        return sum(1 for link in normalized.get("links", []) if node in link.get("between", []))

    to, frm = links(str(spec.get("to"))), links(str(spec.get("from")))
    return to if to > 1 else max(frm, 1)


def flow_row_specs(normalized: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Per row of the flows table, the normalised scenario flow it runs."""
    rows: list[Mapping[str, Any]] = []
    joins: list[Mapping[str, Any]] = []
    for spec in normalized.get("flows", []):
        for _ in range(int(spec.get("count", 1) or 1)):
            rows.append(spec)
            if spec.get("mptcp") is not None:
                joins += [spec] * (_subflows(normalized, spec) - 1)
    return rows + joins
