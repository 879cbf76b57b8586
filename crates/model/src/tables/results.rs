//! Everything a run produced, as tables: the time series, the per-flow,
//! per-link and per-handover tables, the packet log.

use super::{ColumnData, Fnv, Table};
use crate::compile::NodeHandoffPlan;
use crate::histogram::Histogram;
use crate::link::{DropCause, LinkCounters, Settings};
use crate::scenario::{link_name, LinkHandoverSpec, LinkHandoverTime, Scenario};
use crate::topology::{DirId, Topology};
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
    /// run without them keeps its digest.
    pub fn digest(&self) -> u64 {
        let mut h = Fnv::default();
        for t in [
            &self.series,
            &self.queues,
            &self.flows,
            &self.links,
            &self.packets,
            &self.handovers,
        ] {
            h.mix(t.digest());
        }
        for t in [&self.handoffs, &self.notifications] {
            if t.rows() > 0 {
                h.mix(t.digest());
            }
        }
        h.0
    }
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

/// The per-handover table: each handover's link name, its planned time as
/// written (`"30s"` or `"steady"`), when it happened (NaN: not yet) and its
/// outage.
pub fn handover_table<'a>(
    rows: impl Iterator<Item = (String, &'a LinkHandoverSpec, Option<Instant>)>,
) -> Table {
    let rows: Vec<_> = rows.collect();
    let mut t = Table::default();
    t.push(
        "link",
        ColumnData::Str(rows.iter().map(|r| r.0.clone()).collect()),
    );
    t.push(
        "planned",
        ColumnData::Str(
            rows.iter()
                .map(|r| match r.1.at {
                    LinkHandoverTime::At(d) => d.to_string(),
                    LinkHandoverTime::Steady => "steady".to_string(),
                })
                .collect(),
        ),
    );
    t.push(
        "time",
        ColumnData::F64(
            rows.iter()
                .map(|r| r.2.map_or(f64::NAN, |t| t.as_secs_f64()))
                .collect(),
        ),
    );
    t.push(
        "outage",
        ColumnData::F64(rows.iter().map(|r| r.1.outage.as_secs_f64()).collect()),
    );
    t
}

/// The per-link-direction table of a scenario: each direction's ends, its
/// settings at the end of the run and its counters (`dirs` indexed like the
/// directions, `2 i` forward and `2 i + 1` reverse of link `i`), and the
/// queueing delays of the packets each sent (`waits`, alike; NaN without).
pub fn link_table(
    sc: &Scenario,
    topo: &Topology,
    dirs: &[(&LinkCounters, Settings)],
    waits: Option<&[&Histogram]>,
) -> Table {
    let n = dirs.len();
    let names: Vec<String> = (0..n).map(|d| link_name(&sc.links[d / 2], d / 2)).collect();
    let node = |d: usize, end: usize| {
        let (a, b) = topo.ends(d as DirId);
        topo.nodes()[if end == 0 { a } else { b }].clone()
    };
    let mut t = Table::default();
    t.push("dir", ColumnData::U32((0..n as u32).collect()));
    t.push("link", ColumnData::Str(names));
    t.push(
        "direction",
        ColumnData::Str(
            (0..n)
                .map(|d| if d % 2 == 0 { "forward" } else { "reverse" }.to_string())
                .collect(),
        ),
    );
    t.push(
        "from",
        ColumnData::Str((0..n).map(|d| node(d, 0)).collect()),
    );
    t.push("to", ColumnData::Str((0..n).map(|d| node(d, 1)).collect()));
    t.push(
        "rate",
        ColumnData::U64(dirs.iter().map(|d| d.1.rate.as_bps()).collect()),
    );
    t.push(
        "delay",
        ColumnData::F64(dirs.iter().map(|d| d.1.delay.as_secs_f64()).collect()),
    );
    let c = |g: fn(&LinkCounters) -> u64| ColumnData::U64(dirs.iter().map(|d| g(d.0)).collect());
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
    t.push("max_queue_packets", c(|c| c.max_queue_packets));
    t.push("max_queue_bytes", c(|c| c.max_queue_bytes));
    t.push("arq_attempts", c(|c| c.arq_attempts));
    t.push("arq_retries", c(|c| c.arq_retries));
    t.push("arq_residual", c(|c| c.arq_residual));
    // how long every packet that started serialisation waited in the queue,
    // through a histogram (0.8 %)
    let delay = |f: &dyn Fn(&Histogram) -> f64| {
        ColumnData::F64(match waits {
            Some(w) => w.iter().map(|h| f(h)).collect(),
            None => vec![f64::NAN; n],
        })
    };
    t.push("queue_delay_mean", delay(&|h| h.mean_secs()));
    t.push("queue_delay_p95", delay(&|h| h.quantile_secs(0.95)));
    t.push("queue_delay_p99", delay(&|h| h.quantile_secs(0.99)));
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

/// The per-handoff table: node, access links, kind, when it happened (NaN:
/// not yet), disconnection, what the old link held, flows moved, notice
/// delay and senders notified, and the transfer measurement (packets, flows
/// done, the slowest flow's time).
pub fn handoff_table(h: &[NodeHandoffRecord]) -> Table {
    let text =
        |f: &dyn Fn(&NodeHandoffRecord) -> String| ColumnData::Str(h.iter().map(f).collect());
    let secs = |d: Option<Duration>| d.map_or(f64::NAN, |d| d.as_secs_f64());
    let mut t = Table::default();
    t.push("node", text(&|x| x.node.clone()));
    t.push("from", text(&|x| x.from.clone()));
    t.push("to", text(&|x| x.to.clone()));
    t.push("kind", text(&|x| x.kind.to_string()));
    t.push(
        "time",
        ColumnData::F64(
            h.iter()
                .map(|x| x.time.map_or(f64::NAN, |t| t.as_secs_f64()))
                .collect(),
        ),
    );
    t.push(
        "disconnection",
        ColumnData::F64(h.iter().map(|x| x.disconnection.as_secs_f64()).collect()),
    );
    t.push("held", text(&|x| x.held.to_string()));
    t.push(
        "flows_moved",
        ColumnData::U32(h.iter().map(|x| x.flows_moved).collect()),
    );
    t.push(
        "notify_delay",
        ColumnData::F64(h.iter().map(|x| secs(x.notify_delay)).collect()),
    );
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
    t.push(
        "transfer_time",
        ColumnData::F64(h.iter().map(|x| secs(x.transfer_time)).collect()),
    );
    t
}
