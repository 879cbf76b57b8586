"""Results of a run as pandas DataFrames, with Parquet and CSV export."""

from __future__ import annotations

import io
import json
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from wavelab import _native
from wavelab.capacity import Table
from wavelab.errors import WavelabError, check_path, check_type
from wavelab.outputs import write_files_atomically
from wavelab.scenario import Scenario

TABLES = (
    "series",
    "flows",
    "links",
    "queues",
    "packets",
    "handovers",
    "handoffs",
    "notifications",
    "rtt_distribution",
    "releases",
    "bursts",
)
"""The tables of a run; ``releases`` and ``bursts`` only an emulation has."""

EMULATION_TABLES = ("releases", "bursts")
"""The tables only an emulation has."""

OPTIONAL_TABLES = tuple(t for t in TABLES if t not in ("series", "flows", "links", "queues"))
"""Tables written to files only when they have rows."""

COUNTERS = (
    "bytes_sent",
    "bytes_retransmitted",
    "bytes_acked",
    "bytes_delivered",
    "segments_sent",
    "retransmissions",
    "fast_retransmits",
    "rto_expiries",
    "loss_probes",
    "tlp_recoveries",
    "spurious_retransmissions",
    "dsacks_received",
    "dupacks_received",
    "acks_received",
    "acks_sent",
    "duplicate_segments",
    "out_of_order_segments",
)
"""The per-flow counters: nullable integers (``UInt64``) in every run; a
counter the driver cannot know (one the kernel does not keep, in an
emulation) is missing (``<NA>``)."""


def _column(kind: str, data: Any, labels: list[str] | None, valid: bytes | None = None) -> Any:
    if kind == "str":
        return pd.array(data, dtype="string")
    if kind == "bool":
        return np.frombuffer(data, dtype=np.uint8).astype(bool)
    if kind == "category":
        codes = np.frombuffer(data, dtype=np.uint8).astype(np.int16)
        return pd.Categorical.from_codes(codes, categories=pd.Index(labels or []))
    values = np.frombuffer(data, dtype=np.dtype(kind)).copy()
    if valid is not None and values.dtype.kind in "iu":
        # a nullable integer column (a null of a float column holds NaN)
        return pd.arrays.IntegerArray(values, np.frombuffer(valid, dtype=np.uint8) == 0)
    return values


NativeTable = list[tuple[str, str, Any, list[str] | None, bytes | None]]
"""A table as the native module returns it: (name, kind, buffer, labels,
validity) per column; the validity (one byte per row, 0 for a null) is
given for a nullable column, None for another."""


def table_to_frame(columns: NativeTable) -> pd.DataFrame:
    """Turns a native table (columns of little-endian buffers) into a DataFrame."""
    return pd.DataFrame(
        {name: _column(kind, data, labels, valid) for name, kind, data, labels, valid in columns}
    )


def with_units(arrow: pa.Table, unit_of: Callable[[str], str | None]) -> pa.Table:
    """``arrow`` with each field's unit, ``unit_of(name)``, as ``unit`` in
    its metadata (a run's tables and a sweep's carry their units so)."""
    fields = []
    for f in arrow.schema:
        u = unit_of(f.name)
        fields.append(f.with_metadata({"unit": u}) if u is not None else f)
    return pa.Table.from_arrays(
        arrow.columns, schema=pa.schema(fields, metadata=arrow.schema.metadata)
    )


def run_unit(table: str) -> Callable[[str], str | None]:
    """The units of a run's table ``table``, by column name, from the schema
    of the native module."""
    return lambda column: _native.column_unit(table, column)


def table_columns(columns: NativeTable) -> dict[str, Any]:
    """A native table's columns without building a DataFrame (pandas takes
    about a millisecond to build a frame of a few rows, longer than a short
    run of a sweep takes to simulate): numbers as numpy arrays, strings as
    the native module's list of ``str``, categories as categoricals."""
    return {
        name: data if kind == "str" else _column(kind, data, labels, valid)
        for name, kind, data, labels, valid in columns
    }


class Results:
    """What a run produced.

    * ``series``: per-flow time series (one row per flow per sample): bytes sent,
      retransmitted, acked and delivered, cwnd, ssthresh, in flight, srtt, rtt,
      rto, recovery state and the algorithm's variables (``cc_*`` columns);
    * ``flows``: per-flow counters and completion times;
    * ``links``: per-link-direction counters (sent, delivered, dropped by cause);
    * ``queues``: per link direction per sample: queue length, and the bytes
      serialised and delivered so far;
    * ``packets``: the per-packet log of flows with ``log_packets = true``;
    * ``handovers``: when each handover of the scenario happened;
    * ``handoffs``: the handoffs of multi-homed nodes (when, from which
      access link to which, the kind, how many flows they moved and
      notified);
    * ``notifications``: the cross-layer notifications delivered to senders
      (when, to which flow, and what they said: a handoff's old and new
      access link rate and delay and the flows on the new link, or a
      link-layer report's segment and retransmissions);
    * ``rtt_distribution``: every RTT sample of each flow's sender, as the
      non-empty buckets of its histogram (``flow``, ``rtt_low``, ``rtt_high``
      in seconds, ``count``; a bucket is at most 1/64 of its lower edge
      wide), from which :func:`wavelab.analysis.rtt_cdf` draws the CDF
      (none in an emulation: the kernel's samples are not seen one by one);
    * ``releases`` (an emulation's only): every packet handed to its
      destination, its planned instant and its lateness.
    * ``bursts`` (an emulation's only, for flows that run the BPF TCP Wave):
      every burst the program opened, at the kernel's instant (when the
      stack sent its first segment), its flow, first sequence number and
      segments.

    ``run`` holds the run's figures; an emulation's has ``mode =
    "emulation"`` and its lateness and settings under ``emulation``.

    Times are in seconds, sizes in bytes, rates in bit/s.

    Results of a run (:meth:`from_native`) build each DataFrame when it is
    first read: a run sent to another process, or whose tables are never
    read, costs only its column buffers.
    """

    def __init__(
        self,
        scenario: Scenario,
        *,
        series: pd.DataFrame | None = None,
        flows: pd.DataFrame | None = None,
        links: pd.DataFrame | None = None,
        queues: pd.DataFrame | None = None,
        packets: pd.DataFrame | None = None,
        handovers: pd.DataFrame | None = None,
        handoffs: pd.DataFrame | None = None,
        notifications: pd.DataFrame | None = None,
        rtt_distribution: pd.DataFrame | None = None,
        releases: pd.DataFrame | None = None,
        bursts: pd.DataFrame | None = None,
        run: dict[str, Any] | None = None,
        complete: bool = True,
        native: Mapping[str, NativeTable] | None = None,
    ) -> None:
        self.scenario = scenario
        self.run: dict[str, Any] = run if run is not None else {}
        self.complete = complete
        given = {
            "series": series,
            "flows": flows,
            "links": links,
            "queues": queues,
            "packets": packets,
            "handovers": handovers,
            "handoffs": handoffs,
            "notifications": notifications,
            "rtt_distribution": rtt_distribution,
            "releases": releases,
            "bursts": bursts,
        }
        self._frames = {name: f for name, f in given.items() if f is not None}
        # the native module's column buffers of the tables not built yet
        self._native = {k: v for k, v in (native or {}).items() if k not in self._frames}

    @classmethod
    def from_native(
        cls,
        scenario: Scenario,
        tables: Mapping[str, NativeTable],
        run: dict[str, Any],
        complete: bool,
    ) -> Results:
        """Results over the native module's buffers; each frame is built
        when first read."""
        return cls(scenario, run=run, complete=complete, native=tables)

    def _table(self, name: str) -> pd.DataFrame:
        frame = self._frames.get(name)
        if frame is not None:
            return frame
        native = self._native.pop(name, None)
        if native is None:
            frame = pd.DataFrame()
        else:
            frame = table_to_frame(native)
            if name == "queues" and len(frame):
                # `link:direction` of each row's direction, as a category with
                # sorted categories (what pandas infers from the strings)
                links = self.links
                labels, dir_codes = direction_labels(list(links["link"]), list(links["direction"]))
                link = pd.Categorical.from_codes(
                    dir_codes[frame["dir"].to_numpy()], categories=pd.Index(labels)
                )
                frame.insert(2, "link", pd.Series(link))
        self._frames[name] = frame
        return frame

    @property
    def pending(self) -> list[str]:
        """The tables not built yet (still native buffers)."""
        return [name for name in TABLES if name in self._native]

    @property
    def series(self) -> pd.DataFrame:
        """Per-flow time series, one row per flow per sample."""
        return self._table("series")

    @property
    def flows(self) -> pd.DataFrame:
        """Per-flow counters and completion times."""
        return self._table("flows")

    @property
    def links(self) -> pd.DataFrame:
        """Per-link-direction counters."""
        return self._table("links")

    @property
    def queues(self) -> pd.DataFrame:
        """Queue lengths and counters per link direction per sample."""
        return self._table("queues")

    @property
    def packets(self) -> pd.DataFrame:
        """The packet log of flows with ``log_packets = true``."""
        return self._table("packets")

    @property
    def handovers(self) -> pd.DataFrame:
        """When each handover of the scenario happened."""
        return self._table("handovers")

    @property
    def handoffs(self) -> pd.DataFrame:
        """The handoffs of multi-homed nodes: when, between which access
        links, of which kind, and how many flows each moved."""
        return self._table("handoffs")

    @property
    def notifications(self) -> pd.DataFrame:
        """The cross-layer notifications delivered to senders, with what
        they said."""
        return self._table("notifications")

    @property
    def rtt_distribution(self) -> pd.DataFrame:
        """Each flow's RTT samples as histogram buckets (``flow``,
        ``rtt_low``, ``rtt_high``, ``count``)."""
        return self._table("rtt_distribution")

    @property
    def releases(self) -> pd.DataFrame:
        """An emulation's releases: ``time`` (planned, s), ``lateness`` (s),
        ``dir`` (the last link direction), ``flow`` (-1: none), ``size``."""
        return self._table("releases")

    @property
    def bursts(self) -> pd.DataFrame:
        """An emulation's BPF TCP Wave bursts: ``time`` (s, when the kernel
        opened the burst and sent its first segment), ``flow``, ``seq`` (its
        first byte, the kernel's sequence number), ``segments``."""
        return self._table("bursts")

    @property
    def emulated(self) -> bool:
        """True for the results of an emulation."""
        return self.run.get("mode") == "emulation"

    def __repr__(self) -> str:
        state = "complete" if self.complete else "partial"
        return f"Results({self.scenario.name!r}, {state}, {len(self.flows)} flows)"

    def summary(self) -> pd.DataFrame:
        """One row per flow: the figures people compare first, and the run's
        (:func:`summary_frame`)."""
        return summary_frame(
            self.flows,
            self.links,
            self.run,
            self.scenario.normalized,
            self.handovers,
            self.handoffs,
        )

    def goodput(self) -> pd.DataFrame:
        """Per-flow goodput (bit/s) between consecutive samples."""
        s = self.series[["time", "flow", "bytes_delivered", "bytes_sent", "bytes_retransmitted"]]
        parts = []
        for flow, g in s.groupby("flow", sort=True):
            g = g.sort_values("time")
            dt = g["time"].diff()
            sent = g["bytes_sent"] + g["bytes_retransmitted"]
            parts.append(
                pd.DataFrame(
                    {
                        "time": g["time"],
                        "flow": flow,
                        "goodput": g["bytes_delivered"].diff() * 8 / dt,
                        "send_rate": sent.diff() * 8 / dt,
                    }
                ).iloc[1:]
            )
        if not parts:
            return pd.DataFrame(columns=["time", "flow", "goodput", "send_rate"])
        return pd.concat(parts, ignore_index=True)

    def to_files(self) -> dict[str, bytes]:
        """The files :meth:`to_parquet` writes, as bytes by file name: every
        table as Parquet (those of ``OPTIONAL_TABLES`` only when not empty),
        ``summary.csv``, and ``run.json`` (the normalised scenario and the
        run's figures)."""
        files: dict[str, bytes] = {}
        for name in TABLES:
            frame: pd.DataFrame = getattr(self, name)
            if name in OPTIONAL_TABLES and frame.empty:
                continue
            buf = io.BytesIO()
            # pandas' DataFrame.to_parquet, with the units
            arrow = pa.Table.from_pandas(frame, preserve_index=False)
            pq.write_table(with_units(arrow, run_unit(name)), buf, compression="snappy")
            files[f"{name}.parquet"] = buf.getvalue()
        meta = meta_files(
            self.scenario,
            self.flows,
            self.run,
            self.complete,
            self.links,
            self.handovers,
            self.handoffs,
        )
        return {**files, **meta}

    def to_parquet(self, directory: str | Path, force: bool = False) -> list[Path]:
        """Writes every table as Parquet, the summary as CSV, and the normalised
        scenario and run figures as JSON. Returns the files written.

        A directory holding another scenario's results (or a sweep's store)
        is refused with :class:`~wavelab.ownership.MixedResultsError` unless
        ``force``, which removes wavelab's files from it first; the same
        scenario's results are replaced. The files are written as a set: each
        to a temporary file first, and only once all are on disk are they
        renamed into place. A write error (a full disk) raises ``OSError``
        and leaves the previous files, or none, never an empty or truncated
        one."""
        from wavelab.ownership import claim_run_dir

        out = check_path("to_parquet(directory)", directory)
        check_type("to_parquet(force)", force, bool, "True or False")
        claim_run_dir(out, self.scenario.normalized, force)
        out.mkdir(parents=True, exist_ok=True)
        return write_files_atomically(out, self.to_files())

    @classmethod
    def read_parquet(cls, directory: str | Path) -> Results:
        """Reads results written by :meth:`to_parquet`; :class:`WavelabError`
        if ``directory`` holds none."""
        from wavelab.scenario import stored_scenario

        d = check_path("read_parquet(directory)", directory)
        try:
            meta = json.loads((d / "run.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise WavelabError(
                f"{d}: no results here (run.json written by `wavelab run` cannot be read: {e})"
            ) from None
        frames = {}
        for name in TABLES:
            p = d / f"{name}.parquet"
            frames[name] = pd.read_parquet(p) if p.exists() else pd.DataFrame()
        emulated = meta["run"].get("mode") == "emulation"
        return cls(
            stored_scenario(meta["scenario"], emulation=emulated),
            series=frames["series"],
            flows=frames["flows"],
            links=frames["links"],
            queues=frames["queues"],
            packets=frames["packets"],
            handovers=frames["handovers"],
            handoffs=frames["handoffs"],
            notifications=frames["notifications"],
            rtt_distribution=frames["rtt_distribution"],
            releases=frames["releases"],
            bursts=frames["bursts"],
            run=meta["run"],
            complete=meta["complete"],
        )


RUN_COLUMNS = (
    "bottleneck",
    "queue_delay_mean_ms",
    "queue_delay_p95_ms",
    "loss_rate",
    "utilisation",
    "jain",
)
"""The run's figures in the summary (the same on every flow's row)."""


def summary_frame(
    flows: pd.DataFrame,
    links: Table | None = None,
    run: Mapping[str, Any] | None = None,
    normalized: Mapping[str, Any] | None = None,
    handovers: Table | None = None,
    handoffs: Table | None = None,
    metrics: Mapping[str, Any] | None = None,
) -> pd.DataFrame:
    """One row per flow of a ``flows`` table: the figures people compare
    first. Per flow: goodput, bytes delivered, the retransmission counters and
    ``retransmission_rate``, the minimum RTT and ``rtt_mean_ms``,
    ``rtt_p50_ms``, ``rtt_p95_ms``, ``rtt_p99_ms`` (its sender's samples),
    completion time. Per run, repeated on each row (:data:`RUN_COLUMNS`; with
    the links table, run figures and normalised scenario): the bottleneck's
    name, queueing delay mean and p95 (ms), ``loss_rate`` (packets dropped
    there / offered) and ``utilisation``, and ``jain`` (Jain's index of the
    flows' goodputs; empty for one flow, where it says nothing). Every figure
    comes from :func:`wavelab.metrics.flow_metrics` and
    :func:`wavelab.metrics.flow_rates`, as in a sweep's metrics table;
    ``metrics``, the run's :func:`~wavelab.metrics.flow_metrics` already
    computed (a sweep's worker has them), replaces the tables for the run's
    figures."""
    from wavelab.metrics import flow_metrics, flow_rates

    f = flows
    rates = flow_rates(f)
    out = pd.DataFrame(
        {
            "flow": f["name"],
            "algorithm": f["algorithm"],
            "goodput_mbps": (f["goodput"] / 1e6).round(3),
            "delivered_mb": (f["bytes_delivered"] / 1e6).round(3),
            "retransmissions": f["retransmissions"],
            "fast_retransmits": f["fast_retransmits"],
            "rto_expiries": f["rto_expiries"],
            "spurious_retransmissions": f["spurious_retransmissions"],
            "retransmission_rate": np.round(rates["retransmission_rate"], 5),
            "min_rtt_ms": (f["min_rtt"] * 1e3).round(2),
            **{c: np.round(rates[c], 2) for c in ("rtt_mean_ms", "rtt_p50_ms", "rtt_p95_ms")},
            "rtt_p99_ms": np.round(rates["rtt_p99_ms"], 2),
            "completion_s": f["completion_time"].round(4),
        }
    )
    if metrics is not None:
        m = metrics
    elif links is None or run is None or normalized is None:
        return out
    else:
        m = flow_metrics(f, links, run, normalized, handovers, handoffs)
    digits = {"queue_delay_mean_ms": 2, "queue_delay_p95_ms": 2, "loss_rate": 5}
    for c in RUN_COLUMNS:
        v = m.get(c, math.nan)
        out[c] = v if isinstance(v, str) else round(float(v), digits.get(c, 4))
    return out


def run_json(scenario: Scenario, run: dict[str, Any], complete: bool) -> bytes:
    """``run.json`` of a run: the normalised scenario, the run's figures, and
    the SHA-256 of each trace file the scenario reads (if any)."""
    meta: dict[str, Any] = {"scenario": scenario.normalized, "run": run, "complete": complete}
    if scenario.traces:
        meta["traces"] = scenario.traces
    return (json.dumps(meta, indent=2) + "\n").encode()


def meta_files(
    scenario: Scenario,
    flows: pd.DataFrame,
    run: dict[str, Any],
    complete: bool,
    links: Table | None = None,
    handovers: Table | None = None,
    handoffs: Table | None = None,
    metrics: Mapping[str, Any] | None = None,
) -> dict[str, bytes]:
    """``summary.csv`` (:func:`summary_frame`; its run columns need
    ``links`` or ``metrics``) and ``run.json`` of a run."""
    summary = summary_frame(flows, links, run, scenario.normalized, handovers, handoffs, metrics)
    return {
        "summary.csv": summary.to_csv(index=False).encode(),
        "run.json": run_json(scenario, run, complete),
    }


def direction_labels(links: list[str], directions: list[str]) -> tuple[list[str], np.ndarray]:
    """The ``link:direction`` labels of the link directions, sorted (as pandas
    orders the categories it infers from strings), and each direction's code
    among them."""
    names = [f"{a}:{b}" for a, b in zip(links, directions, strict=True)]
    labels = sorted(set(names))
    code = {n: i for i, n in enumerate(labels)}
    return labels, np.array([code[n] for n in names], dtype=np.int64)
