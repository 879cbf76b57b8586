//! Everything a run produced, as tables: the time series, the per-flow,
//! per-link and per-handover tables, the packet log.

use super::{ColumnData, Fnv, Table};
use crate::endpoints::Flow;
use crate::engine::{key, Event};
use crate::handover::Handoff;
use crate::histogram::Histogram;
use crate::link::{DropCause, LinkCounters, Settings};
use crate::notices::{Delivered, Source};
use crate::scenario::{link_name, HandoverSpec, HandoverTime, Scenario};
use crate::sim::Simulation;
use crate::topology::{DirId, Topology};
use wavelab_tcp::cc::{HandoffStyle, Notification, PathInfo};
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

impl Simulation {
    /// The results so far (callable at any time; a partial run gives partial results).
    pub fn results(&self) -> Results {
        Results {
            series: self.series.to_table(),
            queues: self.queues.to_table(),
            flows: self.flow_table(),
            links: self.link_table(),
            packets: self
                .rec
                .log
                .to_table(key(self.now, &Event::Sample(u64::MAX >> 27))),
            handovers: self.handover_table(),
            handoffs: self.handoff_table(),
            notifications: self.notification_table(),
            rtt_distribution: rtt_distribution(self.flows.iter().map(|f| &f.rtts)),
            run: RunStats {
                simulated: self.now - Instant::ZERO,
                events: self.q.processed(),
                packet_hops: self.net.hops(),
                peak_packets: self.net.peak,
                rtts: self.flows.iter().fold(Histogram::default(), |mut h, f| {
                    h.merge(&f.rtts);
                    h
                }),
            },
        }
    }

    fn flow_table(&self) -> Table {
        let nan = f64::NAN;
        let fl = &self.flows;
        let secs = |i: Instant| i.as_secs_f64();
        let mut t = Table::default();
        t.push("flow", ColumnData::U32((0..fl.len() as u32).collect()));
        t.push(
            "name",
            ColumnData::Str(fl.iter().map(|f| f.name.clone()).collect()),
        );
        t.push(
            "algorithm",
            ColumnData::Str(fl.iter().map(|f| f.algorithm.to_string()).collect()),
        );
        t.push(
            "from",
            ColumnData::Str(fl.iter().map(|f| f.from.clone()).collect()),
        );
        t.push(
            "to",
            ColumnData::Str(fl.iter().map(|f| f.to.clone()).collect()),
        );
        t.push(
            "start",
            ColumnData::F64(fl.iter().map(|f| secs(f.start)).collect()),
        );
        t.push(
            "stop",
            ColumnData::F64(fl.iter().map(|f| f.stop.map_or(nan, secs)).collect()),
        );
        t.push(
            "size",
            ColumnData::F64(
                fl.iter()
                    .map(|f| f.size.map_or(nan, |s| s as f64))
                    .collect(),
            ),
        );
        t.push(
            "completion_time",
            ColumnData::F64(
                fl.iter()
                    .map(|f| {
                        f.sender
                            .stats()
                            .completed_at
                            .map_or(nan, |c| (c - f.start).as_secs_f64())
                    })
                    .collect(),
            ),
        );
        let s = |g: fn(&Flow) -> u64| ColumnData::U64(fl.iter().map(g).collect());
        t.push("bytes_sent", s(|f| f.sender.stats().bytes_sent));
        t.push(
            "bytes_retransmitted",
            s(|f| f.sender.stats().bytes_retransmitted),
        );
        t.push("bytes_acked", s(|f| f.sender.bytes_acked()));
        t.push("bytes_delivered", s(|f| f.receiver.delivered()));
        t.push("segments_sent", s(|f| f.sender.stats().segments_sent));
        t.push("retransmissions", s(|f| f.sender.stats().retransmissions));
        t.push("fast_retransmits", s(|f| f.sender.stats().fast_retransmits));
        t.push("rto_expiries", s(|f| f.sender.stats().rto_expiries));
        t.push("loss_probes", s(|f| f.sender.stats().loss_probes));
        t.push("tlp_recoveries", s(|f| f.sender.stats().tlp_recoveries));
        t.push(
            "spurious_retransmissions",
            s(|f| f.sender.stats().spurious_retransmissions),
        );
        t.push("dsacks_received", s(|f| f.sender.stats().dsacks_received));
        t.push("dupacks_received", s(|f| f.sender.stats().dupacks_received));
        t.push("acks_received", s(|f| f.sender.stats().acks_received));
        t.push("acks_sent", s(|f| f.receiver.stats().acks_sent));
        t.push(
            "duplicate_segments",
            s(|f| f.receiver.stats().duplicate_segments),
        );
        t.push(
            "out_of_order_segments",
            s(|f| f.receiver.stats().out_of_order_segments),
        );
        let now = self.now;
        t.push(
            "goodput",
            ColumnData::F64(
                fl.iter()
                    .map(|f| {
                        let end = f.sender.stats().completed_at.unwrap_or(now);
                        let active = (end - f.start).as_secs_f64();
                        if f.started && active > 0.0 {
                            f.receiver.delivered() as f64 * 8.0 / active
                        } else {
                            nan
                        }
                    })
                    .collect(),
            ),
        );
        t.push(
            "min_rtt",
            ColumnData::F64(
                fl.iter()
                    .map(|f| f.sender.rtt().min_rtt().map_or(nan, |d| d.as_secs_f64()))
                    .collect(),
            ),
        );
        // every RTT sample of the sender, through a histogram (0.8 %)
        t.push(
            "rtt_mean",
            ColumnData::F64(fl.iter().map(|f| f.rtts.mean_secs()).collect()),
        );
        for (name, q) in [("rtt_p50", 0.5), ("rtt_p95", 0.95), ("rtt_p99", 0.99)] {
            t.push(
                name,
                ColumnData::F64(fl.iter().map(|f| f.rtts.quantile_secs(q)).collect()),
            );
        }
        t.push("rtt_samples", s(|f| f.rtts.count()));
        t
    }

    fn handoff_table(&self) -> Table {
        handoff_table(&self.sc, &self.handoffs)
    }

    fn notification_table(&self) -> Table {
        let d = &self.notices.delivered;
        let nan = f64::NAN;
        let secs = |x: Duration| x.as_secs_f64();
        let f64s = |f: &dyn Fn(&Delivered) -> f64| ColumnData::F64(d.iter().map(f).collect());
        let handoff = |x: &Delivered| match x.notice.msg {
            Notification::Handoff(h) => Some(h),
            Notification::LinkReport(_) | Notification::LinkDrop(_) => None,
        };
        let report = |x: &Delivered| x.notice.msg.link_report().copied();
        let rate = |p: PathInfo| p.rate.map_or(nan, |r| r.as_bps() as f64);
        let delay = |p: PathInfo| p.delay.map_or(nan, secs);
        let mut t = Table::default();
        t.push("time", f64s(&|x| x.time.as_secs_f64()));
        t.push("flow", ColumnData::U32(d.iter().map(|x| x.flow).collect()));
        t.push(
            "kind",
            ColumnData::Str(
                d.iter()
                    .map(|x| x.notice.msg.kind_name().to_string())
                    .collect(),
            ),
        );
        t.push("sent", f64s(&|x| x.notice.sent.as_secs_f64()));
        t.push(
            "link",
            ColumnData::I64(d.iter().map(|x| x.notice.source.link() as i64).collect()),
        );
        t.push(
            "handoff",
            ColumnData::I64(
                d.iter()
                    .map(|x| match x.notice.source {
                        Source::Handoff { index, .. } => index as i64,
                        Source::Link(_) => -1,
                    })
                    .collect(),
            ),
        );
        t.push(
            "style",
            ColumnData::Str(
                d.iter()
                    .map(|x| match handoff(x).map(|h| h.style) {
                        Some(HandoffStyle::MakeBeforeBreak) => "make-before-break".to_string(),
                        Some(HandoffStyle::BreakBeforeMake { .. }) => {
                            "break-before-make".to_string()
                        }
                        None => String::new(),
                    })
                    .collect(),
            ),
        );
        t.push(
            "disconnection",
            f64s(&|x| match handoff(x).map(|h| h.style) {
                Some(HandoffStyle::BreakBeforeMake { disconnection }) => secs(disconnection),
                Some(HandoffStyle::MakeBeforeBreak) => 0.0,
                None => nan,
            }),
        );
        t.push(
            "old_rate",
            f64s(&|x| handoff(x).map_or(nan, |h| rate(h.old))),
        );
        t.push(
            "old_delay",
            f64s(&|x| handoff(x).map_or(nan, |h| delay(h.old))),
        );
        t.push(
            "new_rate",
            f64s(&|x| handoff(x).map_or(nan, |h| rate(h.new))),
        );
        t.push(
            "new_delay",
            f64s(&|x| handoff(x).map_or(nan, |h| delay(h.new))),
        );
        t.push(
            "flows",
            ColumnData::U32(
                d.iter()
                    .map(|x| handoff(x).map_or(0, |h| h.flows))
                    .collect(),
            ),
        );
        t.push(
            "seq",
            ColumnData::U64(
                d.iter()
                    .map(|x| report(x).map_or(0, |r| r.offset))
                    .collect(),
            ),
        );
        t.push(
            "retries",
            ColumnData::U32(
                d.iter()
                    .map(|x| report(x).map_or(0, |r| r.retries))
                    .collect(),
            ),
        );
        t.push(
            "link_rto",
            f64s(&|x| report(x).map_or(nan, |r| secs(r.link_rto))),
        );
        t
    }

    fn handover_table(&self) -> Table {
        handover_table(
            self.handovers
                .iter()
                .map(|h| (link_name(&self.sc.links[h.link], h.link), &h.spec, h.time)),
        )
    }

    fn link_table(&self) -> Table {
        let dirs: Vec<(&LinkCounters, Settings)> = self
            .net
            .dirs
            .iter()
            .map(|d| (d.counters(), d.settings_at(self.now)))
            .collect();
        let waits: Vec<&Histogram> = self.net.dirs.iter().map(|d| d.waits()).collect();
        link_table(&self.sc, &self.topo, &dirs, Some(&waits))
    }
}

/// The per-handover table: each handover's link name, its planned time as
/// written (`"30s"` or `"steady"`), when it happened (NaN: not yet) and its
/// outage.
pub fn handover_table<'a>(
    rows: impl Iterator<Item = (String, &'a HandoverSpec, Option<Instant>)>,
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
                    HandoverTime::At(d) => d.to_string(),
                    HandoverTime::Steady => "steady".to_string(),
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

/// The per-handoff table: node, access links, kind, when it happened (NaN:
/// not yet), disconnection, what the old link held, flows moved, notice
/// delay and senders notified, and the transfer measurement (packets, flows
/// done, the slowest flow's time).
pub(crate) fn handoff_table(sc: &Scenario, h: &[Handoff]) -> Table {
    let links = |k: usize| link_name(&sc.links[k], k);
    let text = |f: &dyn Fn(&Handoff) -> String| ColumnData::Str(h.iter().map(f).collect());
    let mut t = Table::default();
    t.push("node", text(&|x| x.spec.node.clone()));
    t.push("from", text(&|x| links(x.from)));
    t.push("to", text(&|x| links(x.to)));
    t.push("kind", text(&|x| x.spec.kind.name().to_string()));
    t.push(
        "time",
        ColumnData::F64(
            h.iter()
                .map(|x| if x.done { x.at.as_secs_f64() } else { f64::NAN })
                .collect(),
        ),
    );
    t.push(
        "disconnection",
        ColumnData::F64(
            h.iter()
                .map(|x| x.spec.disconnection().as_secs_f64())
                .collect(),
        ),
    );
    t.push("held", text(&|x| x.spec.held().name().to_string()));
    t.push(
        "flows_moved",
        ColumnData::U32(h.iter().map(|x| x.moved().len() as u32).collect()),
    );
    t.push(
        "notify_delay",
        ColumnData::F64(
            h.iter()
                .map(|x| {
                    x.spec
                        .notify
                        .as_ref()
                        .map_or(f64::NAN, |n| n.delay.as_secs_f64())
                })
                .collect(),
        ),
    );
    t.push(
        "notified",
        ColumnData::U32(h.iter().map(|x| x.notified).collect()),
    );
    t.push(
        "transfer_packets",
        ColumnData::U32(
            h.iter()
                .map(|x| x.spec.transfer.as_ref().map_or(0, |t| t.packets))
                .collect(),
        ),
    );
    t.push(
        "transfers_done",
        ColumnData::U32(h.iter().map(Handoff::transfers_done).collect()),
    );
    t.push(
        "transfer_time",
        ColumnData::F64(
            h.iter()
                .map(|x| x.slowest_transfer().map_or(f64::NAN, |d| d.as_secs_f64()))
                .collect(),
        ),
    );
    t
}
