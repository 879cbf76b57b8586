"""A scenario in a few words (its ``__repr__``) and as two small tables, its
links and its flows (its ``_repr_html_`` in a notebook).

The functions take a Scenario (typed ``Any``: wavelab.scenario.loading imports this
module, and the import graph has no cycles, not even for type checking)."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from wavelab._util.views import counted, html_table, html_title, listed


def _algorithm(flow: Mapping[str, Any]) -> str:
    cc = flow.get("cc")
    return str(cc.get("algorithm", "?")) if isinstance(cc, Mapping) else str(cc)


def _flows(sc: Any) -> int:
    """Flows the scenario starts (a flow entry with ``count = N`` is N)."""
    return sum(int(f.get("count") or 1) for f in sc.normalized.get("flows", []))


def _changes(link: Mapping[str, Any]) -> str:
    """What happens to a link over time: ``2 handovers, 1 outage``."""
    parts = [
        counted(len(link.get(k) or []), word)
        for k, word in (("handovers", "handover"), ("outages", "outage"), ("schedule", "change"))
        if link.get(k)
    ]
    if link.get("outage_process"):
        parts.append("random outages")
    if link.get("arq"):
        parts.append("link-layer ARQ")
    return ", ".join(parts)


def _loss(link: Mapping[str, Any]) -> str:
    loss = link.get("loss") or {}
    model = str(loss.get("model", "none")) if isinstance(loss, Mapping) else str(loss)
    if model == "none":
        return ""
    p = loss.get("p") if isinstance(loss, Mapping) else None
    return f"{model} p={p}" if p is not None else model


def scenario_text(sc: Any) -> str:
    """``Scenario('demo', 40s, 3 links, 2 flows of newreno, from demo.toml)``."""
    algorithms = list(dict.fromkeys(_algorithm(f) for f in sc.normalized.get("flows", [])))
    where = f", from {sc.source}" if sc.source else ""
    kind = ", emulation" if sc.emulation else ""
    return (
        f"Scenario({sc.name!r}, {sc.normalized.get('duration')}, "
        f"{counted(len(sc.normalized.get('links', [])), 'link')}, "
        f"{counted(_flows(sc), 'flow')} of {listed(algorithms)}{kind}{where})"
    )


def scenario_html(sc: Any) -> str:
    """The scenario's name and description, then its links and flows."""
    n = sc.normalized
    what = f"{n.get('duration')} simulated, seed {n.get('seed')}"
    if sc.source:
        what += f", from {sc.source}"
    links = [
        [
            link.get("name") or f"links[{i}]",
            " - ".join(str(x) for x in link.get("between", [])),
            link.get("rate") or "",
            link.get("delay") or "",
            link.get("queue") or "",
            _loss(link),
            _changes(link),
        ]
        for i, link in enumerate(n.get("links", []))
    ]
    flows = [
        [
            f.get("name") or f"flows[{i}]",
            f"{f.get('from')} -> {f.get('to')}",
            _algorithm(f),
            f.get("count") or 1,
            f.get("start") or "0s",
        ]
        for i, f in enumerate(n.get("flows", []))
    ]
    description = n.get("description")
    about = f"<p>{html.escape(str(description))}</p>" if description else ""
    return (
        html_title("Scenario", sc.name, what)
        + about
        + html_table(["link", "between", "rate", "delay", "queue", "loss", "changes"], links)
        + html_table(["flow", "path", "cc", "count", "start"], flows)
    )
