//! Everything a run produced, as tables, and the one schema of the
//! per-flow, per-link-direction, per-handover and per-handoff tables: a
//! plain record type for a row of each, and one builder per table, which
//! both drivers use. A value a driver cannot know (a counter the kernel
//! does not keep, a queueing delay not measured on a real link, a time not
//! reached yet) is `None` in the record and a null in the table.

use super::{ColumnData, Fnv, Table};
use crate::compile::NodeHandoffPlan;
use crate::flow_stats::FlowStats;
use crate::histogram::Histogram;
use crate::link::{DropCause, LinkCounters, Settings};
use crate::scenario::{link_name, LinkHandoverSpec, LinkHandoverTime, Scenario};
use crate::topology::{DirId, Topology};
use wavelab_tcp::Rate;
use wavelab_tcp::{Duration, Instant};

/// Figures about the run itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Simulated time reached.
    pub simulated: Duration,
    /// Events processed.
    pub events: u64,
    /// Packet transmissions on links (one per packet per hop).
    pub packet_hops: u64,
    /// Most packets alive at once.
    pub peak_packets: u64,
    /// Every RTT sample of every flow's sender (see [`crate::histogram`]).
    pub rtts: Histogram,
}

/// Everything a run produced, as tables.
#[derive(Clone, Debug)]
pub struct Results {
    /// Per-flow time series, one row per flow per sample.
    pub series: Table,
    /// Queue lengths per link direction per sample.
    pub queues: Table,
    /// Per-flow counters.
    pub flows: Table,
    /// Per-link-direction counters.
    pub links: Table,
    /// The packet log of flows with `log_packets`.
    pub packets: Table,
    /// When each handover happened.
    pub handovers: Table,
    /// The handoffs of multi-homed nodes: when, between which links, how
    /// many flows they moved and notified.
    pub handoffs: Table,
    /// The cross-layer notifications delivered to senders, with what they
    /// said.
    pub notifications: Table,
    /// The subflows of Multipath TCP connections, one row each: its row in
    /// the flows table, its connection, access link and backup flag, the
    /// data mapped to it and reinjected on it, its failures, and its
    /// connection's data-level figures ([`subflow_table`]).
    pub subflows: Table,
    /// Every RTT sample of each flow's sender as a distribution: one row per
    /// non-empty bucket of its histogram (`flow`, `rtt_low`, `rtt_high` in
    /// seconds, `count`; [`crate::histogram`]), from which a CDF is exact at
    /// every `rtt_high`. The same samples as the flows table's `rtt_*`
    /// figures, which the digest already pins; not in the digest itself.
    pub rtt_distribution: Table,
    /// Figures about the run.
    pub run: RunStats,
}

impl Results {
    /// A fingerprint of every table (series, queues, flows, links, packet log,
    /// handovers, handoffs; not the run's own figures, which count events and
    /// may change with the engine's internals). Equal digests mean the same
    /// simulated behaviour, bit for bit. Tables added after the first pins
    /// (handoffs, notifications) count only when they have rows, so that a
    /// run without them keeps its digest; so do the links' columns added
    /// with the queue disciplines (`dropped_aqm`, `marked`), counted only
    /// when one is not zero, so that a drop-tail run keeps its digest, and
    /// the flows' ECN counters (`ecn_echoes`, `ecn_reductions`,
    /// `ce_received`) likewise, so that a run without ECN keeps it, and the
    /// queue table's discipline columns
    /// ([`super::series::QDISC_COLUMNS`]), counted only when one holds a
    /// value other than 0 or NaN, so that a drop-tail run keeps its digest.
    /// The flows' network statistics ([`FLOW_STATS_COLUMNS`]) are left out
    /// always: they are measured from the same packets the other tables
    /// count, so a run that keeps its other tables keeps its behaviour, and
    /// a run from before them keeps its digest.
    pub fn digest(&self) -> u64 {
        let mut h = Fnv::default();
        let links = without_zero_columns(&self.links, &["dropped_aqm", "marked"]);
        let mut flows = without_zero_columns(&self.flows, &ECN_COUNTERS);
        flows
            .columns
            .retain(|c| !FLOW_STATS_COLUMNS.contains(&c.name.as_str()));
        let queues = without_zero_columns(&self.queues, &super::series::QDISC_COLUMNS);
        for t in [
            &self.series,
            &queues,
            &flows,
            &links,
            &self.packets,
            &self.handovers,
        ] {
            h.mix(t.digest());
        }
        for t in [&self.handoffs, &self.notifications, &self.subflows] {
            if t.rows() > 0 {
                h.mix(t.digest());
            }
        }
        h.0
    }
}

/// One Multipath TCP subflow as the subflows table shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct SubflowRecord {
    /// Its row in the flows table.
    pub flow: u32,
    /// Its connection's name (the scenario flow's).
    pub connection: String,
    /// Its number in the connection (0: the first, on the primary link).
    pub subflow: u32,
    /// Its access link's name.
    pub link: String,
    /// Flagged backup (RFC 8684 section 3.3.8).
    pub backup: bool,
    /// Data bytes mapped to it, reinjections included.
    pub mapped: u64,
    /// Data bytes reinjected on it from a failed subflow.
    pub reinjected: u64,
    /// Times it went stale or was removed.
    pub failures: u64,
    /// Its connection's data bytes delivered in order.
    pub conn_delivered: u64,
    /// Its connection's data bytes that arrived more than once.
    pub conn_duplicate: u64,
    /// Its connection's time from start to the DATA_FIN's acknowledgement.
    pub conn_completion_time: Option<Duration>,
    /// Its connection's in-order data rate over its active time (bit/s).
    pub conn_goodput: Option<f64>,
}

/// The subflows table, one row per subflow, connection by connection.
pub fn subflow_table(rows: &[SubflowRecord]) -> Table {
    let mut t = Table::default();
    let u64s = |f: &dyn Fn(&SubflowRecord) -> u64| ColumnData::U64(rows.iter().map(f).collect());
    t.push(
        "flow",
        ColumnData::U32(rows.iter().map(|r| r.flow).collect()),
    );
    t.push(
        "connection",
        ColumnData::Str(rows.iter().map(|r| r.connection.clone()).collect()),
    );
    t.push(
        "subflow",
        ColumnData::U32(rows.iter().map(|r| r.subflow).collect()),
    );
    t.push(
        "link",
        ColumnData::Str(rows.iter().map(|r| r.link.clone()).collect()),
    );
    t.push(
        "backup",
        ColumnData::Bool(rows.iter().map(|r| r.backup).collect()),
    );
    t.push("mapped", u64s(&|r| r.mapped));
    t.push("reinjected", u64s(&|r| r.reinjected));
    t.push("failures", u64s(&|r| r.failures));
    t.push("conn_delivered", u64s(&|r| r.conn_delivered));
    t.push("conn_duplicate", u64s(&|r| r.conn_duplicate));
    t.push_nullable(
        "conn_completion_time",
        rows.iter()
            .map(|r| r.conn_completion_time.map(|d| d.as_secs_f64())),
    );
    t.push_nullable("conn_goodput", rows.iter().map(|r| r.conn_goodput));
    t
}

/// The flows table's ECN counters, added after the first pins.
/// The flows table's network statistics ([`FlowStats`]), in table order.
/// `packets_late` is a UDP flow's packets received past its playout
/// deadline (null for a flow without one).
pub const FLOW_STATS_COLUMNS: [&str; 12] = [
    "packets_sent",
    "packets_received",
    "packets_lost",
    "wire_bytes_sent",
    "wire_bytes_received",
    "wire_bytes_lost",
    "owd_mean",
    "owd_p50",
    "owd_p95",
    "owd_p99",
    "jitter",
    "packets_late",
];

const ECN_COUNTERS: [&str; 3] = ["ecn_echoes", "ecn_reductions", "ce_received"];

/// `table` without those of the columns `names` that hold only zeros (or
/// nothing: a counter the driver cannot know), or only NaN (floats).
fn without_zero_columns(table: &Table, names: &[&str]) -> Table {
    let mut t = table.clone();
    t.columns.retain(|c| {
        !names.contains(&c.name.as_str())
            || !match &c.data {
                ColumnData::U64(v) => v.iter().all(|&x| x == 0),
                ColumnData::F64(v) => v.iter().all(|x| x.is_nan()),
                _ => false,
            }
    });
    t
}

/// The table of [`Results::rtt_distribution`] from each flow's histogram,
/// in flow order.
pub fn rtt_distribution<'a>(flows: impl Iterator<Item = &'a Histogram>) -> Table {
    let (mut flow, mut low, mut high, mut count) = (vec![], vec![], vec![], vec![]);
    for (f, h) in flows.enumerate() {
        for (lo, hi, n) in h.buckets() {
            flow.push(f as u32);
            low.push(lo);
            high.push(hi);
            count.push(n);
        }
    }
    let mut t = Table::default();
    t.push("flow", ColumnData::U32(flow));
    t.push("rtt_low", ColumnData::F64(low));
    t.push("rtt_high", ColumnData::F64(high));
    t.push("count", ColumnData::U64(count));
    t
}

/// The counters of one flow, from its sender and its receiver. Every one
/// is `None` where the driver cannot know it: the emulator reads the
/// kernel's `TCP_INFO`, which keeps no count of fast retransmits, loss
/// probes, spurious retransmissions, duplicate ACKs or duplicate segments,
/// and sees none of a flow that runs a command.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowCounters {
    /// New data bytes sent.
    pub bytes_sent: Option<u64>,
    /// Bytes retransmitted.
    pub bytes_retransmitted: Option<u64>,
    /// Bytes cumulatively acknowledged.
    pub bytes_acked: Option<u64>,
    /// Bytes the receiver delivered in order.
    pub bytes_delivered: Option<u64>,
    /// Data segments sent (retransmissions included).
    pub segments_sent: Option<u64>,
    /// Segments retransmitted.
    pub retransmissions: Option<u64>,
    /// Fast retransmits.
    pub fast_retransmits: Option<u64>,
    /// Retransmission timeouts.
    pub rto_expiries: Option<u64>,
    /// Tail loss probes sent.
    pub loss_probes: Option<u64>,
    /// Losses a tail loss probe recovered.
    pub tlp_recoveries: Option<u64>,
    /// Retransmissions found spurious.
    pub spurious_retransmissions: Option<u64>,
    /// DSACKs received.
    pub dsacks_received: Option<u64>,
    /// Duplicate ACKs received.
    pub dupacks_received: Option<u64>,
    /// ACKs received by the sender.
    pub acks_received: Option<u64>,
    /// ACKs the receiver sent.
    pub acks_sent: Option<u64>,
    /// Duplicate segments the receiver got.
    pub duplicate_segments: Option<u64>,
    /// Segments the receiver got out of order.
    pub out_of_order_segments: Option<u64>,
    /// ACKs with ECN-Echo the sender received (RFC 3168).
    pub ecn_echoes: Option<u64>,
    /// Window reductions the sender made for ECN-Echo.
    pub ecn_reductions: Option<u64>,
    /// Data segments the receiver got marked CE.
    pub ce_received: Option<u64>,
}

impl FlowCounters {
    /// The counters in the flows table's order, with their column names.
    fn columns(&self) -> [(&'static str, Option<u64>); 20] {
        [
            ("bytes_sent", self.bytes_sent),
            ("bytes_retransmitted", self.bytes_retransmitted),
            ("bytes_acked", self.bytes_acked),
            ("bytes_delivered", self.bytes_delivered),
            ("segments_sent", self.segments_sent),
            ("retransmissions", self.retransmissions),
            ("fast_retransmits", self.fast_retransmits),
            ("rto_expiries", self.rto_expiries),
            ("loss_probes", self.loss_probes),
            ("tlp_recoveries", self.tlp_recoveries),
            ("spurious_retransmissions", self.spurious_retransmissions),
            ("dsacks_received", self.dsacks_received),
            ("dupacks_received", self.dupacks_received),
            ("acks_received", self.acks_received),
            ("acks_sent", self.acks_sent),
            ("duplicate_segments", self.duplicate_segments),
            ("out_of_order_segments", self.out_of_order_segments),
            ("ecn_echoes", self.ecn_echoes),
            ("ecn_reductions", self.ecn_reductions),
            ("ce_received", self.ce_received),
        ]
    }
}

/// One flow as the flows table shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowRecord {
    /// Its name (replicas expanded).
    pub name: String,
    /// Its congestion control (`cmd` for a flow that runs a command).
    pub algorithm: String,
    /// The sender's node.
    pub from: String,
    /// The receiver's node.
    pub to: String,
    /// When it started.
    pub start: Duration,
    /// When its application stops writing (None: never).
    pub stop: Option<Duration>,
    /// Bytes to transfer (None: unlimited).
    pub size: Option<u64>,
    /// From its start to the acknowledgement of its last byte (None: not
    /// completed).
    pub completion_time: Option<Duration>,
    /// Its counters.
    pub counters: FlowCounters,
    /// Bytes delivered over its active time, in bit/s (None: it never ran).
    pub goodput: Option<f64>,
    /// The smallest RTT its sender measured (None: none).
    pub min_rtt: Option<Duration>,
    /// Mean, median, 95th and 99th percentile of every RTT sample of its
    /// sender, in seconds (None: no sample seen, or the samples are not
    /// seen one by one, as the kernel's).
    pub rtt: [Option<f64>; 4],
    /// RTT samples behind `rtt`.
    pub rtt_samples: u64,
    /// Its data packets at the network: sent, received, dropped, one-way
    /// delay and jitter (None: the driver does not see its packets).
    pub network: Option<FlowStats>,
}

/// The per-flow table, one row per flow in flow order.
pub fn flow_table(fl: &[FlowRecord]) -> Table {
    let secs = |d: Option<Duration>| d.map(|d| d.as_secs_f64());
    let text = |f: &dyn Fn(&FlowRecord) -> String| ColumnData::Str(fl.iter().map(f).collect());
    let mut t = Table::default();
    t.push("flow", ColumnData::U32((0..fl.len() as u32).collect()));
    t.push("name", text(&|f| f.name.clone()));
    t.push("algorithm", text(&|f| f.algorithm.clone()));
    t.push("from", text(&|f| f.from.clone()));
    t.push("to", text(&|f| f.to.clone()));
    t.push(
        "start",
        ColumnData::F64(fl.iter().map(|f| f.start.as_secs_f64()).collect()),
    );
    t.push_nullable("stop", fl.iter().map(|f| secs(f.stop)));
    t.push_nullable("size", fl.iter().map(|f| f.size.map(|s| s as f64)));
    t.push_nullable(
        "completion_time",
        fl.iter().map(|f| secs(f.completion_time)),
    );
    for (k, (name, _)) in FlowCounters::default().columns().into_iter().enumerate() {
        t.push_nullable(name, fl.iter().map(|f| f.counters.columns()[k].1));
    }
    t.push_nullable("goodput", fl.iter().map(|f| f.goodput));
    t.push_nullable("min_rtt", fl.iter().map(|f| secs(f.min_rtt)));
    for (k, name) in ["rtt_mean", "rtt_p50", "rtt_p95", "rtt_p99"]
        .into_iter()
        .enumerate()
    {
        t.push_nullable(name, fl.iter().map(|f| f.rtt[k]));
    }
    t.push(
        "rtt_samples",
        ColumnData::U64(fl.iter().map(|f| f.rtt_samples).collect()),
    );
    let net = |f: &dyn Fn(&FlowStats) -> Option<f64>| {
        fl.iter()
            .map(|r| r.network.as_ref().and_then(f))
            .collect::<Vec<_>>()
    };
    let counts = |side: usize, k: usize| {
        fl.iter()
            .map(move |r| (r.network.as_ref()).map(|s| [s.sent, s.received, s.lost][side][k]))
    };
    let [counted @ .., _, _, _, _, _, _] = FLOW_STATS_COLUMNS;
    for (i, name) in counted.into_iter().enumerate() {
        // packets, then wire bytes; each sent, received, lost
        t.push_nullable(name, counts(i % 3, i / 3));
    }
    for (k, name) in FLOW_STATS_COLUMNS[6..10].iter().enumerate() {
        t.push_nullable(*name, net(&|s| s.delay_secs()[k]));
    }
    t.push_nullable(FLOW_STATS_COLUMNS[10], net(&|s| s.jitter_secs()));
    t.push_nullable(
        FLOW_STATS_COLUMNS[11],
        fl.iter()
            .map(|r| r.network.as_ref().and_then(FlowStats::late_packets)),
    );
    t
}

/// One link handover as the handovers table shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkHandoverRecord {
    /// The link's name.
    pub link: String,
    /// Its time as written (`"30s"` or `"steady"`).
    pub planned: String,
    /// When it happened (None: not yet).
    pub time: Option<Instant>,
    /// Its outage.
    pub outage: Duration,
}

impl LinkHandoverRecord {
    /// The row of handover `spec` of link `link` of `sc`, which happened at
    /// `time` (None: not yet).
    pub fn new(sc: &Scenario, link: usize, spec: &LinkHandoverSpec, time: Option<Instant>) -> Self {
        LinkHandoverRecord {
            link: link_name(&sc.links[link], link),
            planned: match spec.at {
                LinkHandoverTime::At(d) => d.to_string(),
                LinkHandoverTime::Steady => "steady".to_string(),
            },
            time,
            outage: spec.outage,
        }
    }
}

/// The per-handover table: each handover's link name, its planned time as
/// written, when it happened (null: not yet) and its outage.
pub fn handover_table(rows: &[LinkHandoverRecord]) -> Table {
    let mut t = Table::default();
    t.push(
        "link",
        ColumnData::Str(rows.iter().map(|r| r.link.clone()).collect()),
    );
    t.push(
        "planned",
        ColumnData::Str(rows.iter().map(|r| r.planned.clone()).collect()),
    );
    t.push_nullable("time", rows.iter().map(|r| r.time.map(|t| t.as_secs_f64())));
    t.push(
        "outage",
        ColumnData::F64(rows.iter().map(|r| r.outage.as_secs_f64()).collect()),
    );
    t
}

/// One link direction as the links table shows it: its ends, its settings
/// at the end of the run, its counters and the queueing delays of the
/// packets it sent.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkDirectionRecord {
    /// The link's name.
    pub link: String,
    /// True for the forward direction (`between[0]` to `between[1]`).
    pub forward: bool,
    /// The node it leaves.
    pub from: String,
    /// The node it reaches.
    pub to: String,
    /// Its rate at the end of the run.
    pub rate: Rate,
    /// Its delay at the end of the run.
    pub delay: Duration,
    /// Its counters.
    pub counters: LinkCounters,
    /// Mean, 95th and 99th percentile of the time each packet that started
    /// serialisation waited in the queue, in seconds (None: not measured,
    /// as on a real link).
    pub queue_delay: [Option<f64>; 3],
}

impl LinkDirectionRecord {
    /// The row of direction `dir` of `sc` (`2 i` forward and `2 i + 1`
    /// reverse of link `i`), with its counters and settings, and the
    /// queueing delays of the packets it sent if they were measured.
    pub fn new(
        sc: &Scenario,
        topo: &Topology,
        dir: usize,
        counters: &LinkCounters,
        settings: Settings,
        waits: Option<&Histogram>,
    ) -> Self {
        let (a, b) = topo.ends(dir as DirId);
        let known = |x: f64| (!x.is_nan()).then_some(x);
        LinkDirectionRecord {
            link: link_name(&sc.links[dir / 2], dir / 2),
            forward: dir % 2 == 0,
            from: topo.nodes()[a].clone(),
            to: topo.nodes()[b].clone(),
            rate: settings.rate,
            delay: settings.delay,
            counters: counters.clone(),
            queue_delay: match waits {
                Some(h) => [
                    known(h.mean_secs()),
                    known(h.quantile_secs(0.95)),
                    known(h.quantile_secs(0.99)),
                ],
                None => [None; 3],
            },
        }
    }
}

/// The per-link-direction table, one row per direction in direction order.
pub fn link_table(dirs: &[LinkDirectionRecord]) -> Table {
    let n = dirs.len();
    let text =
        |f: &dyn Fn(&LinkDirectionRecord) -> String| ColumnData::Str(dirs.iter().map(f).collect());
    let mut t = Table::default();
    t.push("dir", ColumnData::U32((0..n as u32).collect()));
    t.push("link", text(&|d| d.link.clone()));
    t.push(
        "direction",
        text(&|d| if d.forward { "forward" } else { "reverse" }.to_string()),
    );
    t.push("from", text(&|d| d.from.clone()));
    t.push("to", text(&|d| d.to.clone()));
    t.push(
        "rate",
        ColumnData::U64(dirs.iter().map(|d| d.rate.as_bps()).collect()),
    );
    t.push(
        "delay",
        ColumnData::F64(dirs.iter().map(|d| d.delay.as_secs_f64()).collect()),
    );
    let c = |g: fn(&LinkCounters) -> u64| {
        ColumnData::U64(dirs.iter().map(|d| g(&d.counters)).collect())
    };
    t.push("arrived", c(|c| c.arrived));
    t.push("sent_packets", c(|c| c.sent_packets));
    t.push("sent_bytes", c(|c| c.sent_bytes));
    t.push("delivered_packets", c(|c| c.delivered_packets));
    t.push("delivered_bytes", c(|c| c.delivered_bytes));
    t.push("dropped_queue", c(|c| c.dropped[DropCause::Queue as usize]));
    t.push(
        "dropped_random",
        c(|c| c.dropped[DropCause::Random as usize]),
    );
    t.push(
        "dropped_outage",
        c(|c| c.dropped[DropCause::Outage as usize]),
    );
    t.push("dropped_aqm", c(|c| c.dropped[DropCause::Aqm as usize]));
    t.push("marked", c(|c| c.marked));
    t.push("max_queue_packets", c(|c| c.max_queue_packets));
    t.push("max_queue_bytes", c(|c| c.max_queue_bytes));
    t.push("arq_attempts", c(|c| c.arq_attempts));
    t.push("arq_retries", c(|c| c.arq_retries));
    t.push("arq_residual", c(|c| c.arq_residual));
    for (k, name) in ["queue_delay_mean", "queue_delay_p95", "queue_delay_p99"]
        .into_iter()
        .enumerate()
    {
        t.push_nullable(name, dirs.iter().map(|d| d.queue_delay[k]));
    }
    t
}

/// One node handoff as the handoffs table shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeHandoffRecord {
    /// The multi-homed node.
    pub node: String,
    /// The old access link's name.
    pub from: String,
    /// The new access link's name.
    pub to: String,
    /// `make-before-break` or `break-before-make`.
    pub kind: &'static str,
    /// When it happened (None: not yet).
    pub time: Option<Instant>,
    /// The disconnection of a break-before-make handoff (zero otherwise).
    pub disconnection: Duration,
    /// What became of what the old link held (`lost` or `delivered`).
    pub held: &'static str,
    /// Flows it moved.
    pub flows_moved: u32,
    /// The delay of its notification to the senders (None: it notifies none).
    pub notify_delay: Option<Duration>,
    /// Senders it notified.
    pub notified: u32,
    /// Packets of its transfer measurement (0: none).
    pub transfer_packets: u32,
    /// Measured flows that had their packets acknowledged.
    pub transfers_done: u32,
    /// The slowest measured flow's transfer time (None: it measures
    /// nothing, or a flow is not done yet).
    pub transfer_time: Option<Duration>,
}

impl NodeHandoffRecord {
    /// The row of handoff `plan` of `sc`, which happened at `time` (None:
    /// not yet), notified `notified` senders and measured each flow of
    /// `transfers` (flow, how long after the switch it had its packets
    /// acknowledged; None: not yet).
    pub fn new(
        sc: &Scenario,
        plan: &NodeHandoffPlan,
        time: Option<Instant>,
        notified: u32,
        transfers: &[(usize, Option<Duration>)],
    ) -> Self {
        let slowest = if transfers.is_empty() {
            None
        } else {
            transfers
                .iter()
                .try_fold(Duration::ZERO, |m, &(_, t)| t.map(|t| m.max(t)))
        };
        let spec = &plan.spec;
        NodeHandoffRecord {
            node: spec.node.clone(),
            from: link_name(&sc.links[plan.from], plan.from),
            to: link_name(&sc.links[plan.to], plan.to),
            kind: spec.kind.name(),
            time,
            disconnection: spec.disconnection(),
            held: spec.held().name(),
            flows_moved: plan.moved().len() as u32,
            notify_delay: spec.notify.as_ref().map(|n| n.delay),
            notified,
            transfer_packets: spec.transfer.as_ref().map_or(0, |t| t.packets),
            transfers_done: transfers.iter().filter(|t| t.1.is_some()).count() as u32,
            transfer_time: slowest,
        }
    }
}

/// The per-handoff table: node, access links, kind, when it happened (null:
/// not yet), disconnection, what the old link held, flows moved, notice
/// delay (null: no notice) and senders notified, and the transfer
/// measurement (packets, flows done, the slowest flow's time; null: none
/// measured, or not all done).
pub fn handoff_table(h: &[NodeHandoffRecord]) -> Table {
    let text =
        |f: &dyn Fn(&NodeHandoffRecord) -> String| ColumnData::Str(h.iter().map(f).collect());
    let secs = |d: Option<Duration>| d.map(|d| d.as_secs_f64());
    let mut t = Table::default();
    t.push("node", text(&|x| x.node.clone()));
    t.push("from", text(&|x| x.from.clone()));
    t.push("to", text(&|x| x.to.clone()));
    t.push("kind", text(&|x| x.kind.to_string()));
    t.push_nullable("time", h.iter().map(|x| x.time.map(|t| t.as_secs_f64())));
    t.push(
        "disconnection",
        ColumnData::F64(h.iter().map(|x| x.disconnection.as_secs_f64()).collect()),
    );
    t.push("held", text(&|x| x.held.to_string()));
    t.push(
        "flows_moved",
        ColumnData::U32(h.iter().map(|x| x.flows_moved).collect()),
    );
    t.push_nullable("notify_delay", h.iter().map(|x| secs(x.notify_delay)));
    t.push(
        "notified",
        ColumnData::U32(h.iter().map(|x| x.notified).collect()),
    );
    t.push(
        "transfer_packets",
        ColumnData::U32(h.iter().map(|x| x.transfer_packets).collect()),
    );
    t.push(
        "transfers_done",
        ColumnData::U32(h.iter().map(|x| x.transfers_done).collect()),
    );
    t.push_nullable("transfer_time", h.iter().map(|x| secs(x.transfer_time)));
    t
}
