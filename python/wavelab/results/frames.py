"""Results of a run as pandas DataFrames, with Parquet and CSV export."""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from wavelab._util.files import write_files_atomically
from wavelab._util.folder_lock import folder_lock
from wavelab.errors import WavelabError, check_path, check_type
from wavelab.results.ownership import claim_run_dir
from wavelab.results.summary import meta_files, summary_frame
from wavelab.results.tables import (
    OPTIONAL_TABLES,
    TABLES,
    NativeTable,
    direction_labels,
    run_unit,
    table_to_frame,
    with_units,
)
from wavelab.results.view import results_html, results_text
from wavelab.scenario.loading import Scenario, stored_scenario


class Results:
    """What a run produced.

    * ``series``: per-flow time series (one row per flow per sample): bytes sent,
      retransmitted, acked and delivered, cwnd, ssthresh, in flight, srtt, rtt,
      rto, recovery state and the algorithm's variables (``cc_*`` columns);
    * ``flows``: per-flow counters and completion times;
    * ``links``: per-link-direction counters (sent, delivered, dropped by cause);
    * ``queues``: per link direction per sample: queue length, the bytes
      serialised and delivered so far, and the queue discipline's state
      (``sojourn``, ``aqm_drops``, ``aqm_marks``, ``drop_prob``, ``prob_l``,
      ``codel_dropping``, ``codel_count``: NaN or 0 on a drop-tail
      direction; docs/scenarios.md, "The queue series");
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
        subflows: pd.DataFrame | None = None,
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
            "subflows": subflows,
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
    def subflows(self) -> pd.DataFrame:
        """The subflows of Multipath TCP connections, one row each: its row
        in the flows table (``flow``), ``connection``, ``subflow``,
        ``link``, ``backup``, the data ``mapped`` to it and ``reinjected``
        on it, its ``failures``, and its connection's ``conn_delivered``,
        ``conn_duplicate``, ``conn_completion_time`` and ``conn_goodput``
        (bit/s). Empty without MPTCP flows."""
        return self._table("subflows")

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
        return results_text(self)

    def _repr_html_(self) -> str:
        """Its summary's first columns, one row per flow (a notebook's view)."""
        return results_html(self)

    def summary(self) -> pd.DataFrame:
        """One row per flow: the figures people compare first, and the run's
        (:func:`summary_frame`); an MPTCP subflow's row also names its
        connection and gives the connection's goodput."""
        return summary_frame(
            self.flows,
            self.links,
            self.run,
            self.scenario.normalized,
            self.handovers,
            self.handoffs,
            subflows=self.subflows,
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
            subflows=self.subflows,
        )
        return {**files, **meta}

    def to_parquet(self, directory: str | Path, force: bool = False) -> list[Path]:
        """Writes every table as Parquet, the summary as CSV, and the normalised
        scenario and run figures as JSON. Returns the files written.

        A directory holding another scenario's results (or a sweep's store)
        is refused with :class:`~wavelab.results.ownership.MixedResultsError` unless
        ``force``, which removes wavelab's files from it first; the same
        scenario's results are replaced. The files are written as a set: each
        to a temporary file first, and only once all are on disk are they
        renamed into place. A write error (a full disk) raises ``OSError``
        and leaves the previous files, or none, never an empty or truncated
        one. The folder's lock is held meanwhile
        (:mod:`wavelab._util.folder_lock`): a folder another process writes
        is refused (:class:`~wavelab._util.folder_lock.FolderBusyError`)."""
        out = check_path("to_parquet(directory)", directory)
        check_type("to_parquet(force)", force, bool, "True or False")
        with folder_lock(out):
            claim_run_dir(out, self.scenario.normalized, force)
            return write_files_atomically(out, self.to_files())

    @classmethod
    def read_parquet(cls, directory: str | Path) -> Results:
        """Reads results written by :meth:`to_parquet`; :class:`WavelabError`
        if ``directory`` holds none."""
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
            subflows=frames["subflows"],
            rtt_distribution=frames["rtt_distribution"],
            releases=frames["releases"],
            bursts=frames["bursts"],
            run=meta["run"],
            complete=meta["complete"],
        )
